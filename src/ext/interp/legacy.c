/* legacy.c - per-thread C hooks up to 3.11; see legacy.h. */
#include "legacy.h"

#if PY_VERSION_HEX < 0x030C0000

#include <stdlib.h>

#include "../../core/grow.h"
#include "pyerr.h"

int sonde_legacy_set(PyThreadState *ts, int trace, Py_tracefunc func, PyObject *obj)
{
    if (ts == PyThreadState_Get()) {
        if (trace)
            PyEval_SetTrace(func, obj);
        else
            PyEval_SetProfile(func, obj);
        return 0;
    }
#if PY_VERSION_HEX >= 0x03090000
    return trace ? _PyEval_SetTrace(ts, func, obj) : _PyEval_SetProfile(ts, func, obj);
#else
    /* 3.8 has no call for another thread: do what PyEval_SetProfile does. */
    Py_tracefunc *slot = trace ? &ts->c_tracefunc : &ts->c_profilefunc;
    PyObject **obj_slot = trace ? &ts->c_traceobj : &ts->c_profileobj;
    PyObject *old = *obj_slot;
    *slot = NULL;
    *obj_slot = NULL;
    ts->use_tracing = ts->c_tracefunc != NULL || ts->c_profilefunc != NULL;
    Py_XDECREF(old);
    Py_XINCREF(obj);
    *obj_slot = obj;
    *slot = func;
    ts->use_tracing = ts->c_tracefunc != NULL || ts->c_profilefunc != NULL;
    return 0;
#endif
}

int sonde_legacy_threading_hook(int trace, PyObject *hook)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *r = threading ? PyObject_CallMethod(threading, trace ? "settrace" : "setprofile",
                                                  "O", hook)
                            : NULL;
    Py_XDECREF(threading);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

int sonde_legacy_install(int trace, PyObject *thread_hook, sonde_legacy_thread_fn hook,
                         sonde_legacy_thread_fn unhook, void *arg)
{
    int rc = sonde_legacy_threading_hook(trace, thread_hook);
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts && rc == 0;
         ts = PyThreadState_Next(ts))
        rc = hook(ts, arg);
    if (rc < 0) {
        saved_error saved = error_save();
        if (sonde_legacy_remove(trace, unhook, arg) < 0)
            PyErr_Clear();
        error_restore(saved);
    }
    return rc;
}

/* Keeps the first failure's exception in *first, drops later ones. */
static void keep_first(int *failed, saved_error *first)
{
    if ((*failed)++ == 0)
        *first = error_save();
    else
        PyErr_Clear();
}

int sonde_legacy_remove(int trace, sonde_legacy_thread_fn unhook, void *arg)
{
    int failed = 0;
    saved_error first = { 0 };
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts))
        if (unhook(ts, arg) < 0)
            keep_first(&failed, &first);
    if (sonde_legacy_threading_hook(trace, Py_None) < 0)
        keep_first(&failed, &first);
    if (failed)
        error_restore(first);
    return failed ? -1 : 0;
}

/* Appends f and its code to the arrays; 0, or -1 on out of memory. */
static int push(PyFrameObject *f, PyObject ***frames, PyObject ***codes, size_t *count, size_t *cap)
{
    if (*count == *cap) {
        /* Both arrays grow alike, from the same capacity to the same one. */
        size_t frames_cap = *cap, codes_cap = *cap;
        PyObject **fs = sonde_grow(*frames, &frames_cap, *count + 1, sizeof *fs, (size_t)1 << 24);
        if (!fs)
            return -1;
        *frames = fs;
        PyObject **cs = sonde_grow(*codes, &codes_cap, *count + 1, sizeof *cs, (size_t)1 << 24);
        if (!cs)
            return -1;
        *codes = cs;
        *cap = codes_cap;
    }
    (*frames)[*count] = (PyObject *)f;
    (*codes)[(*count)++] = (PyObject *)sonde_frame_code(f);
    return 0;
}

int sonde_legacy_stack(PyThreadState *ts, PyObject ***frames, PyObject ***codes, uint32_t *n)
{
    PyObject **fs = NULL, **cs = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
#if PY_VERSION_HEX >= 0x03090000
    PyFrameObject *f = PyThreadState_GetFrame(ts);
#else
    PyFrameObject *f = ts->frame;
    Py_XINCREF(f);
#endif
    while (f && rc == 0) {
        rc = push(f, &fs, &cs, &count, &cap);
#if PY_VERSION_HEX >= 0x03090000
        PyFrameObject *back = PyFrame_GetBack(f);
#else
        PyFrameObject *back = f->f_back;
        Py_XINCREF(back);
#endif
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    PyErr_Clear(); /* making a frame object (3.11) may have run out of memory */
    if (rc < 0) {
        free(fs);
        free(cs);
        return -1;
    }
    for (size_t i = 0; i < count / 2; i++) { /* innermost first -> outermost first */
        size_t j = count - 1 - i;
        PyObject *t = fs[i];
        fs[i] = fs[j];
        fs[j] = t;
        t = cs[i];
        cs[i] = cs[j];
        cs[j] = t;
    }
    *frames = fs;
    *codes = cs;
    *n = (uint32_t)count;
    return 0;
}

#endif
