/* test_time_tree.c - the call tree the pictures draw, rebuilt from a
 * .prof file's stats, against the real one of the writers' fixture. */
#include "core/time_tree.h"
#include "fixture.h"
#include "harness.h"

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
    /* every function's self times add up to its tottime */
    double self[3] = { 0, 0, 0 };
    for (uint32_t i = 1; i < t.n; i++)
        self[t.nodes[i].func] += t.nodes[i].self;
    for (int f = 0; f < 3; f++)
        check_dbl(self[f], s.funcs[f].tottime);
    sonde_time_tree_free(&t);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

void test_time_tree(void)
{
    test_tree_from_stats();
}
