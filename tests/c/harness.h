/* harness.h - a tiny test harness: checks that count, report and exit. */
#ifndef SONDE_TEST_HARNESS_H
#define SONDE_TEST_HARNESS_H

/* Counters, defined once in test_main.c. */
extern int harness_passed, harness_failed;

/* Records one check; on failure prints FILE:LINE and the printf message. */
void harness_check(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints "N passed, N failed"; returns the exit status (1 if any failed). */
int harness_report(void);

#define check(cond, ...) harness_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Typed comparisons that show both values when they differ. */
#define check_u64(got, want) check_u64_at(got, want, #got, __FILE__, __LINE__)
#define check_dbl(got, want) check_dbl_at(got, want, #got, __FILE__, __LINE__)
#define check_str(got, want) check_str_at(got, want, #got, __FILE__, __LINE__)
void check_u64_at(unsigned long long got, unsigned long long want, const char *expr,
                  const char *file, int line);
void check_dbl_at(double got, double want, const char *expr, const char *file, int line);
void check_str_at(const char *got, const char *want, const char *expr, const char *file,
                  int line);

#endif
