/* test_main.c - the C unit tests' main(): runs every test file, reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "sampler_tests.h"

int harness_passed, harness_failed;

void harness_check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        harness_passed++;
        return;
    }
    harness_failed++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void check_u64_at(unsigned long long got, unsigned long long want, const char *expr,
                  const char *file, int line)
{
    harness_check(got == want, file, line, "%s is %llu, want %llu", expr, got, want);
}

void check_dbl_at(double got, double want, const char *expr, const char *file, int line)
{
    harness_check(got == want, file, line, "%s is %.17g, want %.17g", expr, got, want);
}

void check_str_at(const char *got, const char *want, const char *expr, const char *file,
                  int line)
{
    int same = got && strcmp(got, want) == 0;
    harness_check(same, file, line, "%s is\n----\n%s\n---- want\n%s\n----", expr,
                  got ? got : "(null)", want);
}

int harness_report(void)
{
    printf("%d passed, %d failed\n", harness_passed, harness_failed);
    return harness_failed ? 1 : 0;
}

int main(void)
{
    test_buf();
    test_grow();
    test_strtab();
    test_u64map();
    test_livemap();
    test_profile();
    test_ops();
    test_timeline();
    test_stats();
    test_marshal();
    test_pstats();
    test_formats();
    test_collapsed();
    test_collapsed_read();
    test_json();
    test_about();
    test_dot();
    test_table();
    test_diff();
    test_time_tree();
    test_flame_layout();
    test_page();
    test_verdict();
    test_json_read();
    test_pprof();
    test_options();
    test_mem_account();
    test_docs();
    test_sampler_python();
    test_sampler_proc();
    test_walker();
    test_native_merge();
    test_native_demangle();
    test_native_objects();
    test_native();
    return harness_report();
}
