/* ptrace.c - seize, interrupt, copy, detach; see ptrace.h. */
#include "ptrace.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../proc/task.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 1 when sonde's own child pid has ended (exited or killed, not merely
 * stopped): its status is the program's exit code, left for record's
 * wait, so it is only looked at here. */
static int own_child_ended(int pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT | WNOHANG) < 0)
        return 0;
    return si.si_pid == pid && si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED &&
           sonde_proc_task_parent(pid) == getpid();
}

/* Sleeps until one of sonde's children or tracees changes state (the
 * kernel sends SIGCHLD, which the capture keeps blocked so that it waits
 * here) or 2 ms pass, whichever is first. */
static void await_change(const sigset_t *chld)
{
    const struct timespec most = { 0, 2 * 1000 * 1000 };
    sigtimedwait(chld, NULL, &most);
}

/* 1 while sonde is thread tid's tracer, as /proc says, or when sonde
 * cannot open /proc's file to look (out of descriptors or memory says
 * nothing of the thread: the wait goes on). */
static int held_by_sonde(int pid, int tid)
{
    errno = 0;
    int tracer = sonde_proc_task_tracer(pid, tid);
    return tracer == getpid() ||
           (tracer == 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM));
}

/* Waits for *tid's stop after PTRACE_INTERRUPT.  Signals that arrive first
 * (signal-delivery stops) are handed on at once; the stop they end in is
 * as good as the interrupt's for reading.  The signal to deliver on
 * detach goes to *deliver.  0 when it stopped; -ESRCH when the thread
 * ended and nothing is left to detach; 1 when it exec'd: the thread that
 * called execve is the process's main thread now (*tid becomes pid), a
 * new program, still held and now stopped, to be let go unread.
 *
 * A thread that ends while sonde traces it stays a zombie that only sonde
 * sees, until sonde waits for it: only then does the kernel hand it to its
 * real parent (a multiprocessing pool that waits for a worker would wait
 * for ever).  So its end is waited for here, with one exception: the main
 * thread of sonde's own child is only looked at (own_child_ended).
 *
 * The wait never blocks on the thread's id alone: the kernel wakes a
 * waiter only for the id it waits on, and an exec takes ids away.  A
 * thread other than the main one that exec's takes the main thread's id,
 * and its stop comes under that id; the main thread, when another thread
 * exec's, is ended and released by the kernel without a word to sonde.
 * So the wait looks (WNOHANG), sleeps until something changes or 2 ms
 * pass, and asks /proc whether the thread it holds is still sonde's.
 * Returning with a thread still traced would leave it to stop at its
 * next signal, for ever: the wait ends only when nothing is held. */
static int wait_stop(int pid, int *tid, int *deliver, const sigset_t *chld)
{
    *deliver = 0;
    int exec_d = 0, slept = 0;
    for (;;) {
        if (*tid == pid && own_child_ended(pid))
            return -ESRCH;   /* left for record's wait */
        int status;
        pid_t r = waitpid(*tid, &status, __WALL | WNOHANG);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == *tid) {
            if (!WIFSTOPPED(status)) {
                /* exited or killed, and now its parent's to wait for; when
                 * that is sonde (its own child ended between the look above
                 * and this wait), this wait took its end: kept for record's */
                if (*tid == pid)
                    sonde_proc_reaped_keep(pid, status);
                return -ESRCH;
            }
            /* The interrupt (SIGTRAP), or a group stop (a stop signal):
             * detaching leaves the latter in it, as it should be.  Any
             * other stop is a signal's delivery: read here, the signal
             * delivered on detach. */
            if (status >> 16 != PTRACE_EVENT_STOP)
                *deliver = WSTOPSIG(status);
            return exec_d;
        }
        if (r < 0 && errno != ECHILD)
            return -ESRCH;
        if (r == 0) {
            if (!slept) {
                await_change(chld);
                slept = 1;
                continue;
            }
            slept = 0;
            if (held_by_sonde(pid, *tid))
                continue;   /* not stopped yet */
        }
        /* *tid is no longer sonde's to wait for. */
        if (*tid != pid && held_by_sonde(pid, pid)) {
            /* It exec'd and took the main thread's id; the interrupt is
             * asked again, in case the exec swallowed it. */
            *tid = pid;
            exec_d = 1;
            ptrace(PTRACE_INTERRUPT, pid, 0, 0);
            continue;
        }
        return -ESRCH;
    }
}

/* After a detach that found tid gone (it died while held: another thread
 * called exit, or a SIGKILL came), its end is waited for, as wait_stop
 * does: a thread that ends traced stays a zombie only sonde sees, and
 * holds its process's parent in wait for ever.  It may need a moment to
 * become one, so the wait polls, bounded by time (a leader whose other
 * threads live on cannot be waited for yet); the main thread of sonde's
 * own child is left for record's wait, which reaps it. */
static void wait_gone(int pid, int tid)
{
    if (tid == pid && sonde_proc_task_parent(pid) == getpid())
        return;
    const struct timespec pause = { 0, 2 * 1000 * 1000 };
    for (int tries = 0; tries < 500; tries++) {   /* at most about a second */
        int status;
        pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
        if (r == tid && tid == pid)
            sonde_proc_reaped_keep(pid, status);   /* as wait_stop keeps it */
        if (r == tid || (r < 0 && errno != EINTR))
            return;   /* waited for, or not sonde's to wait for */
        if (r == 0)
            nanosleep(&pause, NULL);
    }
}

/* The user registers in DWARF order. */
static void dwarf_regs(const struct user_regs_struct *r, uint64_t *out)
{
    const uint64_t v[SONDE_CFI_NREGS] = {
        r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
        r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip,
    };
    memcpy(out, v, sizeof v);
}

/* Copies up to st->cap bytes from the stack pointer; a thread's stack
 * ends where its mapping does, so a short read is the whole stack. */
static void copy_stack(int pid, sonde_native_stack *st)
{
    struct iovec local = { st->data, st->cap };
    struct iovec remote = { (void *)(uintptr_t)st->regs[SONDE_CFI_RSP], st->cap };
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    st->len = n > 0 ? (uint32_t)n : 0;
}

int sonde_native_ptrace_capture(int pid, int tid, sonde_native_stack *st, void (*held)(void *ctx),
                                void *ctx, uint64_t *stopped_ns)
{
    st->tid = tid;
    st->len = 0;
    sigset_t chld, mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &mask);
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        /* The kernel refuses a thread that is ending (EPERM, not ESRCH):
         * another thread's exec ends it, or its exit is under way.  Gone,
         * not a refusal. */
        char state = e == EPERM ? sonde_proc_task_state(pid, tid) : 0;
        return e == ESRCH || (e == EPERM && (state == 0 || state == 'Z' || state == 'X'))
                   ? -ESRCH : -EPERM;
    }
    uint64_t t0 = now_ns();
    int deliver = 0, rc = ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ? -ESRCH : 0;
    if (rc == 0)
        rc = wait_stop(pid, &tid, &deliver, &chld);
    struct user_regs_struct regs;
    if (rc == 0 && ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        rc = -EIO;
    if (rc == 0) {
        dwarf_regs(&regs, st->regs);
        copy_stack(pid, st);
        if (held)
            held(ctx);
    }
    /* Detach even after a failure: a stopped thread resumes.  One that
     * died meanwhile cannot be detached: its end is waited for. */
    if (ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)deliver) < 0 && errno == ESRCH &&
        rc != -ESRCH)   /* (wait_stop has waited for one that ended before its stop) */
        wait_gone(pid, tid);
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    if (stopped_ns)
        *stopped_ns = now_ns() - t0;
    return rc == 1 ? -ESRCH : rc;   /* one that exec'd is gone as the thread it was */
}
