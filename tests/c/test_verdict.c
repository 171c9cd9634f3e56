/* test_verdict.c - wait kinds of C functions, the resource lines and verdict. */
#include <string.h>

#include "report/verdict.h"
#include "harness.h"

static void test_wait_kinds(void)
{
    check_u64(sonde_verdict_wait_kind("<built-in method time.sleep>"), SONDE_WAIT_SLEEP);
    check_u64(sonde_verdict_wait_kind("<method 'acquire' of '_thread.lock' objects>"),
              SONDE_WAIT_LOCK);
    check_u64(sonde_verdict_wait_kind("<method 'release' of '_thread.lock' objects>"),
              SONDE_WAIT_LOCK);
    check_u64(sonde_verdict_wait_kind("<built-in method posix.waitpid>"), SONDE_WAIT_CHILD);
    check_u64(sonde_verdict_wait_kind("<built-in method posix.read>"), SONDE_WAIT_IO);
    check_u64(sonde_verdict_wait_kind("<method 'recv' of '_socket.socket' objects>"),
              SONDE_WAIT_IO);
    check_u64(sonde_verdict_wait_kind("<built-in method select.select>"), SONDE_WAIT_IO);
    check(sonde_verdict_wait_kind("<built-in method builtins.len>") == -1, "len waits on nothing");
}

/* A function with this tottime in p and s. */
static void add_func(sonde_profile *p, sonde_stats *s, const char *file, const char *name,
                     double tottime)
{
    int is_c = strcmp(file, "~") == 0;
    uint32_t f = sonde_profile_func(p, file, is_c ? 0 : 3, name, NULL,
                                    is_c ? SONDE_FUNC_C : SONDE_FUNC_PYTHON);
    sonde_stats_reserve_funcs(s, p->nfuncs);
    s->funcs[f].present = 1;
    s->funcs[f].ncalls = s->funcs[f].pcalls = 1;
    s->funcs[f].tottime = s->funcs[f].cumtime = tottime;
}

/* The verdict line for this usage and these functions. */
static void check_verdict(const sonde_usage *u, const sonde_profile *p, const sonde_stats *s,
                          const char *want, int line)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_verdict_write(&b, u, p, s);
    const char *verdict = b.data ? strstr(b.data, "verdict:   ") : NULL;
    check_str_at(verdict, want, "verdict", __FILE__, line);
    sonde_buf_free(&b);
}

static void test_verdicts(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);

    /* user + sys = wall: CPU-bound; the full text once. */
    sonde_usage busy = { .wall = 2.0, .user = 1.5, .sys = 0.5, .max_rss_kb = 51200,
                         .minor_faults = 1200, .voluntary_switches = 3,
                         .involuntary_switches = 7 };
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_verdict_write(&b, &busy, &p, &s);
    check_str(b.data,
              "resources: wall 2.000 s, CPU 2.000 s (user 1.500 s, sys 0.500 s), "
              "CPU utilisation 100%\n"
              "           max RSS 50.0 MB, page faults 0 major / 1200 minor, "
              "context switches 3 voluntary / 7 involuntary\n"
              "verdict:   CPU-bound: the CPU was busy 100% of the wall time; "
              "the functions above are where it went\n");
    sonde_buf_free(&b);
    sonde_usage cores = { .wall = 1.0, .user = 3.5, .sys = 0.5 };
    check_verdict(&cores, &p, &s,
                  "verdict:   CPU-bound: the CPU was busy 400% of the wall time (about 4.0 "
                  "cores); the functions above are where it went\n", __LINE__);

    /* Idle, and no wait call seen. */
    sonde_usage idle = { .wall = 10.0, .user = 0.25, .sys = 0.25 };
    check_verdict(&idle, &p, &s,
                  "verdict:   waiting: the CPU was busy only 5% of the wall time, in no sleep, "
                  "I/O or lock call sonde saw (start-up, page faults, or time outside the "
                  "profiled code)\n", __LINE__);

    /* Sleeping 4 + 0.5 s of 10: the two sleep calls add up, the Python
     * function named sleep and the lesser I/O do not count. */
    add_func(&p, &s, "~", "<built-in method time.sleep>", 4.0);
    add_func(&p, &s, "~", "<built-in method gevent.sleep>", 0.5);
    add_func(&p, &s, "a.py", "sleep", 9.0);
    add_func(&p, &s, "~", "<built-in method posix.read>", 0.25);
    add_func(&p, &s, "~", "<built-in method builtins.len>", 3.0);
    check_verdict(&idle, &p, &s,
                  "verdict:   waiting on sleep: the CPU was busy only 5% of the wall time; "
                  "4.500 s went to sleep calls, most in <built-in method time.sleep>\n",
                  __LINE__);

    /* Locks outweigh sleep. */
    add_func(&p, &s, "~", "<method 'acquire' of '_thread.lock' objects>", 6.0);
    check_verdict(&idle, &p, &s,
                  "verdict:   waiting on locks: the CPU was busy only 5% of the wall time; "
                  "6.000 s went to lock calls, most in <method 'acquire' of '_thread.lock' "
                  "objects>\n", __LINE__);

    /* Waits past the wall time: threads waiting at once, said so. */
    add_func(&p, &s, "~", "<method 'recv' of '_socket.socket' objects>", 27.25);
    check_verdict(&idle, &p, &s,
                  "verdict:   waiting on I/O: the CPU was busy only 5% of the wall time; "
                  "27.500 s went to I/O calls (its threads' added up), most in <method 'recv' "
                  "of '_socket.socket' objects>\n", __LINE__);

    /* Many major faults while the machine stalled for memory or swapped:
     * memory pressure, whatever the CPU did. */
    sonde_usage swapping = { .wall = 10.0, .user = 9.0, .sys = 0.5, .major_faults = 5000,
                             .memory_stall = 1.5, .swap_ins = 4000 };
    check_verdict(&swapping, &p, &s,
                  "verdict:   memory pressure: 5000 major page faults (pages read back from "
                  "disk or swap) while the machine stalled 1.500 s for memory and swapped in "
                  "4000 pages; use less memory or give the machine more\n", __LINE__);
    sonde_usage swapped_only = { .wall = 10.0, .user = 9.0, .sys = 0.5, .major_faults = 5000,
                                 .memory_stall = -1, .swap_ins = 4000 };
    check_verdict(&swapped_only, &p, &s,
                  "verdict:   memory pressure: 5000 major page faults (pages read back from "
                  "disk or swap) while the machine swapped in 4000 pages; use less memory or "
                  "give the machine more\n", __LINE__);
    /* The same faults without a stall or a swap: a file read through mmap
     * from a cold cache is the disk's time, not memory short. */
    sonde_usage paging_in = { .wall = 10.0, .user = 9.0, .sys = 0.5, .major_faults = 5000,
                              .memory_stall = 0, .swap_ins = 0 };
    check_verdict(&paging_in, &p, &s,
                  "verdict:   CPU-bound: the CPU was busy 95% of the wall time; "
                  "the functions above are where it went\n", __LINE__);
    sonde_usage unknown = { .wall = 10.0, .user = 9.0, .sys = 0.5, .major_faults = 5000,
                            .memory_stall = -1, .swap_ins = -1 };
    check_verdict(&unknown, &p, &s,
                  "verdict:   CPU-bound: the CPU was busy 95% of the wall time; "
                  "the functions above are where it went\n", __LINE__);
    sonde_usage few_faults = { .wall = 10.0, .user = 9.0, .sys = 0.5, .major_faults = 3 };
    check_verdict(&few_faults, &p, &s,
                  "verdict:   CPU-bound: the CPU was busy 95% of the wall time; "
                  "the functions above are where it went\n", __LINE__);

    /* A pool of workers did the work, the program's own process waited:
     * the CPU went to the children, whatever the profile's calls say. */
    sonde_usage pool = { .wall = 2.0, .user = 2.9, .sys = 0.1, .children_cpu = 2.8,
                         .run_delay = 0.01 };
    sonde_buf_init(&b);
    sonde_verdict_write(&b, &pool, &p, &s);
    check_str(strstr(b.data, "           child"),
              "           child processes used 2.800 s of the CPU; waited 0.010 s for a CPU "
              "(the main thread, ready to run)\n"
              "verdict:   the CPU went to child processes: they used 2.800 s of it, the "
              "program's own process 0.200 s; the functions above are only the program's "
              "own: see the children's with sonde run --subprocesses\n");
    sonde_buf_free(&b);

    /* The program waited on a child that did little on the CPU (werkzeug's
     * reloader runs the program again in one): where to find its work. */
    sonde_usage reloader = { .wall = 10.0, .user = 0.5, .sys = 0.1, .children_cpu = 0.3 };
    sonde_profile_free(&p);
    sonde_stats_free(&s);
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    add_func(&p, &s, "~", "<built-in method posix.waitpid>", 9.0);
    check_verdict(&reloader, &p, &s,
                  "verdict:   waiting on child processes: the CPU was busy only 6% of the wall "
                  "time; 9.000 s went to child-process calls, most in <built-in method "
                  "posix.waitpid>; sonde run --subprocesses profiles the children too\n",
                  __LINE__);
    reloader.children_profiled = 1;
    check_verdict(&reloader, &p, &s,
                  "verdict:   waiting on child processes: the CPU was busy only 6% of the wall "
                  "time; 9.000 s went to child-process calls, most in <built-in method "
                  "posix.waitpid>\n", __LINE__);

    /* Ran 40% of the time and queued for a CPU 55%: CPU-bound on a busy
     * machine, not waiting on anything of its own. */
    sonde_usage queued = { .wall = 2.0, .user = 0.8, .sys = 0.0, .children_cpu = 0,
                           .run_delay = 1.1, .involuntary_switches = 420 };
    check_verdict(&queued, &p, &s,
                  "verdict:   CPU-bound on a busy machine: the program ran 40% of the wall "
                  "time and waited 55% (1.100 s) for a CPU that other processes had (420 "
                  "involuntary context switches); the functions above are where its CPU "
                  "time went\n", __LINE__);
    /* Queued a quarter of the time, idle the rest, no wait call. */
    sonde_profile_free(&p);
    sonde_stats_free(&s);
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    sonde_usage slow_idle = { .wall = 4.0, .user = 0.4, .sys = 0.0, .run_delay = 1.0 };
    check_verdict(&slow_idle, &p, &s,
                  "verdict:   waiting: the CPU was busy only 10% of the wall time, and the "
                  "program waited 25% (1.000 s) for a CPU that other processes had; the rest "
                  "went in no sleep, I/O or lock call sonde saw (start-up, page faults, or "
                  "time outside the profiled code)\n", __LINE__);

    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

void test_verdict(void)
{
    test_wait_kinds();
    test_verdicts();
}
