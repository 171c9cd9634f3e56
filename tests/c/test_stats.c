/* test_stats.c - pstats aggregates from a hand-built tree, recursion included. */
#include <stdlib.h>

#include "core/stats.h"
#include "fixture.h"
#include "harness.h"

static void check_func(const sonde_stats *s, uint32_t f, uint64_t ncalls, uint64_t pcalls,
                       double tottime, double cumtime, int line)
{
    const sonde_fstat *fs = &s->funcs[f];
    harness_check(fs->present, __FILE__, line, "function %u has an entry", f);
    check_u64_at(fs->ncalls, ncalls, "ncalls", __FILE__, line);
    check_u64_at(fs->pcalls, pcalls, "pcalls", __FILE__, line);
    check_dbl_at(fs->tottime, tottime, "tottime", __FILE__, line);
    check_dbl_at(fs->cumtime, cumtime, "cumtime", __FILE__, line);
}

/* Looks the edge up without creating it. */
static void check_edge(const sonde_stats *s, uint32_t caller, uint32_t callee,
                       uint64_t ncalls, uint64_t pcalls, double tottime, double cumtime,
                       int line)
{
    uint32_t i = sonde_u64map_get(&s->edge_index, (uint64_t)caller << 32 | callee);
    harness_check(i < s->nedges, __FILE__, line, "edge %u->%u exists", caller, callee);
    if (i >= s->nedges)
        return;
    const sonde_edge *e = &s->edges[i];
    check_u64_at(e->ncalls, ncalls, "edge ncalls", __FILE__, line);
    check_u64_at(e->pcalls, pcalls, "edge pcalls", __FILE__, line);
    check_dbl_at(e->tottime, tottime, "edge tottime", __FILE__, line);
    check_dbl_at(e->cumtime, cumtime, "edge cumtime", __FILE__, line);
}

enum { MAIN, F, G, H, A, B, NFUNCS };

/* Thread 1 (calls, total, self per node; one tick = one second):
 *   main            1 150 10
 *     f             1  60 20   main->f
 *       f           1  40 25   f->f: f recursive, edge primitive
 *         f         1  15  9   f->f: both recursive
 *           g       2   6  6   f->g: primitive
 *     h             1  30  5
 *       f           2  25 25   h->f: primitive again (f left the path)
 *     a             1  50 10
 *       b           1  40 12   a->b primitive
 *         a         1  28  8   b->a: a recursive, edge primitive
 *           b       1  20 20   a->b: both recursive
 * Thread 2:
 *   f               3   7  5   no caller edge: a thread's first frame
 *     f             1   2  2   f->f: f recursive, edge primitive (thread 1
 *                              is no longer on the path) */
static void build(sonde_profile *p)
{
    static const char *const names[NFUNCS] = { "main", "f", "g", "h", "a", "b" };
    for (int i = 0; i < NFUNCS; i++)
        sonde_profile_func(p, "t.py", 10 * i, names[i], NULL, SONDE_FUNC_PYTHON);
    p->seconds_per_tick = 1.0;

    uint32_t root = fixture_thread(p, 1, 0, "MainThread");
    uint32_t main = fixture_node(p, root, MAIN, 1, 150, 10);
    uint32_t f1 = fixture_node(p, main, F, 1, 60, 20);
    uint32_t f2 = fixture_node(p, f1, F, 1, 40, 25);
    uint32_t f3 = fixture_node(p, f2, F, 1, 15, 9);
    fixture_node(p, f3, G, 2, 6, 6);
    uint32_t h = fixture_node(p, main, H, 1, 30, 5);
    fixture_node(p, h, F, 2, 25, 25);
    uint32_t a1 = fixture_node(p, main, A, 1, 50, 10);
    uint32_t b1 = fixture_node(p, a1, B, 1, 40, 12);
    uint32_t a2 = fixture_node(p, b1, A, 1, 28, 8);
    fixture_node(p, a2, B, 1, 20, 20);

    root = fixture_thread(p, 2, 0, "worker");
    uint32_t f5 = fixture_node(p, root, F, 3, 7, 5);
    fixture_node(p, f5, F, 1, 2, 2);
}

static void test_recursion(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    build(&p);
    sonde_stats s;
    sonde_stats_init(&s);
    check(sonde_stats_from_profile(&s, &p) == 0, "stats_from_profile");
    check_u64(s.nfuncs, NFUNCS);

    /* f: ncalls 1+1+1+2+3+1, pcalls 1+2+3, tottime 20+25+9+25+5+2,
     * cumtime of the outermost calls only: 60+25+7. */
    check_func(&s, MAIN, 1, 1, 10, 150, __LINE__);
    check_func(&s, F, 9, 6, 86, 92, __LINE__);
    check_func(&s, G, 2, 2, 6, 6, __LINE__);
    check_func(&s, H, 1, 1, 5, 30, __LINE__);
    check_func(&s, A, 2, 1, 18, 50, __LINE__);
    check_func(&s, B, 2, 1, 32, 40, __LINE__);

    check_u64(s.nedges, 8);
    check_edge(&s, MAIN, F, 1, 1, 20, 60, __LINE__);
    /* f->f: 40 and 2 count in cumtime; the activation under f->f does not. */
    check_edge(&s, F, F, 3, 2, 25 + 9 + 2, 40 + 2, __LINE__);
    check_edge(&s, F, G, 2, 2, 6, 6, __LINE__);
    check_edge(&s, MAIN, H, 1, 1, 5, 30, __LINE__);
    check_edge(&s, H, F, 2, 2, 25, 25, __LINE__);
    check_edge(&s, MAIN, A, 1, 1, 10, 50, __LINE__);
    check_edge(&s, A, B, 2, 1, 12 + 20, 40, __LINE__);
    check_edge(&s, B, A, 1, 1, 8, 28, __LINE__);

    uint64_t primitive;
    check_u64(sonde_stats_total_calls(&s, &primitive), 17);
    check_u64(primitive, 12);
    check_dbl(sonde_stats_total_time(&s), 157);

    /* Grouped by callee: f is called by main, f and h; by caller: f calls
     * f and g. */
    uint32_t *start, *order;
    check(sonde_stats_group_edges(&s, 0, &start, &order) == 0, "group by callee");
    check_u64(start[F + 1] - start[F], 3);
    int wrong = 0;
    for (uint32_t i = 1; i < s.nedges; i++)
        wrong += s.edges[order[i - 1]].callee > s.edges[order[i]].callee;
    check_u64(wrong, 0);
    check_u64(start[NFUNCS], s.nedges);
    free(start);
    free(order);
    check(sonde_stats_group_edges(&s, 1, &start, &order) == 0, "group by caller");
    check_u64(start[F + 1] - start[F], 2);
    check_u64(start[MAIN + 1] - start[MAIN], 3);
    check_u64(start[G + 1] - start[G], 0);
    for (uint32_t i = start[F]; i < start[F + 1]; i++)
        check_u64(s.edges[order[i]].caller, F);
    free(start);
    free(order);

    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* An empty profile and edges added by hand (as the .prof reader does). */
static void test_by_hand(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    sonde_stats s;
    sonde_stats_init(&s);
    check(sonde_stats_from_profile(&s, &p) == 0, "empty profile");
    check_u64(s.nedges, 0);
    check(sonde_stats_reserve_funcs(&s, 3) == 0, "reserve");
    check(!s.funcs[2].present && s.funcs[2].ncalls == 0, "reserved entries are zeroed");
    sonde_edge *e = sonde_stats_edge(&s, 0, 2);
    check(e && e->caller == 0 && e->callee == 2 && e->ncalls == 0, "new edge is zeroed");
    e->ncalls = 5;
    check(sonde_stats_edge(&s, 0, 2)->ncalls == 5, "same edge again");
    check(sonde_stats_edge(&s, 2, 0) != sonde_stats_edge(&s, 0, 2), "direction matters");
    check_u64(s.nedges, 2);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

void test_stats(void)
{
    test_recursion();
    test_by_hand();
}
