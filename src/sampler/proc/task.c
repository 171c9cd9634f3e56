/* task.c - a process's or a thread's state and parent; see task.h. */
#include "task.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/clock.h"

const char *sonde_proc_task_fields(int pid, int tid, char *buf, size_t size)
{
    char path[96];
    if (tid)
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    else
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t got = read(fd, buf, size - 1);
    close(fd);
    if (got <= 0)
        return NULL;
    buf[got] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] ? paren + 2 : NULL;
}

char sonde_proc_task_state(int pid, int tid)
{
    char buf[512];
    const char *fields = sonde_proc_task_fields(pid, tid, buf, sizeof buf);
    return fields ? fields[0] : 0;
}

int sonde_proc_task_parent(int pid)
{
    char buf[512];
    const char *fields = sonde_proc_task_fields(pid, 0, buf, sizeof buf);
    if (!fields || fields[1] != ' ')
        return 0;
    return atoi(fields + 2);
}

int sonde_proc_task_tracer(int pid, int tid)
{
    char path[96], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    const char *field = strstr(buf, "\nTracerPid:");
    return field ? atoi(field + strlen("\nTracerPid:")) : 0;
}

/* 1 when errno says that a file could not be opened for want of
 * descriptors or memory on sonde's side, which says nothing of the
 * process. */
static int out_of_descriptors(void)
{
    return errno == EMFILE || errno == ENFILE || errno == ENOMEM;
}

/* sonde_proc_alive's look at one instant: 1, 0, or -errno when sonde
 * could not look (out_of_descriptors). */
static int runs_now(int pid)
{
    errno = 0;
    char state = sonde_proc_task_state(pid, 0);
    if (!state && out_of_descriptors())
        return -errno;
    if (state != 'Z')
        return state != 0 && state != 'X';
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return out_of_descriptors() ? -errno : 0;
    int runs = 0;
    struct dirent *t;
    while (!runs && (t = readdir(tasks))) {
        int tid = atoi(t->d_name);
        if (tid <= 0)
            continue; /* the leader too: the exec'ing thread may have taken its id since */
        errno = 0;
        state = sonde_proc_task_state(pid, tid);
        if (!state && out_of_descriptors()) {
            /* sonde's shortage (the open directory took a descriptor of
             * its own), which says nothing of the thread */
            int err = errno;
            closedir(tasks);
            return -err;
        }
        runs = state && state != 'Z' && state != 'X';
    }
    closedir(tasks);
    return runs;
}

/* 1 when pid is a child of sonde's that has not exited, as the kernel
 * tells its parent (a group whose leader is a zombie while another thread
 * exec's has not), else 0.  Never reaps it. */
static int child_runs(int pid)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    return waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
}

/* How long the kernel's word that a child runs outweighs /proc showing no
 * thread alive: an exec takes far less, even on a loaded machine; a zombie
 * thread that a tracer has not reaped yet keeps the group from ending, and
 * must not keep sonde waiting for ever. */
#define CHILD_TRUSTED_NS (10 * 1000000000ull)

int sonde_proc_alive(int pid)
{
    /* The moment the exec'ing thread takes the leader's id, /proc can
     * show nothing alive (stat unreadable, or a zombie leader and no
     * other thread).  sonde's own child is asked of the kernel, whatever
     * the load (for at most CHILD_TRUSTED_NS while /proc disagrees); of
     * another process, an end is believed only when three looks 2 ms
     * apart agree.  A process that has ended stays ended.  (One sampler
     * thread calls this: the disagreement's start is static.) */
    static int disagreeing_pid;
    static uint64_t disagreeing_since;
    if (child_runs(pid)) {
        int runs = runs_now(pid);
        if (runs != 0) {
            disagreeing_pid = 0; /* the next disagreement has its own start */
            return runs;
        }
        uint64_t now = sonde_clock_ns();
        if (disagreeing_pid != pid) {
            disagreeing_pid = pid;
            disagreeing_since = now;
        }
        if (now - disagreeing_since < CHILD_TRUSTED_NS)
            return 1;
    } else if (disagreeing_pid == pid) {
        disagreeing_pid = 0;
    }
    for (int look = 0; look < 3; look++) {
        int runs = runs_now(pid);
        if (runs != 0)
            return runs;
        if (look < 2)
            nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 2000000 }, NULL);
    }
    return 0;
}

/* Only the sampling thread waits for children and tracees. */
static int reaped_pid, reaped_status;

void sonde_proc_reaped_keep(int pid, int status)
{
    reaped_pid = pid;
    reaped_status = status;
}

int sonde_proc_reaped_take(int pid, int *status)
{
    if (pid <= 0 || reaped_pid != pid)
        return 0;
    *status = reaped_status;
    reaped_pid = 0;
    return 1;
}
