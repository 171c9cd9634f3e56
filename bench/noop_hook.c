/* noop_hook.c - the cost floor of a deterministic profiler's hook.
 *
 * Installs a hook that does nothing, by the same mechanism sonde uses on
 * this interpreter: PyEval_SetProfile up to 3.11, sys.monitoring with the
 * same nine events from 3.12.  bench_run.py builds it for each interpreter
 * and reports its added time beside sonde's: what no profiler built on
 * that hook can go below. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000
static int noop_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj, (void)frame, (void)what, (void)arg;
    return 0;
}

static PyObject *on(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    PyEval_SetProfile(noop_profile, NULL);
    Py_RETURN_NONE;
}

static PyObject *off(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    PyEval_SetProfile(NULL, NULL);
    Py_RETURN_NONE;
}
#else
static PyObject *noop_callback(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self, (void)args, (void)n;
    Py_RETURN_NONE;
}

static PyMethodDef callback_def = {
    "noop", (PyCFunction)(void (*)(void))noop_callback, METH_FASTCALL, NULL
};

static const char *const events[] = {
    "PY_START", "PY_RESUME", "PY_THROW", "PY_RETURN", "PY_YIELD", "PY_UNWIND",
    "CALL", "C_RETURN", "C_RAISE",
};

/* sys.monitoring.<name>(*args) via a format string; 0 or -1. */
static int monitoring_call(const char *name, const char *fmt, ...)
{
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *mon = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    PyObject *fn = mon ? PyObject_GetAttrString(mon, name) : NULL;
    va_list ap;
    va_start(ap, fmt);
    PyObject *args = fn ? Py_VaBuildValue(fmt, ap) : NULL;
    va_end(ap);
    PyObject *r = args ? PyObject_CallObject(fn, args) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(args);
    Py_XDECREF(fn);
    Py_XDECREF(mon);
    Py_XDECREF(sys);
    return r ? 0 : -1;
}

static long event_bit(const char *name)
{
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *mon = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    PyObject *ev = mon ? PyObject_GetAttrString(mon, "events") : NULL;
    PyObject *v = ev ? PyObject_GetAttrString(ev, name) : NULL;
    long bit = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    Py_XDECREF(ev);
    Py_XDECREF(mon);
    Py_XDECREF(sys);
    return bit;
}

static PyObject *on(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    PyObject *cb = PyCFunction_New(&callback_def, NULL);
    long mask = 0;
    if (!cb || monitoring_call("use_tool_id", "(is)", 2, "noop") < 0)
        goto fail;
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        long bit = event_bit(events[i]);
        if (bit < 0 || monitoring_call("register_callback", "(ilO)", 2, bit, cb) < 0)
            goto fail;
        mask |= bit;
    }
    if (monitoring_call("set_events", "(il)", 2, mask) < 0)
        goto fail;
    Py_DECREF(cb);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(cb);
    return NULL;
}

static PyObject *off(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    if (monitoring_call("set_events", "(ii)", 2, 0) < 0 ||
        monitoring_call("free_tool_id", "(i)", 2) < 0)
        return NULL;
    Py_RETURN_NONE;
}
#endif

static PyMethodDef methods[] = {
    { "on", on, METH_NOARGS, "Install the no-op hook." },
    { "off", off, METH_NOARGS, "Remove it." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "noop_hook", "A profiling hook that does nothing.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_noop_hook(void)
{
    return PyModule_Create(&module);
}
