/* user_timer.c - the program's own clock for the tracer: cProfile's
 * `timer` and `timeunit`.
 *
 * Profile(time.process_time) counts CPU time instead of wall time: the
 * callable is called at every call and return the tracer records, exactly
 * as cProfile calls it (per event, over sonde's own clock: ~50 ns for
 * time.perf_counter, ~100 ns for a timer written in Python, ~650 ns for
 * time.process_time, which the kernel answers).  Its value is read as cProfile reads it: with
 * timeunit > 0 an int counted in units of that many seconds, else a
 * number of seconds (int or float), kept as nanoseconds.
 *
 * The timer runs inside the interpreter's hooks, which must never raise:
 * its first failure (an exception, a value that is not a number) is kept,
 * recording stops there (t->failed), and disable() raises it -- once,
 * where cProfile reports one unraisable error per event and goes on with
 * a time of 0. */
#include "tracer.h"

#include <math.h>

/* The timer's value v in ticks: 0, or -1 with an exception. */
static int to_ticks(const tracer *t, PyObject *v, uint64_t *ticks)
{
    if (t->timer.unit > 0) {
        if (!PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "the profiler's timer returned %.200s, not an int "
                         "(with a timeunit, it counts in ints)", Py_TYPE(v)->tp_name);
            return -1;
        }
        long long n = PyLong_AsLongLong(v);
        if (n == -1 && PyErr_Occurred())
            return -1;
        *ticks = (uint64_t)n;
        return 0;
    }
    double seconds = PyFloat_AsDouble(v);
    if (seconds == -1.0 && PyErr_Occurred())
        return -1;
    double ns = floor(seconds * 1e9);
    if (!(ns >= -9.2e18 && ns <= 9.2e18)) { /* NaN too */
        PyErr_Format(PyExc_ValueError, "the profiler's timer returned %R seconds", v);
        return -1;
    }
    *ticks = (uint64_t)(int64_t)ns;
    return 0;
}

/* Keeps the exception set now as the timer's first failure. */
static void fail(tracer *t)
{
    saved_error e = error_save();
    if (t->timer.error) {
        error_restore(e);
        PyErr_Clear();
        return;
    }
#if PY_VERSION_HEX >= 0x030C0000
    t->timer.error = e.exc;
#else
    PyErr_NormalizeException(&e.type, &e.value, &e.tb);
    if (e.tb && e.value)
        PyException_SetTraceback(e.value, e.tb);
    Py_XDECREF(e.type);
    Py_XDECREF(e.tb);
    t->timer.error = e.value;
#endif
    t->failed = 1;
}

uint64_t tracer_timer_read(tracer *t)
{
    if (t->timer.error)
        return t->timer.last;
    saved_error saved = error_save();
    PyObject *fn = t->timer.fn;
    Py_INCREF(fn); /* the timer may clear its own profiler's reference */
    t->timer.calling++;
    PyObject *v = PyObject_CallObject(fn, NULL);
    t->timer.calling--;
    Py_DECREF(fn);
    uint64_t ticks;
    if (v && to_ticks(t, v, &ticks) == 0)
        t->timer.last = ticks;
    else
        fail(t);
    Py_XDECREF(v);
    error_restore(saved);
    return t->timer.last;
}

int tracer_timer_set(tracer *t, PyObject *fn, double unit)
{
    if (fn && !PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "timer must be callable, not %.200s",
                     Py_TYPE(fn)->tp_name);
        return -1;
    }
    if (!(unit >= 0 && isfinite(unit))) {
        PyErr_SetString(PyExc_ValueError, "timeunit must be a finite number of seconds >= 0 "
                        "(0: the timer returns seconds)");
        return -1;
    }
    tracer_timer_clear(t);
    Py_XINCREF(fn);
    t->timer.fn = fn;
    t->timer.unit = unit;
    return 0;
}

void tracer_timer_clear(tracer *t)
{
    Py_CLEAR(t->timer.fn);
    Py_CLEAR(t->timer.error);
    t->timer.unit = 0;
    t->timer.last = 0;
}
