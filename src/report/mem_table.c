/* mem_table.c - memory_profiler's table plus sonde's columns; see
 * mem_table.h.  Per function that ran: Line #, Mem usage (RSS at the end
 * of the line, the most seen), Increment (RSS change across the line,
 * summed), Occurrences, then Allocated and Net (bytes allocated while the
 * line ran, and of those the bytes still alive at the end), and when some
 * memory was mapped and never touched, Reserved (that part, apart from
 * Net).  Then the stacks whose allocations are still alive, largest
 * first. */
#include "mem_table.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../formats/doc.h"

/* Stacks of live allocations the table lists (the JSON has more). */
#define TABLE_LEAKS 10

static const double MIB = 1024.0 * 1024.0;

static int is_mem(const sonde_jtree *t)
{
    const sonde_jval *root = &t->vals[t->root];
    return strcmp(sonde_json_str(t, sonde_json_get(t, root, DOC_MODE)), DOC_MODE_MEM) == 0;
}

/* Appends bytes in the most readable binary unit ("12.5 MiB", "512 B"). */
static void put_bytes(sonde_buf *b, double bytes)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = fabs(bytes);
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        sonde_buf_printf(b, "%.0f B", bytes);
    else
        sonde_buf_printf(b, "%.1f %s", bytes < 0 ? -v : v, units[u]);
}

/* bytes right-aligned in a column of width w. */
static void put_column(sonde_buf *b, double bytes, int w)
{
    sonde_buf cell;
    sonde_buf_init(&cell);
    put_bytes(&cell, bytes);
    sonde_buf_printf(b, " %*s", w, sonde_buf_ok(&cell) ? cell.data : "?");
    sonde_buf_free(&cell);
}

/* A line ran when it has hits (line events) or, placed from the stack,
 * when samples or RSS readings found it. */
static int line_ran(const sonde_jtree *t, const sonde_jval *l)
{
    return sonde_json_num(t, l, DOC_HITS, 0) > 0 || sonde_json_num(t, l, DOC_ALLOC_BYTES, 0) > 0 ||
           sonde_json_num(t, l, DOC_FREED_BYTES, 0) > 0 ||
           sonde_json_num(t, l, DOC_NET_BYTES, 0) > 0 || sonde_json_num(t, l, DOC_RSS_BYTES, 0) > 0;
}

/* Whether any memory was mapped and never touched: the Reserved column. */
static int has_reserved(const sonde_jtree *t)
{
    const sonde_jval *root = &t->vals[t->root];
    if (sonde_json_num(t, root, DOC_RESERVED_BYTES, 0) > 0)
        return 1;
    const sonde_jval *leaks = sonde_json_get(t, root, DOC_LEAKS);
    for (uint32_t i = 0; leaks && leaks->type == SONDE_J_ARR && i < leaks->len; i++)
        if (sonde_json_num(t, sonde_json_item(t, leaks, i), DOC_RESERVED_BYTES, 0) > 0)
            return 1;
    return 0;
}

static void put_function(sonde_buf *b, const sonde_jtree *t, const sonde_jval *fn, int reserved)
{
    const sonde_jval *lines = sonde_json_get(t, fn, DOC_LINES);
    int ran = 0;
    for (uint32_t i = 0; lines && i < lines->len; i++)
        ran |= line_ran(t, sonde_json_item(t, lines, i));
    if (!ran)
        return;
    const char *name = sonde_json_str(t, sonde_json_get(t, fn, DOC_NAME));
    int only_run = strcmp(name, "<module>") == 0; /* the functions have their own tables */
    sonde_buf_puts(b, "\nFilename: ");
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, fn, DOC_FILE)));
    sonde_buf_puts(b, " (");
    sonde_buf_text_str(b, name);
    sonde_buf_puts(b, ")\n\n");
    char header[160];
    snprintf(header, sizeof header, "%6s %14s %14s %12s %12s %12s%s   %s", "Line #", "Mem usage",
             "Increment", "Occurrences", "Allocated", "Net", reserved ? "     Reserved" : "",
             "Line Contents");
    sonde_buf_underlined(b, header);
    for (uint32_t i = 0; i < lines->len; i++) {
        const sonde_jval *l = sonde_json_item(t, lines, i);
        const char *source = sonde_json_str(t, sonde_json_get(t, l, DOC_SOURCE));
        int ran_here = line_ran(t, l);
        if (only_run && !ran_here)
            continue;
        sonde_buf_printf(b, "%6d", (int)sonde_num_to_int(sonde_json_num(t, l, DOC_LINE, 0), INT_MIN,
                                                         INT_MAX));
        if (ran_here) {
            double rss = sonde_json_num(t, l, DOC_RSS_BYTES, 0);
            if (rss > 0)
                sonde_buf_printf(b, " %10.3f MiB %10.3f MiB", rss / MIB,
                                 sonde_json_num(t, l, DOC_RSS_INCREMENT_BYTES, 0) / MIB);
            else
                sonde_buf_printf(b, " %14s %14s", "", "");
            const sonde_jval *hits = sonde_json_get(t, l, DOC_HITS);
            if (hits && hits->type == SONDE_J_NUM)
                sonde_buf_printf(b, " %12.0f", hits->num);
            else
                sonde_buf_printf(b, " %12s", "-");
            put_column(b, sonde_json_num(t, l, DOC_ALLOC_BYTES, 0), 12);
            put_column(b, sonde_json_num(t, l, DOC_NET_BYTES, 0), 12);
            if (reserved)
                put_column(b, sonde_json_num(t, l, DOC_RESERVED_BYTES, 0), 12);
        } else {
            sonde_buf_printf(b, " %14s %14s %12s %12s %12s", "", "", "", "", "");
            if (reserved)
                sonde_buf_printf(b, " %12s", "");
        }
        sonde_buf_puts(b, "   ");
        sonde_buf_text_str(b, source);
        sonde_buf_putc(b, '\n');
    }
}

static void put_frame(sonde_buf *b, const sonde_jtree *t, const sonde_jval *frame)
{
    const char *source = sonde_json_str(t, sonde_json_get(t, frame, DOC_SOURCE));
    while (*source == ' ' || *source == '\t')
        source++;
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, frame, DOC_FILE)));
    sonde_buf_printf(b, ":%d (",
                     (int)sonde_num_to_int(sonde_json_num(t, frame, DOC_LINE, 0), INT_MIN,
                                           INT_MAX));
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, frame, DOC_NAME)));
    sonde_buf_puts(b, *source ? "): " : ")");
    sonde_buf_text_str(b, source);
    sonde_buf_putc(b, '\n');
}

static void put_leaks(sonde_buf *b, const sonde_jtree *t, const sonde_jval *leaks)
{
    if (!leaks || leaks->type != SONDE_J_ARR || leaks->len == 0)
        return;
    uint32_t shown = leaks->len < TABLE_LEAKS ? leaks->len : TABLE_LEAKS;
    sonde_buf_printf(b, "\nStill alive at the end, by the stack that allocated it (largest "
                        "first; %u of %u):\n", shown, leaks->len);
    for (uint32_t i = 0; i < shown; i++) {
        const sonde_jval *leak = sonde_json_item(t, leaks, i);
        const sonde_jval *stack = sonde_json_get(t, leak, DOC_STACK);
        put_column(b, sonde_json_num(t, leak, DOC_BYTES, 0), 11);
        sonde_buf_puts(b, "  ");
        if (!stack || stack->type != SONDE_J_ARR || stack->len == 0) {
            sonde_buf_puts(b, "(outside the profiled functions)\n");
            continue;
        }
        put_frame(b, t, sonde_json_item(t, stack, stack->len - 1));
        double reserved = sonde_json_num(t, leak, DOC_RESERVED_BYTES, 0);
        if (reserved > 0) {
            sonde_buf_printf(b, "%14s + ", "");
            put_bytes(b, reserved);
            sonde_buf_puts(b, " reserved (mapped, never touched)\n");
        }
        for (uint32_t k = stack->len - 1; k-- > 0;) {
            sonde_buf_printf(b, "%14s called from ", "");
            put_frame(b, t, sonde_json_item(t, stack, k));
        }
    }
}

static void put_summary(sonde_buf *b, const sonde_jtree *t)
{
    const sonde_jval *root = &t->vals[t->root];
    double sample = sonde_json_num(t, root, DOC_SAMPLE_BYTES, 0);
    sonde_buf_puts(b, "\nPeak RSS ");
    put_bytes(b, sonde_json_num(t, root, DOC_RSS_HIGH_WATER_BYTES, 0));
    sonde_buf_puts(b, ", peak of the followed heap ");
    put_bytes(b, sonde_json_num(t, root, DOC_HEAP_PEAK_BYTES, 0));
    double reserved = sonde_json_num(t, root, DOC_RESERVED_BYTES, 0);
    if (reserved > 0) {
        sonde_buf_puts(b, "; at the end ");
        put_bytes(b, reserved);
        sonde_buf_puts(b, " more mapped and never touched (reserved, not heap)");
    }
    if (sample > 0) {
        sonde_buf_printf(b, ".\nSmall blocks sampled once per %.0f bytes on average (blocks of ",
                         sample);
        put_bytes(b, 16 * sample);
        sonde_buf_puts(b, " and more exactly)");
    } else {
        sonde_buf_puts(b, ".\nEvery block followed");
    }
    const sonde_jval *native = sonde_json_get(t, root, DOC_NATIVE);
    const sonde_jval *events = sonde_json_get(t, root, DOC_LINE_EVENTS);
    sonde_buf_printf(b, "; %s.\n%s\n", native && native->num ? "C allocations counted"
                                                             : "Python allocators only",
                     events && events->num
                         ? "Every line followed: figures are exact at line boundaries."
                         : "Lines placed from the stack at each sample; Mem usage and Increment "
                           "where RSS was read (Occurrences: run with --lines).");
    double untracked = sonde_json_num(t, root, DOC_UNTRACKED_BYTES, 0);
    if (untracked > 0) {
        sonde_buf_puts(b, "warning: ");
        put_bytes(b, untracked);
        sonde_buf_puts(b, " of allocations could not be followed (sonde's bookkeeping ran out "
                          "of memory): net and leak figures are short by that much\n");
    }
}

int sonde_mem_table_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen)
{
    const sonde_jval *root = &t->vals[t->root];
    const sonde_jval *functions = sonde_json_get(t, root, DOC_FUNCTIONS);
    if (!is_mem(t) || !functions || functions->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no \"functions\" list: not a sonde mem profile");
        return -1;
    }
    int reserved = has_reserved(t);
    for (uint32_t f = 0; f < functions->len; f++)
        put_function(b, t, sonde_json_item(t, functions, f), reserved);
    put_leaks(b, t, sonde_json_get(t, root, DOC_LEAKS));
    put_summary(b, t);
    return 0;
}
