/* legacy.c - per-thread C hooks up to 3.11; see legacy.h. */
#include "legacy.h"

#if PY_VERSION_HEX < 0x030C0000

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

int sonde_legacy_threading(int trace, PyObject *hook)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *r = threading ? PyObject_CallMethod(threading, trace ? "settrace" : "setprofile",
                                                  "O", hook)
                            : NULL;
    Py_XDECREF(threading);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

#endif
