/* ptrace.c - seize, interrupt, copy, detach; see ptrace.h. */
#include "ptrace.h"

#include <errno.h>
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

/* Waits for tid's stop after PTRACE_INTERRUPT.  Signals that arrive first
 * (signal-delivery stops) are handed on at once; the stop they end in is
 * as good as the interrupt's for reading.  The signal to deliver on
 * detach goes to *deliver.  0, or -ESRCH when the thread ended.
 *
 * A thread that ends while sonde traces it stays a zombie that only sonde
 * sees, until sonde waits for it: only then does the kernel hand it to its
 * real parent (a multiprocessing pool that waits for a worker would wait
 * for ever).  So its end is waited for here, with one exception: the main
 * thread of sonde's own child is only looked at, since its status is the
 * program's exit code, for record's own wait.  Waiting is only ever cut
 * short by sonde's own signals, and then resumed: returning with the
 * thread still traced would leave it to stop at its next signal, for ever. */
static int wait_stop(int pid, int tid, int *deliver)
{
    *deliver = 0;
    for (;;) {
        int status;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (tid == pid) {
            if (waitid(P_PID, (id_t)tid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT) < 0) {
                if (errno == EINTR)
                    continue;
                return -ESRCH;
            }
            if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED &&
                sonde_proc_task_parent(pid) == getpid())
                return -ESRCH; /* sonde's child ended: left for record's wait */
        }
        if (waitpid(tid, &status, __WALL) < 0) {
            if (errno == EINTR)
                continue;
            return -ESRCH;
        }
        if (!WIFSTOPPED(status))
            return -ESRCH;   /* exited or killed, and now its parent's to wait for */
        int sig = WSTOPSIG(status);
        if (status >> 16 == PTRACE_EVENT_STOP) {
            /* The interrupt (SIGTRAP), or a group stop (a stop signal):
             * detaching leaves the latter in it, as it should be. */
            return 0;
        }
        /* A signal-delivery stop: read here, deliver it on detach. */
        *deliver = sig;
        return 0;
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
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
        return errno == ESRCH ? -ESRCH : -EPERM;
    uint64_t t0 = now_ns();
    int deliver = 0, rc = ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ? -ESRCH : 0;
    if (rc == 0)
        rc = wait_stop(pid, tid, &deliver);
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
    if (stopped_ns)
        *stopped_ns = now_ns() - t0;
    return rc;
}
