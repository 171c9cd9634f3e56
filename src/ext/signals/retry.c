/* retry.c - ending signals resent until their Python handler runs; see
 * retry.h. */
#include "retry.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

/* The signals handled here, each with the interpreter's C handler it
 * calls and its timer (made in the process that armed it). */
#define RETRY_MAX 4
static struct retry {
    int signum;
    struct sigaction python;
    timer_t timer;
    int timed;          /* timer made in this process */
} retries[RETRY_MAX];
static int nretries;    /* set with the GIL held; read by the handler */

static const struct itimerspec resend_in = { .it_value = { 0, 20 * 1000 * 1000 } };
static const struct itimerspec never = { { 0, 0 }, { 0, 0 } };

static void on_signal(int signum, siginfo_t *info, void *context)
{
    int saved = errno;
    for (int i = 0; i < nretries; i++) {
        struct retry *r = &retries[i];
        if (r->signum != signum)
            continue;
        if (r->python.sa_flags & SA_SIGINFO)
            r->python.sa_sigaction(signum, info, context);
        else if (r->python.sa_handler != SIG_DFL && r->python.sa_handler != SIG_IGN)
            r->python.sa_handler(signum);
        if (r->timed)
            timer_settime(r->timer, 0, &resend_in, NULL); /* async-signal-safe */
    }
    errno = saved;
}

/* r's timer, sending r->signum to this process.  0, or -1. */
static int make_timer(struct retry *r)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = r->signum;
    r->timed = timer_create(CLOCK_MONOTONIC, &ev, &r->timer) == 0;
    return r->timed ? 0 : -1;
}

PyObject *sonde_signals_retry(PyObject *mod, PyObject *signums)
{
    (void)mod;
    PyObject *seq = PySequence_Fast(signums, "_signals_retry takes a sequence of signal numbers");
    if (!seq)
        return NULL;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq); k++) {
        long signum = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, k));
        if (signum == -1 && PyErr_Occurred())
            goto fail;
        struct sigaction now, mine;
        if (signum <= 0 || signum >= NSIG || sigaction((int)signum, NULL, &now) < 0) {
            PyErr_Format(PyExc_ValueError, "_signals_retry: no signal %ld", signum);
            goto fail;
        }
        if (now.sa_flags & SA_SIGINFO ? now.sa_sigaction == on_signal
                                      : now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN)
            continue; /* sonde's already, or no handler to call */
        int i = 0;
        while (i < nretries && retries[i].signum != signum)
            i++;
        if (i == RETRY_MAX)
            continue;
        struct retry *r = &retries[i];
        if (r->timed)
            timer_delete(r->timer);
        r->timed = 0;
        r->signum = (int)signum;
        r->python = now;
        if (make_timer(r) < 0)
            continue; /* no timer: the interpreter's handler stays alone */
        if (i == nretries)
            nretries++;
        mine = now;
        mine.sa_flags |= SA_SIGINFO;
        mine.sa_sigaction = on_signal;
        sigaction((int)signum, &mine, NULL);
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    return NULL;
}

PyObject *sonde_signals_seen(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    for (int i = 0; i < nretries; i++)
        if (retries[i].timed)
            timer_settime(retries[i].timer, 0, &never, NULL);
    Py_RETURN_NONE;
}

PyObject *sonde_signals_after_fork(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    for (int i = 0; i < nretries; i++) {
        struct sigaction now;
        retries[i].timed = 0; /* the parent's timer is not this process's */
        if (sigaction(retries[i].signum, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
            now.sa_sigaction == on_signal)
            make_timer(&retries[i]);
    }
    Py_RETURN_NONE;
}
