/* test_graphs.c - the call graph, tree and diff writers on the writers'
 * fixture: golden DOT, the tree rebuilt from stats against the real one,
 * the flame layout's order and places, sonde's JSON read back (and
 * refused when malformed), and the diff table. */
#include <stdlib.h>
#include <string.h>

#include "report/diff.h"
#include "core/flame_layout.h"
#include "formats/format.h"
#include "formats/json_profile.h"
#include "page/view.h"
#include "core/time_tree.h"
#include "fixture.h"
#include "harness.h"

/* The total is what the roots of the call graph took: main's 10 s and the
 * 2 s of work's that no caller edge accounts for (thread 2 started in it):
 * both threads' time, 12 s. */
static const char dot_want[] =
    "digraph sonde {\n"
    "  graph [fontname=Arial, nodesep=0.125, ranksep=0.25];\n"
    "  node [fontcolor=white, fontname=Arial, height=0, shape=box, style=filled, width=0];\n"
    "  edge [fontname=Arial];\n"
    "  f0 [color=\"#c48403\", label=\"main\\napp.py:1\\n83.33%\\n(20.83%)\\n1\xc3\x97\"];\n"
    "  f1 [color=\"#c9a804\", label=\"Worker.work\\napp.py:5\\n79.17%\\n(66.67%)\\n4\xc3\x97\"];\n"
    "  f2 [color=\"#3691ec\", label=\"<built-in method builtins.len>\\n~:0\\n12.50%\\n(12.50%)\\n4\xc3\x97\"];\n"
    "  f0 -> f1 [arrowsize=0.90, color=\"#71da08\", fontcolor=\"#71da08\", label=\"62.50%\\n2\xc3\x97\", penwidth=3.50];\n"
    "  f1 -> f2 [arrowsize=0.68, color=\"#3691ec\", fontcolor=\"#3691ec\", label=\"12.50%\\n4\xc3\x97\", penwidth=1.50];\n"
    "  f1 -> f1 [arrowsize=0.60, color=\"#425eeb\", fontcolor=\"#425eeb\", label=\"4.17%\\n1\xc3\x97\", penwidth=1.17];\n"
    "}\n";

static void test_dot(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_format_opts all = { .node_thres = 0, .edge_thres = 0 };
    check(sonde_dot_write(&b, &p, &s, &all) == 0, "dot writer");
    check_str(b.data, dot_want);
    sonde_buf_free(&b);
    /* thresholds: len (12.5%) and the recursive edge (4.2%) go */
    sonde_buf_init(&b);
    sonde_format_opts some = { .node_thres = 20, .edge_thres = 10 };
    sonde_dot_write(&b, &p, &s, &some);
    check(strstr(b.data, "builtins.len") == NULL && strstr(b.data, "f1 -> f1") == NULL &&
              strstr(b.data, "f0 -> f1") != NULL,
          "thresholds prune nodes and edges:\n%s", b.data);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* The tree rebuilt from stats: from the roots of the call graph (main,
 * and work, which thread 2 entered first: one of its 4 calls is on no
 * caller edge), each function's time shared among its callees by the
 * edges; direct recursion is one frame. */
static void test_tree_from_stats(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_time_tree t;
    check(sonde_time_tree_from_stats(&t, &s) == 0, "rebuilt");
    /* root 12 s: main 10 s, and work's 9.5 s of cumtime less the 7.5 s
     * spent in it from main (which it does not reach): 2 s, thread 2's. */
    check_u64(t.n, 6);
    check_dbl(t.nodes[0].total, 12);
    check(t.nodes[1].func == FIXTURE_MAIN && t.nodes[1].parent == 0, "main a root");
    check(t.nodes[2].func == FIXTURE_WORK && t.nodes[2].parent == 0, "work a root");
    check_dbl(t.nodes[1].total, 10);
    check_dbl(t.nodes[2].total, 2);
    /* work 7.5 under main (main->work's cumtime); len under each work, its
     * share of work's callee time: 1.5 of 9.5. */
    check(t.nodes[3].func == FIXTURE_WORK && t.nodes[3].parent == 1, "main -> work");
    check_dbl(t.nodes[3].total, 7.5);
    check_dbl(t.nodes[3].self, 7.5 * 8 / 9.5);
    check(t.nodes[4].func == FIXTURE_LEN && t.nodes[4].parent == 3, "main -> work -> len");
    check_dbl(t.nodes[4].total, 7.5 * 1.5 / 9.5);
    check(t.nodes[5].func == FIXTURE_LEN && t.nodes[5].parent == 2, "work -> len");
    check_dbl(t.nodes[5].total, 2 * 1.5 / 9.5);
    sonde_time_tree_free(&t);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* The real tree, threads merged; children by name, side by side. */
static void test_layout(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_time_tree t;
    sonde_flame_layout l;
    check(sonde_time_tree_from_profile(&t, &p) == 0 && sonde_flame_layout_compute(&l, &t, &p) == 0,
          "laid out");
    /* root's children: Worker.work (thread 2: 8 ticks, 2 s) and main
     * (10 s): by name, "Worker.work" < "main" */
    int main_node = -1, work_top = -1;
    for (uint32_t i = 1; i < t.n; i++)
        if (t.nodes[i].parent == 0)
            *(t.nodes[i].func == FIXTURE_MAIN ? &main_node : &work_top) = (int)i;
    check(main_node > 0 && work_top > 0, "both roots");
    check_dbl(l.x[work_top], 0);
    check_dbl(l.x[main_node], 2);
    check_u64(l.depth[main_node], 1);
    for (uint32_t i = 1; i < t.n; i++)
        if (t.nodes[i].func == FIXTURE_LEN) {
            check_dbl(l.x[i], 2); /* main's only child work, then len at its start */
            check_u64(l.depth[i], 3);
        }
    sonde_flame_layout_free(&l);
    sonde_time_tree_free(&t);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

static int read_json(const char *text, sonde_profile *p, char *err, size_t errlen)
{
    sonde_jtree t;
    if (sonde_json_read(&t, text, strlen(text), err, errlen) < 0)
        return -1;
    int rc = sonde_json_profile_is(&t) ? sonde_json_profile_read(&t, p, err, errlen) : -2;
    sonde_jtree_free(&t);
    return rc;
}

/* json.c's output read back: the same stats, the same DOT. */
static void test_json_round_trip(void)
{
    sonde_profile p, q;
    sonde_stats s, r;
    sonde_profile_init(&p);
    sonde_profile_init(&q);
    sonde_stats_init(&s);
    sonde_stats_init(&r);
    fixture_app(&p, &s);
    sonde_buf b, d1, d2;
    sonde_buf_init(&b);
    sonde_buf_init(&d1);
    sonde_buf_init(&d2);
    sonde_format_find("json")->write(&b, &p, &s, NULL);
    char err[200];
    check(read_json(b.data, &q, err, sizeof err) == 0, "read back: %s", err);
    check(sonde_stats_from_profile(&r, &q) == 0, "stats");
    sonde_format_opts o = { .node_thres = 0, .edge_thres = 0 };
    sonde_dot_write(&d1, &p, &s, &o);
    sonde_dot_write(&d2, &q, &r, &o);
    check_str(d2.data, d1.data);
    check_u64(q.nthreads, 2);
    sonde_buf_free(&b);
    sonde_buf_free(&d1);
    sonde_buf_free(&d2);
    sonde_stats_free(&s);
    sonde_stats_free(&r);
    sonde_profile_free(&p);
    sonde_profile_free(&q);
}

static void test_json_refused(void)
{
    static const char *bad[] = {
        "{\"mode\": \"run\", \"nodes\": []}",
        "{\"mode\": \"run\", \"functions\": [], \"threads\": [{\"root\": 5}], \"nodes\": [0]}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [7,1,1,1,1]]}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}], \"threads\": [{\"root\": 1}],"
        " \"nodes\": [[-1,0,0,0,0], [-1,0,0,0,0], [0,3,1,1,1], [0,2,1,1,1]]}",
        "{\"mode\": \"run\", \"functions\": [{\"name\": \"f\"}, {\"name\": \"f\"}],"
        " \"threads\": [], \"nodes\": []}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sonde_profile p;
        sonde_profile_init(&p);
        char err[200] = "";
        check(read_json(bad[i], &p, err, sizeof err) == -1 && err[0], "refused %zu: %s", i, err);
        sonde_profile_free(&p);
    }
}

static void test_diff_table(void)
{
    sonde_profile a, b;
    sonde_stats sa, sb;
    sonde_profile_init(&a);
    sonde_profile_init(&b);
    sonde_stats_init(&sa);
    sonde_stats_init(&sb);
    fixture_app(&a, &sa);
    fixture_app(&b, &sb);
    sb.funcs[FIXTURE_LEN].tottime = 4.5; /* len grew by 3 s */
    sb.funcs[FIXTURE_MAIN].tottime = 2.0; /* main shrank by 0.5 s */
    sonde_diff d;
    check(sonde_diff_compute(&d, &a, &sa, &b, &sb) == 0 && d.n == 3, "three functions");
    sonde_buf t;
    sonde_buf_init(&t);
    sonde_diff_table_write(&t, &d, 2);
    check_str(t.data,
              "Functions whose own time changed most (2 of 3):\n\n"
              "  own before    own after       change  change%   cum before    cum after  function\n"
              "===================================================================================\n"
              "    1.500000     4.500000    +3.000000  +200.0%     1.500000     1.500000  "
              "~:0(<built-in method builtins.len>)\n"
              "    2.500000     2.000000    -0.500000   -20.0%    10.000000    10.000000  "
              "app.py:1(main)\n");
    sonde_diff_free(&d);
    sonde_buf_free(&t);
    sonde_stats_free(&sa);
    sonde_stats_free(&sb);
    sonde_profile_free(&a);
    sonde_profile_free(&b);
}

/* The data of sonde view's page for the fixture: strings escaped for the
 * <script> element, the tree with sonde_flame_layout's places, stats, edges. */
static const char page_data_want[] =
    "{\"kind\": \"profile\", \"title\": \"app \\u003cx\\u003e.json\", \"unit\": \"seconds\", "
    "\"sampled\": false, \"exact_tree\": true,\n"
    "\"funcs\": [\n"
    "[\"main\",\"app.py\",1,\"#f79053\"],\n"
    "[\"Worker.work\",\"app.py\",5,\"#efc234\"],\n"
    "[\"\\u003cbuilt-in method builtins.len\\u003e\",\"~\",0,\"#ce7055\"]],\n"
    "\"tree\": [\n"
    "[-1,0,12,0,0],\n"
    "[0,0,10,2.5,2],\n"
    "[1,1,7.5,6,2],\n"
    "[2,2,1.5,1.5,2],\n"
    "[1,0,2,1.5,0],\n"
    "[1,4,0.5,0.5,0]],\n"
    "\"stats\": [\n"
    "[0,1,1,2.5,10],\n"
    "[1,4,3,8,9.5],\n"
    "[2,4,4,1.5,1.5]],\n"
    "\"edges\": [\n"
    "[0,1,2,6,7.5],\n"
    "[1,2,4,1.5,1.5],\n"
    "[1,1,1,0.5,0.5]]}";

static void test_page_data(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_view_profile_write(&b, "app <x>.json", &p, &s, 1) == 0, "page written");
    const char *data = strstr(b.data, "<script type=\"application/json\" id=\"data\">");
    const char *end = data ? strstr(data, "</script>") : NULL;
    check(data && end, "the page holds its data");
    if (data && end) {
        data += strlen("<script type=\"application/json\" id=\"data\">");
        char *got = strndup(data, (size_t)(end - data));
        check_str(got, page_data_want);
        free(got);
    }
    check(strstr(b.data, "Content-Security-Policy\" content=\"default-src 'none';") != NULL,
          "requests forbidden");
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

void test_graphs(void)
{
    test_page_data();
    test_dot();
    test_tree_from_stats();
    test_layout();
    test_json_round_trip();
    test_json_refused();
    test_diff_table();
}
