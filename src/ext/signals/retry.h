/* retry.h - an ending signal (SIGTERM, SIGHUP) that sonde's launcher
 * catches reaches its Python handler even when it comes just before the
 * main thread blocks in a call no later signal would interrupt.
 *
 * The interpreter's C handler only sets a flag, checked when the main
 * thread next runs Python code.  A signal that lands between that check
 * and a blocking system call (a pool worker about to wait on its queue's
 * semaphore, which its parent holds while it terminates the pool) leaves
 * the flag set and the thread blocked for ever: the worker never ends, and
 * its parent waits for it for ever; a bare run ends at once by the
 * signal's default action.  For each signal given, sonde's C handler calls
 * the interpreter's, then arms a timer that sends the process the same
 * signal 20 ms later, again and again until the Python handler says it
 * runs (sonde_signals_seen): the next one interrupts the blocked call, and
 * the interpreter runs the handler then.  Timers do not outlive a fork:
 * a child re-arms its own (sonde_signals_after_fork).  A handler the
 * program sets later replaces sonde's C handler with the interpreter's. */
#ifndef SONDE_EXT_SIGNALS_RETRY_H
#define SONDE_EXT_SIGNALS_RETRY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* _sonde._signals_retry(signums): puts sonde's C handler over the
 * interpreter's for each (a Python handler must be set already). */
PyObject *sonde_signals_retry(PyObject *mod, PyObject *signums);
/* _sonde._signals_seen(): no more resends (the Python handler runs). */
PyObject *sonde_signals_seen(PyObject *mod, PyObject *unused);
/* _sonde._signals_after_fork(): the child's own timers, for the signals
 * whose handler is still sonde's. */
PyObject *sonde_signals_after_fork(PyObject *mod, PyObject *unused);

#endif
