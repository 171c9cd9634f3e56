/* lines_chain.c - a program's own trace function beside sonde's line hook
 * (up to 3.11); see lines_chain.h. */
#include "lines_chain.h"

#if PY_VERSION_HEX < 0x030C0000

static void chain_dealloc(PyObject *self)
{
    Py_XDECREF(((trace_chain *)self)->obj);
    Py_TYPE(self)->tp_free(self);
}

/* Constant after the first chain is made; the GIL guards its readying. */
static PyTypeObject chain_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sonde._trace_chain",
    .tp_basicsize = sizeof(trace_chain),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = chain_dealloc,
    .tp_doc = "A program's trace function, which sonde's line hook passes events on to.",
};

PyObject *trace_chain_new(Py_tracefunc func, PyObject *obj)
{
    if (!(chain_type.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&chain_type) < 0)
        return NULL;
    trace_chain *c = PyObject_New(trace_chain, &chain_type);
    if (!c)
        return NULL;
    c->func = func;
    Py_XINCREF(obj);
    c->obj = obj;
    return (PyObject *)c;
}

int trace_chain_check(PyObject *o)
{
    return Py_TYPE(o) == &chain_type;
}

int trace_chain_pass(PyObject *chain, PyFrameObject *frame, int what, PyObject *arg)
{
    trace_chain *c = (trace_chain *)chain;
    Py_INCREF(chain); /* sys.settrace in the function would drop the slot's reference */
    int rc = c->func(c->obj, frame, what, arg);
    Py_DECREF(chain);
    return rc;
}

static Py_tracefunc sonde_hook;   /* sonde's trace function, while ours is in */
static PyObject *interpreters;    /* the interpreter's sys.gettrace, while ours is in */
static PyObject *ours;            /* ours, while it is in */

/* sys.gettrace, as a bare run answers it. */
static PyObject *gettrace(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyThreadState *ts = PyThreadState_Get();
    PyObject *obj = ts->c_traceobj;
    if (ts->c_tracefunc == sonde_hook)
        obj = trace_chain_check(obj) ? ((trace_chain *)obj)->obj : NULL;
    if (!obj)
        obj = Py_None;
    Py_INCREF(obj);
    return obj;
}

/* Constant. */
static PyMethodDef gettrace_def = {
    "gettrace", gettrace, METH_NOARGS,
    "Return the global debug tracing function set with sys.settrace."
};

int trace_chain_gettrace_install(Py_tracefunc hook)
{
    if (ours)
        return 0;
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *theirs = sys ? PyObject_GetAttrString(sys, "gettrace") : NULL;
    PyObject *mine = theirs ? PyCFunction_New(&gettrace_def, NULL) : NULL;
    int rc = mine ? PyObject_SetAttrString(sys, "gettrace", mine) : -1;
    Py_XDECREF(sys);
    if (rc < 0) {
        Py_XDECREF(theirs);
        Py_XDECREF(mine);
        return -1;
    }
    sonde_hook = hook;
    interpreters = theirs;
    ours = mine;
    return 0;
}

int trace_chain_gettrace_remove(void)
{
    if (!ours)
        return 0;
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *now = sys ? PyObject_GetAttrString(sys, "gettrace") : NULL;
    /* a program that put its own in since keeps it */
    int rc = !now ? -1 : now == ours ? PyObject_SetAttrString(sys, "gettrace", interpreters) : 0;
    Py_XDECREF(now);
    Py_XDECREF(sys);
    if (rc < 0)
        return -1;
    Py_CLEAR(interpreters);
    Py_CLEAR(ours);
    return 0;
}

#endif
