/* hook_monitoring.c - feeds the tracer from sys.monitoring (CPython 3.12+).
 *
 * sonde takes the profiler tool id and registers C functions for the
 * events cProfile uses: PY_START, PY_RESUME and PY_THROW enter a Python
 * function; PY_RETURN, PY_YIELD and PY_UNWIND leave it; CALL enters a C
 * function (a builtin, or a method descriptor called on an object) and
 * C_RETURN / C_RAISE leave it.  Events fire in every thread; each thread
 * finds its state through a thread-local pointer checked against a global
 * generation, so a stale pointer from an earlier profile is never used.
 *
 * sonde takes tool id 4, which CPython leaves unassigned (the line tracer
 * has 3), and not PROFILER_ID: a program that runs cProfile itself gets
 * that one, and both record every event. */
#include "tracer.h"

#if PY_VERSION_HEX >= 0x030C0000

#include "../interp/monitoring.h"
#include "profiler.h"

#define TOOL_ID 4 /* neither the debugger's, coverage's, profilers', the optimizer's nor lines' */

/* Bumped when the hook goes in or out, so that a thread's record from an
 * earlier enable() is never used.  Protected by the GIL. */
static uint64_t active_generation;
static PyObject *missing;         /* sys.monitoring.MISSING; set once, GIL */
/* The calling thread's record, valid while tls_generation is
 * active_generation (thread-local; initial-exec: one instruction per
 * access instead of a __tls_get_addr call). */
static _Thread_local tracer_thread *tls_thread __attribute__((tls_model("initial-exec")));
static _Thread_local uint64_t tls_generation __attribute__((tls_model("initial-exec")));

static inline tracer_thread *current(void)
{
    tracer *t = tracer_active;
    if (!t || t->failed)
        return NULL;
    if (tls_generation == active_generation)
        return tls_thread;
    tracer_thread *th = tracer_attach(t, PyThread_get_thread_ident(),
                                      PyThread_get_thread_native_id());
    tls_thread = th;
    tls_generation = active_generation;
    return th;
}

static PyObject *on_py_enter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    tracer_thread *th = current();
    if (th && nargs >= 1 && PyCode_Check(args[0]))
        tracer_enter(th, args[0], NULL, args[0], NULL);
    Py_RETURN_NONE;
}

static PyObject *on_py_leave(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    tracer_thread *th = current();
    if (th && nargs >= 1)
        tracer_leave(th, args[0]);
    Py_RETURN_NONE;
}

/* The C function a CALL / C_RETURN / C_RAISE event is about, or NULL. */
static const void *c_key(tracer_thread *th, PyObject *const *args, Py_ssize_t nargs)
{
    if (!th || nargs < 4 || !th->owner->builtins)
        return NULL;
    const void *key = tracer_cfunc_key(args[2], args[3] == missing ? NULL : args[3]);
    return key && !profiler_is_own(key) ? key : NULL;
}

static PyObject *on_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    tracer_thread *th = current();
    const void *key = c_key(th, args, nargs);
    if (key)
        tracer_enter(th, key, NULL, args[2], args[3] == missing ? NULL : args[3]);
    Py_RETURN_NONE;
}

static PyObject *on_c_leave(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    tracer_thread *th = current();
    const void *key = c_key(th, args, nargs);
    if (key)
        tracer_leave(th, key);
    Py_RETURN_NONE;
}

#define CALLBACK(name, fn) \
    { name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, "sonde's " name " callback" }

/* Constant. */
static PyMethodDef callbacks[] = {
    CALLBACK("PY_START", on_py_enter),
    CALLBACK("PY_RESUME", on_py_enter),
    CALLBACK("PY_THROW", on_py_enter),
    CALLBACK("PY_RETURN", on_py_leave),
    CALLBACK("PY_YIELD", on_py_leave),
    CALLBACK("PY_UNWIND", on_py_leave),
    CALLBACK("CALL", on_call),
    CALLBACK("C_RETURN", on_c_leave),
    CALLBACK("C_RAISE", on_c_leave),
};
#define NCALLBACKS (sizeof callbacks / sizeof callbacks[0])

int hook_install(tracer *t)
{
    if (sonde_mon_call("use_tool_id", "(is)", TOOL_ID, "sonde") < 0) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_SetString(profiler_active_error,
                            "another tool holds sys.monitoring's tool id 4, which sonde "
                            "uses: free it before enabling sonde");
        }
        return -1;
    }
    long mask;
    if ((!missing && !(missing = sonde_mon_attr("MISSING"))) ||
        sonde_mon_register(TOOL_ID, callbacks, NCALLBACKS, 1, &mask) < 0) {
        saved_error saved = error_save();
        if (sonde_mon_call("free_tool_id", "(i)", TOOL_ID) < 0)
            PyErr_Clear();
        error_restore(saved);
        return -1;
    }
    active_generation++;
    if (sonde_mon_call("set_events", "(il)", TOOL_ID, mask) < 0) {
        saved_error saved = error_save();
        if (hook_remove(t) < 0)
            PyErr_Clear();
        error_restore(saved);
        return -1;
    }
    return 0;
}

void hook_pause_current(tracer *t)
{
    (void)t;
    tracer_thread *th = current();
    if (th)
        tracer_unwind(th);
    /* current() now answers NULL for this thread until the next enable. */
    tls_thread = NULL;
    tls_generation = active_generation;
}

tracer_thread *hook_current(tracer *t)
{
    (void)t;
    return current();
}

int hook_remove(tracer *t)
{
    (void)t;
    active_generation++;
    long mask;
    if (sonde_mon_call("set_events", "(ii)", TOOL_ID, 0) < 0 ||
        sonde_mon_register(TOOL_ID, callbacks, NCALLBACKS, 0, &mask) < 0)
        return -1;
    return sonde_mon_call("free_tool_id", "(i)", TOOL_ID);
}

#endif
