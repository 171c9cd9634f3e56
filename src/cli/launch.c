/* launch.c - start, wait for and account for a launched program; see launch.h. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../sampler/proc/task.h"
#include "options.h"

/* Forks and execs argv; the child sets its signal mask to child_mask
 * (when given) just before exec.  See launch_start. */
static pid_t start(char *const argv[], const sigset_t *child_mask)
{
    /* A close-on-exec pipe stays open only if exec failed: the child then
     * writes its errno there. */
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        if (child_mask)
            sigprocmask(SIG_SETMASK, child_mask, NULL);
        execvp(argv[0], argv);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    int fork_errno = errno;
    close(pipefd[1]);
    int exec_errno = 0;
    ssize_t got = 0;
    if (pid > 0) {
        do
            got = read(pipefd[0], &exec_errno, sizeof exec_errno);
        while (got < 0 && errno == EINTR);
    }
    close(pipefd[0]);
    if (pid < 0) {
        errno = fork_errno;
        return -1;
    }
    if (got == (ssize_t)sizeof exec_errno) {
        waitpid(pid, NULL, 0);
        errno = exec_errno;
        return -1;
    }
    return pid;
}

pid_t launch_start(char *const argv[])
{
    return start(argv, NULL);
}

/* The program SIGTERM and SIGHUP are passed on to while sonde waits for
 * it; 0 otherwise.  Written only while those signals are blocked, read by
 * the handler. */
static volatile sig_atomic_t forward_to;

/* Passes sig on when a process sent it (si_code <= 0), unless that was
 * the program itself: the kernel's (a terminal's hangup) and the
 * program's own went to its process group, the program's too.  A signal
 * another process sent to the whole group reaches the program twice. */
static void forward(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved = errno;
    if (forward_to > 0 && info->si_code <= 0 && info->si_pid != (pid_t)forward_to)
        kill((pid_t)forward_to, sig);
    errno = saved;
}

/* The signals sonde handles while it waits: the terminal's Ctrl-C and
 * Ctrl-\ reach the program itself (sonde ignores them and waits it out);
 * SIGTERM and SIGHUP sent to sonde alone are passed on to it. */
static const int waiting_signals[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
#define NWAITING (int)(sizeof waiting_signals / sizeof waiting_signals[0])

static void waiting_set(sigset_t *set)
{
    sigemptyset(set);
    for (int i = 0; i < NWAITING; i++)
        sigaddset(set, waiting_signals[i]);
}

/* Installs the handlers for pid, keeping the old ones in old; a signal
 * sonde was started with ignored (nohup) stays ignored, as it is in the
 * program.  The caller has blocked the signals. */
static void waiting_begin(pid_t pid, struct sigaction old[NWAITING])
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    struct sigaction pass = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO };
    sigemptyset(&ignore.sa_mask);
    sigemptyset(&pass.sa_mask);
    forward_to = pid;
    for (int i = 0; i < NWAITING; i++) {
        sigaction(waiting_signals[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(waiting_signals[i], i < 2 ? &ignore : &pass, NULL);
    }
}

static void waiting_end(const struct sigaction old[NWAITING], const sigset_t *mask)
{
    sigset_t handled;
    waiting_set(&handled);
    sigprocmask(SIG_BLOCK, &handled, NULL);
    forward_to = 0;
    for (int i = 0; i < NWAITING; i++)
        sigaction(waiting_signals[i], &old[i], NULL);
    sigprocmask(SIG_SETMASK, mask, NULL);
}

/* Reads the whole of a small /proc file into buf; its length, or -1. */
static ssize_t read_proc(pid_t pid, const char *name, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* The machine's memory pressure so far: seconds some task stalled for
 * memory (PSI) and pages swapped in since boot; -1 each when unknown. */
static void memory_pressure(double *stall, long long *swap_ins)
{
    char buf[4096];
    *stall = -1;
    *swap_ins = -1;
    int fd = open("/proc/pressure/memory", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    unsigned long long us;
    const char *total = n > 0 ? (buf[n] = '\0', strstr(buf, "total=")) : NULL;
    if (total && strncmp(buf, "some ", 5) == 0 && sscanf(total, "total=%llu", &us) == 1)
        *stall = (double)us * 1e-6;
    fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
    n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    long long pages;
    const char *line = n > 0 ? (buf[n] = '\0', strstr(buf, "\npswpin ")) : NULL;
    if (line && sscanf(line + 8, "%lld", &pages) == 1)
        *swap_ins = pages;
}

/* What only /proc tells about an ended process not yet reaped: the CPU
 * time of the children it waited for (cutime + cstime) and how long its
 * main thread waited in the run queue for a CPU. */
static void read_ended(pid_t pid, launch_result *r)
{
    char buf[1024];
    unsigned long long on_cpu, waited;
    if (read_proc(pid, "schedstat", buf, sizeof buf) > 0 &&
        sscanf(buf, "%llu %llu", &on_cpu, &waited) == 2)
        r->run_delay = (double)waited * 1e-9;
    /* state ppid ... utime stime cutime cstime: cutime and cstime are
     * fields 16 and 17 of the line. */
    const char *p = sonde_proc_task_fields(pid, 0, buf, sizeof buf);
    long long cutime, cstime;
    long hz = sysconf(_SC_CLK_TCK);
    if (p && hz > 0 &&
        sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %lld %lld", &cutime,
               &cstime) == 2)
        r->children_cpu = (double)(cutime + cstime) / (double)hz;
}

/* Waits for pid to end without reaping it, reads what /proc knows of the
 * ended process, then reaps it with its resource usage.  0, or -1 with
 * errno. */
static int wait_end(pid_t pid, uint64_t begin, launch_result *r)
{
    siginfo_t info;
    int w;
    do
        w = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
    while (w < 0 && errno == EINTR);
    r->wall = (double)(sonde_clock_ns() - begin) * 1e-9;
    r->run_delay = r->children_cpu = -1;
    if (w == 0)
        read_ended(pid, r);
    pid_t reaped;
    do
        reaped = wait4(pid, &r->status, 0, &r->usage);
    while (reaped < 0 && errno == EINTR);
    return reaped < 0 ? -1 : 0;
}

int launch_run(char *const argv[], launch_result *r)
{
    /* Until the handlers are in place the signals they handle wait,
     * blocked here; the child gets the mask back before it execs. */
    sigset_t handled, mask;
    waiting_set(&handled);
    sigprocmask(SIG_BLOCK, &handled, &mask);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    r->start_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    double stall_before;
    long long swapped_before;
    memory_pressure(&stall_before, &swapped_before);
    uint64_t begin = sonde_clock_ns();
    pid_t pid = start(argv, &mask);
    if (pid < 0) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &mask, NULL);
        return cli_fail(-1, "cannot run Python '%s': %s (use --python PATH or set SONDE_PYTHON)",
                        argv[0], strerror(e));
    }
    struct sigaction old[NWAITING];
    waiting_begin(pid, old);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    int rc = wait_end(pid, begin, r);
    int e = errno;
    memory_pressure(&r->memory_stall, &r->swap_ins);
    r->memory_stall = r->memory_stall >= 0 && stall_before >= 0 ? r->memory_stall - stall_before
                                                                  : -1;
    r->swap_ins = r->swap_ins >= 0 && swapped_before >= 0 ? r->swap_ins - swapped_before : -1;
    waiting_end(old, &mask);
    if (rc < 0)
        cli_fail(0, "lost track of the program: %s", strerror(e));
    return rc;
}

int launch_exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fflush(NULL);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return SONDE_EXIT_FAILED;
}
