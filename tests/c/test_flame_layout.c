/* test_flame_layout.c - where each frame of a flame graph goes: the
 * order and places of the writers' fixture's real tree. */
#include "core/flame_layout.h"
#include "core/time_tree.h"
#include "fixture.h"
#include "harness.h"

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

void test_flame_layout(void)
{
    test_layout();
}
