/* test_collapsed.c - golden collapsed stacks (-f collapsed). */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "formats/format.h"
#include "harness.h"

/* Two threads merge; a ';' in a qualname becomes ':'; main;glue has no
 * self time of its own, so only its child's stack is written. */
static void test_collapsed_stacks(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    fixture_app_funcs(&p);
    uint32_t glue = sonde_profile_func(&p, "app.py", 20, "glue", "a;b", SONDE_FUNC_PYTHON);
    p.seconds_per_tick = 1e-6;
    uint32_t root = fixture_thread(&p, 1, 0, "MainThread");
    uint32_t main = fixture_node(&p, root, FIXTURE_MAIN, 1, 40, 10);
    fixture_node(&p, fixture_node(&p, main, FIXTURE_WORK, 2, 25, 18), FIXTURE_LEN, 4, 7, 7);
    fixture_node(&p, fixture_node(&p, main, glue, 1, 5, 0), FIXTURE_LEN, 1, 5, 5);
    root = fixture_thread(&p, 2, 0, "worker");
    fixture_node(&p, fixture_node(&p, root, FIXTURE_MAIN, 1, 12, 2), FIXTURE_WORK, 1, 10, 10);

    sonde_stats s;
    sonde_stats_init(&s);
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_collapsed_write(&b, &p, &s, NULL) == 0, "collapsed");
    char *got = fixture_sorted_lines(b.data ? b.data : "");
    char *want = fixture_sorted_lines(
        "main (app.py:1) 12\n"
        "main (app.py:1);Worker.work (app.py:5) 28\n"
        "main (app.py:1);Worker.work (app.py:5);<built-in method builtins.len> (~:0) 7\n"
        "main (app.py:1);a:b (app.py:20);<built-in method builtins.len> (~:0) 5\n");
    check_str(got, want);
    free(got);
    free(want);
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

/* A profile read from a hostile file whose times overflow 64 bits (or are
 * NaN): the weights are clamped, never an undefined conversion (UBSan's
 * float-cast-overflow stops the sanitizer run at one). */
static void test_collapsed_huge_times(void)
{
    static const double ticks[] = { 1e300, -1e300 };
    static const char *const want[] = { "main (app.py:1) 18446744073709551615\n", "" };
    for (int i = 0; i < 2; i++) {
        sonde_profile p;
        sonde_profile_init(&p);
        fixture_app_funcs(&p);
        p.seconds_per_tick = ticks[i];
        fixture_node(&p, fixture_thread(&p, 1, 0, "MainThread"), FIXTURE_MAIN, 1, 40, 40);
        sonde_stats s;
        sonde_stats_init(&s);
        sonde_buf b;
        sonde_buf_init(&b);
        check(sonde_collapsed_write(&b, &p, &s, NULL) == 0, "collapsed of huge times");
        check_str(b.data ? b.data : "", want[i]);
        sonde_buf_free(&b);
        sonde_stats_free(&s);
        sonde_profile_free(&p);
    }
}

void test_collapsed(void)
{
    test_collapsed_stacks();
    test_collapsed_huge_times();
}
