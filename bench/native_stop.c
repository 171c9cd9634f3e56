/* native_stop.c - what a native stack sample costs the thread it reads, per way of taking it.
 *
 *   native_stop TARGET RATE SECONDS THREADS [METHOD...]
 * Starts TARGET (bench/native_target) with THREADS spinning threads, and
 * samples every thread RATE times a second for SECONDS with one method:
 *   none       no sampling (the baseline)
 *   seize      sonde's ptrace capture: PTRACE_SEIZE, PTRACE_INTERRUPT,
 *              registers and a stack copy, PTRACE_DETACH; unwound after
 *   held       the same, seized once for the run (austin's way): INTERRUPT,
 *              copy, PTRACE_CONT
 *   libunwind  seized once; per sample INTERRUPT, libunwind-ptrace's
 *              unw_step over the stopped thread, CONT (only with libunwind)
 *   perf       perf_event_open with user registers and 16 KiB of stack: no
 *              stop; samples read from the ring and unwound
 *   perf64k    the same with the kernel's largest copy, 65528 bytes
 * and prints, per method: the stop per sample (median, p99, in us; the
 * time from the interrupt to the resume as the sampler sees it), the
 * sampler's CPU per sample (us, unwinding included), the frames per
 * stack, and the target's work per second against the baseline. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "sampler/native/objects.h"
#include "sampler/native/perf.h"
#include "sampler/native/ptrace.h"
#include "sampler/native/unwind.h"
#ifdef HAVE_LIBUNWIND
#include <libunwind-ptrace.h>
#endif

#define MAX_THREADS 256
#define MAX_SAMPLES 400000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct run {
    pid_t pid;
    FILE *out;
    int tids[MAX_THREADS];
    int ntids;
} run;

static int start(const char *target, double seconds, int threads, run *r)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    char s[32], t[32];
    snprintf(s, sizeof s, "%g", seconds);
    snprintf(t, sizeof t, "%d", threads);
    r->pid = fork();
    if (r->pid == 0) {
        dup2(fds[1], 1);
        execl(target, target, s, t, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    r->out = fdopen(fds[0], "r");
    char line[64];
    if (!fgets(line, sizeof line, r->out) || strncmp(line, "ready", 5) != 0)
        return -1;
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", r->pid);
    DIR *d = opendir(dir);
    struct dirent *e;
    r->ntids = 0;
    while (d && (e = readdir(d)) && r->ntids < MAX_THREADS)
        if (e->d_name[0] != '.' && atoi(e->d_name) != r->pid)   /* the spinning threads */
            r->tids[r->ntids++] = atoi(e->d_name);
    if (d)
        closedir(d);
    return 0;
}

static double finish(run *r)
{
    char line[64] = "0";
    if (!fgets(line, sizeof line, r->out))
        line[0] = '0';
    fclose(r->out);
    waitpid(r->pid, NULL, 0);
    return atof(line);
}

typedef struct tally {
    uint64_t *stops;
    uint32_t n;
    uint64_t frames, stacks, failed;
} tally;

/* Stops as austin does: the thread stays seized between samples. */
static int held_capture(int pid, int tid, sonde_native_stack *st, uint64_t *stopped)
{
    uint64_t t0 = now_ns();
    int status;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 || waitpid(tid, &status, __WALL) < 0)
        return -1;
    struct user_regs_struct regs;
    int rc = ptrace(PTRACE_GETREGS, tid, 0, &regs);
    if (rc == 0) {
        const uint64_t v[SONDE_CFI_NREGS] = { regs.rax, regs.rdx, regs.rcx, regs.rbx, regs.rsi,
                                              regs.rdi, regs.rbp, regs.rsp, regs.r8, regs.r9,
                                              regs.r10, regs.r11, regs.r12, regs.r13, regs.r14,
                                              regs.r15, regs.rip };
        memcpy(st->regs, v, sizeof v);
        struct iovec local = { st->data, st->cap }, remote = { (void *)regs.rsp, st->cap };
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        st->len = n > 0 ? (uint32_t)n : 0;
    }
    ptrace(PTRACE_CONT, tid, 0, 0);
    *stopped = now_ns() - t0;
    return rc;
}

#ifdef HAVE_LIBUNWIND
static unw_addr_space_t space;

static int libunwind_sample(int tid, uint64_t *stopped, uint64_t *frames)
{
    uint64_t t0 = now_ns();
    int status;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 || waitpid(tid, &status, __WALL) < 0)
        return -1;
    void *upt = _UPT_create(tid);
    unw_cursor_t c;
    int n = 0;
    if (upt && unw_init_remote(&c, space, upt) == 0)
        while (n < 512 && unw_step(&c) > 0)
            n++;
    if (upt)
        _UPT_destroy(upt);
    ptrace(PTRACE_CONT, tid, 0, 0);
    *stopped = now_ns() - t0;
    *frames = (uint64_t)n + 1;
    return 0;
}
#endif

static uint32_t perf_stack = 16384;   /* bytes of stack per perf sample: "perf64k" copies 65528 */

static void sample_perf(run *r, sonde_native_objects *o, sonde_native_stack *st, double rate,
                        uint64_t until, tally *t)
{
    static sonde_native_perf perf[MAX_THREADS];
    int open = 0;
    for (int i = 0; i < r->ntids; i++)
        if (sonde_native_perf_open(&perf[open], r->tids[i], (uint64_t)(1e9 / rate), perf_stack,
                                   512) == 0)
            open++;
    if (open == 0)
        fprintf(stderr, "perf_event_open failed: %s\n", strerror(errno));
    while (now_ns() < until) {
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
        for (int i = 0; i < open; i++) {
            uint64_t time;
            while (sonde_native_perf_next(&perf[i], st, &time) == 1) {
                sonde_native_frame frames[512];
                uint32_t n;
                sonde_native_counts c = { 0 };
                sonde_native_unwind(o, st, frames, 512, &n, &c);
                t->frames += n;
                t->stacks++;
            }
        }
    }
    for (int i = 0; i < open; i++) {
        t->failed += perf[i].lost;
        sonde_native_perf_close(&perf[i]);
    }
}

static void sample(const char *method, run *r, double rate, double seconds, tally *t)
{
    static uint8_t copy[SONDE_NATIVE_STACK_MAX];
    sonde_native_stack st = { .data = copy, .cap = 64 * 1024 };
    sonde_native_objects o;
    sonde_native_objects_init(&o, r->pid);
    uint64_t start = now_ns(), period = (uint64_t)(1e9 / rate), until = start + (uint64_t)(seconds * 1e9);
    int held = strcmp(method, "held") == 0 || strcmp(method, "libunwind") == 0;
    for (int i = 0; held && i < r->ntids; i++)
        ptrace(PTRACE_SEIZE, r->tids[i], 0, 0);
#ifdef HAVE_LIBUNWIND
    space = unw_create_addr_space(&_UPT_accessors, 0);
#endif
    if (strncmp(method, "perf", 4) == 0) {
        perf_stack = strcmp(method, "perf64k") == 0 ? SONDE_PERF_STACK_MAX : 16384;
        sample_perf(r, &o, &st, rate, until, t);
    } else if (strcmp(method, "none") != 0) {
        for (uint64_t slot = start; slot < until; slot += period) {
            for (int i = 0; i < r->ntids && t->n < MAX_SAMPLES; i++) {
                uint64_t stopped = 0, frames = 0;
                int rc = -1;
                if (strcmp(method, "seize") == 0)
                    rc = sonde_native_ptrace_capture(r->pid, r->tids[i], &st, NULL, NULL,
                                                     &stopped);
                else if (strcmp(method, "held") == 0)
                    rc = held_capture(r->pid, r->tids[i], &st, &stopped);
#ifdef HAVE_LIBUNWIND
                else if (strcmp(method, "libunwind") == 0)
                    rc = libunwind_sample(r->tids[i], &stopped, &frames);
#endif
                if (rc < 0) {
                    t->failed++;
                    continue;
                }
                if (frames == 0) {
                    sonde_native_frame fr[512];
                    uint32_t n;
                    sonde_native_counts c = { 0 };
                    sonde_native_unwind(&o, &st, fr, 512, &n, &c);
                    frames = n;
                }
                t->stops[t->n++] = stopped;
                t->frames += frames;
                t->stacks++;
            }
            uint64_t next = slot + period, now = now_ns();
            if (next > now)
                nanosleep(&(struct timespec){ 0, (long)(next - now) }, NULL);
        }
    }
    for (int i = 0; held && i < r->ntids; i++) {   /* only a stopped tracee can be detached */
        int status;
        if (ptrace(PTRACE_INTERRUPT, r->tids[i], 0, 0) == 0 &&
            waitpid(r->tids[i], &status, __WALL) == r->tids[i])
            ptrace(PTRACE_DETACH, r->tids[i], 0, 0);
    }
#ifdef HAVE_LIBUNWIND
    unw_destroy_addr_space(space);
#endif
    sonde_native_objects_free(&o);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: native_stop TARGET RATE SECONDS THREADS [METHOD...]\n");
        return 2;
    }
    double rate = atof(argv[2]), seconds = atof(argv[3]), baseline = 0;
    int threads = atoi(argv[4]);
    const char *all[] = { "none", "seize", "held", "libunwind", "perf", "perf64k" };
    const char **methods = argc > 5 ? (const char **)argv + 5 : all;
    int nmethods = argc > 5 ? argc - 5 : 6;
    tally t = { .stops = malloc(MAX_SAMPLES * sizeof(uint64_t)) };
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("%-10s %8s %6s %9s %9s %10s %7s %9s\n", "method", "samples", "lost", "stop_med",
           "stop_p99", "cpu/sample", "frames", "slowdown");
    for (int m = 0; m < nmethods; m++) {
        run r;
        if (start(argv[1], seconds + 0.5, threads, &r) < 0) {
            fprintf(stderr, "cannot start %s\n", argv[1]);
            return 1;
        }
        t.n = 0;
        t.frames = t.stacks = t.failed = 0;
        double cpu0 = cpu_seconds();
        sample(methods[m], &r, rate, seconds, &t);
        double cpu = cpu_seconds() - cpu0, work = finish(&r);
        if (strcmp(methods[m], "none") == 0)
            baseline = work;
        qsort(t.stops, t.n, sizeof *t.stops, by_value);
        double med = t.n ? (double)t.stops[t.n / 2] / 1e3 : 0;
        double p99 = t.n ? (double)t.stops[(size_t)(t.n * 0.99)] / 1e3 : 0;
        printf("%-10s %8llu %6llu %8.1fus %8.1fus %8.1fus %7.1f %8.1f%%\n", methods[m],
               (unsigned long long)t.stacks, (unsigned long long)t.failed, med, p99,
               t.stacks ? cpu / (double)t.stacks * 1e6 : 0,
               t.stacks ? (double)t.frames / (double)t.stacks : 0,
               baseline > 0 ? (1 - work / baseline) * 100 : 0);
    }
    free(t.stops);
    return 0;
}
