/* test_docs.c - golden output of the lines and mem document writers
 * (formats/lines_doc.c, mem_doc.c), and their readers (the tables) reading
 * back what they wrote: one set of keys (formats/doc.h) on both sides. */
#include <string.h>

#include "formats/json_read.h"
#include "formats/lines_doc.h"
#include "report/lines_table.h"
#include "formats/mem_doc.h"
#include "report/mem_table.h"
#include "harness.h"

static void test_lines_doc(void)
{
    sonde_lines_doc_line lines[] = {
        { .line = 7, .hits = 1, .time_ns = 1500, .source = "def f(n):" },
        { .line = 8, .hits = 10, .iterations = 30, .time_ns = 2500,
          .source = "\treturn \"<\xe9>\"" },
    };
    sonde_lines_doc_instr instrs[] = {
        { .offset = 2, .line = 8, .opname = "LOAD_FAST", .arg = "n", .hits = 10, .time_ns = 40 },
    };
    sonde_lines_doc_function fns[] = {
        { .file = "caf\xc3\xa9.py", .name = "f", .first_line = 7, .lines = lines, .nlines = 2,
          .has_instrs = 1, .instrs = instrs, .ninstrs = 1 },
        { .file = "a.py", .name = "<module>", .first_line = 1, .lines = lines, .nlines = 0 },
    };
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_lines_doc_write(&b, fns, 2) == 0, "lines doc");
    sonde_buf_putc(&b, '\0');
    check_str(b.data,
              "{\"sonde\": 1, \"mode\": \"lines\",\n"
              "\"functions\": [\n"
              " {\"file\": \"caf\xc3\xa9.py\", \"name\": \"f\", \"first_line\": 7, "
              "\"total_ns\": 4000, \"lines\": [\n"
              "  {\"line\": 7, \"hits\": 1, \"iterations\": 0, \"time_ns\": 1500, "
              "\"source\": \"def f(n):\"},\n"
              "  {\"line\": 8, \"hits\": 10, \"iterations\": 30, \"time_ns\": 2500, "
              "\"source\": \"\\u0009return \\\"\\u003c\\udce9\\u003e\\\"\"}],\n"
              " \"instructions\": [\n"
              "  {\"offset\": 2, \"opname\": \"LOAD_FAST\", \"arg\": \"n\", \"line\": 8, "
              "\"hits\": 10, \"time_ns\": 40}]},\n"
              " {\"file\": \"a.py\", \"name\": \"\\u003cmodule\\u003e\", \"first_line\": 1, "
              "\"total_ns\": 0, \"lines\": []}]}\n");
    sonde_jtree t;
    char err[256];
    sonde_buf table;
    sonde_buf_init(&table);
    check(sonde_json_read(&t, b.data, b.len - 1, err, sizeof err) == 0, "read back: %s", err);
    check(sonde_lines_table_write(&table, &t, "ns", err, sizeof err) == 0, "table: %s", err);
    sonde_buf_putc(&table, '\0');
    check(table.data && strstr(table.data, "Function: f at line 7") &&
              strstr(table.data, "Total time: 4e-06 s") && strstr(table.data, "LOAD_FAST n"),
          "the table reads what was written:\n%s", table.data ? table.data : "");
    /* iterations in a column of their own; Per Hit is the time over the hits */
    check(table.data && strstr(table.data, "      Hits      Iters         Time    Per Hit") &&
              strstr(table.data, "        10         30       2500.0      250.0     62.5"),
          "the iterations' column:\n%s", table.data ? table.data : "");
    sonde_jtree_free(&t);
    sonde_buf_free(&table);
    sonde_buf_free(&b);
}

static void test_mem_doc(void)
{
    sonde_mem_doc_line lines[] = {
        { .line = 3, .hits = 2, .alloc = 4096, .freed = 1024, .net = 3072, .peak_heap = 5000,
          .rss = 1 << 20, .rss_increment = -8192, .source = "x = [0] * 512" },
    };
    sonde_mem_doc_function fns[] = {
        { .file = "m.py", .name = "work", .first_line = 3, .lines = lines, .nlines = 1 },
    };
    sonde_mem_doc_frame stack[] = { { .file = "m.py", .name = "work", .line = 3, .source = "x" } };
    sonde_mem_doc_stack leaks[] = {
        { .bytes = 3072, .native = 0, .reserved = 0, .objects = 2.4, .stack = stack, .depth = 1 },
        { .bytes = 10, .objects = 1, .stack = stack, .depth = 0 },
    };
    sonde_mem_doc_stack allocs[] = {
        { .bytes = 4096, .objects = 3.5, .stack = stack, .depth = 1 },
    };
    sonde_mem_doc_point points[] = { { 0, 100, 0, 0 }, { 10000000, 200, 3072, 4096 } };
    sonde_mem_doc_span spans[] = { { .name = "work", .start_ns = 5, .end_ns = 9000000 } };
    sonde_mem_doc d = { .sample_bytes = 512, .native = 1, .line_events = 0, .interval_ms = 10,
                        .heap_peak = 5000, .reserved = 4096, .rss_high_water = 300,
                        .untracked = 0, .functions = fns, .nfunctions = 1, .leaks = leaks,
                        .nleaks = 2, .allocations = allocs, .nallocations = 1,
                        .points = points, .npoints = 2, .spans = spans,
                        .nspans = 1 };
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_mem_doc_write(&b, &d) == 0, "mem doc");
    sonde_buf_putc(&b, '\0');
    check_str(b.data,
              "{\"sonde\": 1, \"mode\": \"mem\",\n"
              "\"sample_bytes\": 512, \"native\": true, \"line_events\": false, "
              "\"interval_ms\": 10.0,\n"
              "\"heap_peak_bytes\": 5000, \"reserved_bytes\": 4096, "
              "\"rss_high_water_bytes\": 300, \"untracked_bytes\": 0,\n"
              "\"functions\": [\n"
              " {\"file\": \"m.py\", \"name\": \"work\", \"first_line\": 3, \"lines\": [\n"
              "  {\"line\": 3, \"hits\": null, \"alloc_bytes\": 4096, \"freed_bytes\": 1024, "
              "\"net_bytes\": 3072, \"reserved_bytes\": 0, \"peak_heap_bytes\": 5000, "
              "\"rss_bytes\": 1048576, \"rss_increment_bytes\": -8192, "
              "\"source\": \"x = [0] * 512\"}]}],\n"
              "\"leaks\": [\n"
              " {\"bytes\": 3072, \"native_bytes\": 0, \"reserved_bytes\": 0, \"objects\": 2, "
              "\"stack\": [\n"
              "  {\"file\": \"m.py\", \"name\": \"work\", \"line\": 3, \"source\": \"x\"}]},\n"
              " {\"bytes\": 10, \"native_bytes\": 0, \"reserved_bytes\": 0, \"objects\": 1, "
              "\"stack\": []}],\n"
              "\"allocations\": [\n"
              " {\"bytes\": 4096, \"objects\": 4, \"stack\": [\n"
              "  {\"file\": \"m.py\", \"name\": \"work\", \"line\": 3, \"source\": \"x\"}]}],\n"
              "\"timeline\": {\n"
              "\"t_ns\": [0, 10000000],\n"
              "\"rss_bytes\": [100, 200],\n"
              "\"heap_bytes\": [0, 3072],\n"
              "\"reserved_bytes\": [0, 4096],\n"
              "\"spans\": [\n"
              " {\"name\": \"work\", \"start_ns\": 5, \"end_ns\": 9000000}]}}\n");
    sonde_jtree t;
    char err[256];
    sonde_buf table;
    sonde_buf_init(&table);
    check(sonde_json_read(&t, b.data, b.len - 1, err, sizeof err) == 0, "read back: %s", err);
    check(sonde_mem_table_write(&table, &t, err, sizeof err) == 0, "table: %s", err);
    sonde_buf_putc(&table, '\0');
    check(table.data && strstr(table.data, "Filename: m.py (work)") &&
              strstr(table.data, "x = [0] * 512") && strstr(table.data, "4.0 KiB"),
          "the table reads what was written:\n%s", table.data ? table.data : "");
    sonde_jtree_free(&t);
    sonde_buf_free(&table);
    sonde_buf_free(&b);
    /* interval_ms as Python writes a float: shortest, and a float */
    d.interval_ms = 0.1;
    d.nfunctions = d.nleaks = d.nallocations = d.npoints = d.nspans = 0;
    sonde_buf_init(&b);
    sonde_mem_doc_write(&b, &d);
    sonde_buf_putc(&b, '\0');
    check(strstr(b.data, "\"interval_ms\": 0.1,") != NULL, "0.1 ms:\n%s", b.data);
    sonde_buf_free(&b);
}

void test_docs(void)
{
    test_lines_doc();
    test_mem_doc();
}
