/* demangle.c - C++ names in a bounded helper process; see demangle.h. */
#include "demangle.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* libstdc++'s demangler (cxxabi.h is C++ only). */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

#define GIVEN_UP_SLOTS 64u   /* names given up, remembered by hash */
#define NO_REPLY UINT32_MAX  /* a reply's length when the name keeps its mangled form */

/* The helper and the names given up; protected by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t helper_pid = -1;
static int helper_fd = -1;
static uint64_t given_up[GIVEN_UP_SLOTS];

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a; 0 marks an empty slot */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

static int was_given_up(uint64_t h)
{
    return given_up[h % GIVEN_UP_SLOTS] == h;
}

/* Sends (out) or receives all n bytes at p through the socket fd; 0, or
 * -1 once it fails or closes. */
static int move_all(int fd, char *p, size_t n, int out)
{
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
    return move_all(fd, (char *)(uintptr_t)buf, n, 1); /* send only reads it */
}

static int read_all(int fd, void *buf, size_t n)
{
    return move_all(fd, buf, n, 0);
}

/* The helper's loop: requests ([length][room][name]) in, replies
 * ([length, or NO_REPLY][text, cut to room]) out, until fd closes. */
static void serve(int fd)
{
    static char name[SONDE_DEMANGLE_MAX_MANGLED + 1];
    uint32_t head[2];
    while (read_all(fd, head, sizeof head) == 0 && head[0] <= SONDE_DEMANGLE_MAX_MANGLED &&
           read_all(fd, name, head[0]) == 0) {
        name[head[0]] = '\0';
        int status = -1;
        char *plain = __cxa_demangle(name, NULL, NULL, &status);
        size_t len = status == 0 && plain ? strlen(plain) : SIZE_MAX;
        uint32_t reply = len <= SONDE_DEMANGLE_MAX_NAME ? (uint32_t)len : NO_REPLY;
        if (reply != NO_REPLY && reply > head[1])
            reply = head[1];
        int rc = write_all(fd, &reply, sizeof reply);
        if (rc == 0 && reply != NO_REPLY)
            rc = write_all(fd, plain, reply);
        free(plain);
        if (rc < 0)
            break;
    }
    _exit(0);
}

/* The helper's address space limit: sonde's own (it is a copy) and the
 * demangler's allowance. */
static rlim_t memory_limit(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + SONDE_DEMANGLE_MAX_MEMORY;
}

/* In the helper: keeps only fd (as 0), so that no pipe or file of sonde's
 * is held open by it (a reader waiting for its end would wait for it). */
static int keep_only(int fd)
{
    if (dup2(fd, 0) < 0)
        return -1;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int mine = dirfd(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        int n = atoi(e->d_name);
        if (n > 0 && n != mine)
            close(n);
    }
    closedir(d);
    return 0;
}

/* Forks the helper.  0, or -1. */
static int start_helper(void)
{
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
        return -1;
    struct rlimit as = { memory_limit(), RLIM_INFINITY };
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        close(fds[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        as.rlim_max = as.rlim_cur;
        if (getppid() != parent || keep_only(fds[1]) < 0 || setrlimit(RLIMIT_AS, &as) < 0)
            _exit(0);
        serve(0);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    helper_pid = pid;
    helper_fd = fds[0];
    return 0;
}

static void stop_helper(void)
{
    kill(helper_pid, SIGKILL);
    while (waitpid(helper_pid, NULL, 0) < 0 && errno == EINTR)
        ;
    close(helper_fd);
    helper_pid = -1;
    helper_fd = -1;
}

/* CLOCK_MONOTONIC, or the helper's CPU clock, in milliseconds. */
static int64_t ms_of(clockid_t clock)
{
    struct timespec t = { 0, 0 };
    clock_gettime(clock, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A reply's limits: the wall deadline, and the helper's CPU clock and the
 * CPU time it may reach. */
typedef struct limits {
    int64_t deadline;
    clockid_t cpu;
    int64_t cpu_stop;
} limits;

#define POLL_SLICE_MS 20   /* how often the helper's CPU time is looked at */

/* Reads n bytes from the helper within lim.  0, or -1. */
static int read_within(void *buf, size_t n, const limits *lim)
{
    for (char *p = buf; n;) {
        struct pollfd pfd = { .fd = helper_fd, .events = POLLIN };
        int64_t left = lim->deadline - ms_of(CLOCK_MONOTONIC);
        if (left <= 0 || ms_of(lim->cpu) >= lim->cpu_stop)
            return -1;
        int ready = poll(&pfd, 1, (int)(left < POLL_SLICE_MS ? left : POLL_SLICE_MS));
        if (ready == 0 || (ready < 0 && errno == EINTR))
            continue;
        ssize_t r = ready > 0 ? read(helper_fd, p, n) : -1;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Asks the helper for name's demangled form into out (room bytes and a
 * NUL).  1 when it gave one, 0 when the name keeps its mangled form, -1
 * when the helper failed (it is stopped). */
static int ask(const char *name, size_t len, char *out, uint32_t room)
{
    uint32_t head[2] = { (uint32_t)len, room }, reply;
    limits lim = { .deadline = ms_of(CLOCK_MONOTONIC) + SONDE_DEMANGLE_DEADLINE_MS };
    if (clock_getcpuclockid(helper_pid, &lim.cpu) != 0) {
        stop_helper();
        return -1;
    }
    lim.cpu_stop = ms_of(lim.cpu) + SONDE_DEMANGLE_CPU_MS;
    if (write_all(helper_fd, head, sizeof head) < 0 || write_all(helper_fd, name, len) < 0 ||
        read_within(&reply, sizeof reply, &lim) < 0 ||
        (reply != NO_REPLY && (reply > room || read_within(out, reply, &lim) < 0))) {
        stop_helper();
        return -1;
    }
    if (reply == NO_REPLY)
        return 0;
    out[reply] = '\0';
    return 1;
}

int sonde_native_demangle(const char *name, char *out, size_t outlen)
{
    if (!outlen)
        return 0;
    snprintf(out, outlen, "%s", name);
    size_t len = strlen(name);
    if (strncmp(name, "_Z", 2) != 0 || len > SONDE_DEMANGLE_MAX_MANGLED)
        return 0;
    char *plain = malloc(outlen);
    if (!plain)
        return 0;
    uint64_t h = hash_name(name);
    uint32_t room = outlen - 1 > SONDE_DEMANGLE_MAX_NAME ? SONDE_DEMANGLE_MAX_NAME
                                                         : (uint32_t)(outlen - 1);
    int got = 0;
    pthread_mutex_lock(&lock);
    if (!was_given_up(h) && (helper_pid > 0 || start_helper() == 0)) {
        got = ask(name, len, plain, room);
        if (got <= 0)
            given_up[h % GIVEN_UP_SLOTS] = h;
    }
    pthread_mutex_unlock(&lock);
    if (got > 0)
        memcpy(out, plain, strlen(plain) + 1);
    free(plain);
    return got > 0;
}
