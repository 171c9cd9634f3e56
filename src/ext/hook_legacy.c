/* hook_legacy.c - feeds the tracer from PyEval_SetProfile (CPython < 3.12).
 *
 * The profile function is per thread, so each thread gets a small handle
 * object as the hook's argument that points at its tracer_thread: the
 * callback finds its state with one load.  Threads running at enable()
 * get the hook directly; threads started later get it from
 * threading.setprofile, whose first call swaps in the C-level hook. */
#include "tracer.h"

#if PY_VERSION_HEX < 0x030C0000

#include <string.h>

#include "legacy.h"

typedef struct handle_object {
    PyObject_HEAD
    tracer_thread *th;
} handle_object;

static PyTypeObject handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sonde._sonde.ThreadHandle",
    .tp_basicsize = sizeof(handle_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A thread's hook state while sonde profiles it.",
};

static tracer *active;          /* the enabled tracer; protected by the GIL */
static PyObject *thread_hook;   /* what threading.setprofile was given */

static int callback(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    tracer_thread *th = ((handle_object *)obj)->th;
    tracer *t = th->owner;
    if (t->failed)
        return 0;
    switch (what) {
    case PyTrace_CALL: {
        PyCodeObject *code = sonde_frame_code(frame);
        tracer_enter(th, code, (PyObject *)code, NULL);
        break;
    }
    case PyTrace_RETURN:
        tracer_leave(th);
        break;
    case PyTrace_C_CALL:
        if (t->builtins && PyCFunction_Check(arg)) {
            const void *key = ((PyCFunctionObject *)arg)->m_ml;
            if (!tracer_is_own(key))
                tracer_enter(th, key, arg, NULL);
        }
        break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
        if (t->builtins && PyCFunction_Check(arg) &&
            !tracer_is_own(((PyCFunctionObject *)arg)->m_ml))
            tracer_leave(th);
        break;
    }
    return 0;
}

static PyObject *new_handle(tracer_thread *th)
{
    handle_object *h = PyObject_New(handle_object, &handle_type);
    if (h)
        h->th = th;
    return (PyObject *)h;
}

static int hook_thread(tracer *t, PyThreadState *ts, unsigned long native_id)
{
    tracer_thread *th = tracer_attach(t, ts->thread_id, native_id);
    PyObject *h = th ? new_handle(th) : NULL;
    if (!h) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    int rc = sonde_legacy_set(ts, 0, callback, h);
    Py_DECREF(h);
    return rc;
}

/* threading.setprofile's hook: runs once at the start of each new thread,
 * puts the C-level hook in its place and hands it the current event. */
static PyObject *on_thread_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyThreadState *ts = PyThreadState_Get();
    if (!active || nargs != 3 || !PyUnicode_Check(args[1])) {
        PyEval_SetProfile(NULL, NULL);
        Py_RETURN_NONE;
    }
    if (hook_thread(active, ts, PyThread_get_thread_native_id()) < 0)
        return NULL;
    const char *event = PyUnicode_AsUTF8(args[1]);
    int what = !event ? -1
               : strcmp(event, "call") == 0 ? PyTrace_CALL
               : strcmp(event, "c_call") == 0 ? PyTrace_C_CALL : -1;
    if (what >= 0 && ts->c_profileobj)
        callback(ts->c_profileobj, (PyFrameObject *)args[0], what, args[2]);
    Py_RETURN_NONE;
}

static PyMethodDef thread_start_def = {
    "_sonde_thread_start", (PyCFunction)(void (*)(void))on_thread_start,
    METH_FASTCALL, "Installs sonde's hook in a new thread."
};

int hook_install(tracer *t)
{
    if (PyType_Ready(&handle_type) < 0)
        return -1;
    if (!thread_hook && !(thread_hook = PyCFunction_New(&thread_start_def, NULL)))
        return -1;
    /* Threads started from now on; set first so the call is not recorded. */
    active = t;
    if (sonde_legacy_threading(0, thread_hook) < 0)
        return -1;
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts)) {
#if PY_VERSION_HEX >= 0x030B0000
        unsigned long native = ts == me ? PyThread_get_thread_native_id()
                                        : ts->native_thread_id;
#else
        unsigned long native = ts == me ? PyThread_get_thread_native_id() : 0;
#endif
        if (hook_thread(t, ts, native) < 0)
            return -1;
    }
    return 0;
}

void hook_pause_current(tracer *t)
{
    (void)t;
    PyThreadState *ts = PyThreadState_Get();
    if (ts->c_profilefunc != callback)
        return;
    tracer_unwind(((handle_object *)ts->c_profileobj)->th);
    PyEval_SetProfile(NULL, NULL);
}

int hook_remove(tracer *t)
{
    (void)t;
    active = NULL;
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts->c_profilefunc == callback)
            sonde_legacy_set(ts, 0, NULL, NULL);
    return sonde_legacy_threading(0, Py_None);
}

#endif
