/* test_diff.c - sonde diff's changes and table on the writers' fixture. */
#include "fixture.h"
#include "harness.h"
#include "report/diff.h"

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

void test_diff(void)
{
    test_diff_table();
}
