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

/* One entry point per test file, called by test_main.c. */
void test_buf(void);
void test_grow(void);
void test_strtab(void);
void test_u64map(void);
void test_livemap(void);
void test_profile(void);
void test_ops(void);
void test_timeline(void);
void test_stats(void);
void test_marshal(void);
void test_pstats(void);
void test_formats(void);
void test_collapsed(void);
void test_collapsed_read(void);
void test_json(void);
void test_about(void);
void test_dot(void);
void test_table(void);
void test_diff(void);
void test_time_tree(void);
void test_flame_layout(void);
void test_page(void);
void test_verdict(void);
void test_json_read(void);
void test_pprof(void);
void test_options(void);
void test_mem_account(void);
void test_docs(void);

#endif
