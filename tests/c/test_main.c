/* test_main.c - the C unit tests' main(): runs every test file, reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* Every test file's entry points, as the Makefile lists them from their
 * definitions (build/gen/c_tests.h: TEST(test_NAME) lines). */
#define TEST(name) void name(void);
#include "c_tests.h"
#undef TEST

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
#define TEST(name) name();
#include "c_tests.h"
#undef TEST
    return harness_report();
}
