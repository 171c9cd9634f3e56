/* test_dot.c - golden DOT (-f dot, report -f dot) on the writers' fixture,
 * and its thresholds. */
#include <string.h>

#include "fixture.h"
#include "formats/format.h"
#include "harness.h"

/* The total is what the roots of the call graph took: main's 10 s and the
 * 2 s of work's that no caller edge accounts for (thread 2 started in it):
 * both threads' time, 12 s. */
static const char dot_want[] =
    "digraph sonde {\n"
    "  graph [fontname=Arial, nodesep=0.125, ranksep=0.25];\n"
    "  node [fontcolor=white, fontname=Arial, height=0, shape=box, style=filled, width=0];\n"
    "  edge [fontname=Arial];\n"
    "  f0 [color=\"#c48403\", label=\"main\\napp.py:1\\n83.33%\\n(20.83%)\\n1\xc3\x97\", tooltip=\"app.py:1\"];\n"
    "  f1 [color=\"#c9a804\", label=\"Worker.work\\napp.py:5\\n79.17%\\n(66.67%)\\n4\xc3\x97\", tooltip=\"app.py:5\"];\n"
    "  f2 [color=\"#3691ec\", label=\"<built-in method builtins.len>\\n~:0\\n12.50%\\n(12.50%)\\n4\xc3\x97\", tooltip=\"~:0\"];\n"
    "  f0 -> f1 [arrowsize=0.90, color=\"#71da08\", fontcolor=\"#71da08\", label=\"62.50%\\n2\xc3\x97\", penwidth=3.50];\n"
    "  f1 -> f2 [arrowsize=0.68, color=\"#3691ec\", fontcolor=\"#3691ec\", label=\"12.50%\\n4\xc3\x97\", penwidth=1.50];\n"
    "  f1 -> f1 [arrowsize=0.60, color=\"#425eeb\", fontcolor=\"#425eeb\", label=\"4.17%\\n1\xc3\x97\", penwidth=1.17];\n"
    "}\n";

static void test_dot_graph(void)
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

void test_dot(void)
{
    test_dot_graph();
}
