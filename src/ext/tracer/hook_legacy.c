/* hook_legacy.c - feeds the tracer from PyEval_SetProfile (CPython < 3.12).
 *
 * The profile function is per thread; its argument is the Profiler object
 * itself, so that sys.getprofile() answers the profiler, as cProfile's
 * does.  The callback finds the thread's tracer_thread through a
 * thread-local pointer checked against a generation bumped when the hook
 * goes in or out (one search of the tracer's threads per thread and
 * enable()).  Threads running at enable() get the hook directly; threads
 * started later get it from threading.setprofile, whose first call swaps
 * in the C-level hook.
 *
 * A program may set a profile function of its own (cProfile.enable,
 * sys.setprofile), which takes the thread's one slot from sonde.  Each
 * change raises the "sys.setprofile" audit event just before it happens;
 * sonde's audit hook then asks for a check right after it (a pending
 * call, which the main thread runs at its next eval-loop check).  The
 * check gives sonde's hook back to every thread that lost it: alone where
 * the slot was emptied or given the profiler back (sys.setprofile of what
 * sys.getprofile() answered), else chained to the program's function,
 * which then sees every event as before.  Events between the change and
 * the check are not seen: the thread's open calls are made those of its
 * Python stack again (tracer_resync). */
#include "tracer.h"

#if PY_VERSION_HEX < 0x030C0000

#include <stdlib.h>
#include <string.h>

#include "../interp/legacy.h"
#include "profiler.h"

/* Bumped when the hook goes in or out, so that a thread's record from an
 * earlier enable() is never used.  Protected by the GIL. */
static uint64_t hook_generation;
/* The calling thread's record, valid while tls_generation is
 * hook_generation (thread-local). */
static _Thread_local tracer_thread *tls_thread __attribute__((tls_model("initial-exec")));
static _Thread_local uint64_t tls_generation __attribute__((tls_model("initial-exec")));

static PyObject *thread_hook;   /* what threading.setprofile is given; made once, GIL */
static int changing;            /* sonde sets a profile function itself; protected by the GIL */
static int check_pending;       /* a check is queued; protected by the GIL */

static void record(tracer_thread *th, PyFrameObject *frame, int what, PyObject *arg)
{
    tracer *t = th->owner;
    switch (what) {
    case PyTrace_CALL: {
        PyCodeObject *code = sonde_frame_code(frame);
        tracer_enter(th, code, frame, (PyObject *)code, NULL);
        break;
    }
    case PyTrace_RETURN:
        tracer_leave(th, sonde_frame_code(frame));
        break;
    case PyTrace_C_CALL:
        if (t->builtins && PyCFunction_Check(arg)) {
            const void *key = ((PyCFunctionObject *)arg)->m_ml;
            if (!profiler_is_own(key))
                tracer_enter(th, key, NULL, arg, NULL);
        }
        break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
        if (t->builtins && PyCFunction_Check(arg)) {
            const void *key = ((PyCFunctionObject *)arg)->m_ml;
            if (!profiler_is_own(key))
                tracer_leave(th, key);
        }
        break;
    }
}

/* The record of the thread ts runs, made by this enable (the newest with
 * that ident), or NULL. */
static tracer_thread *thread_of(tracer *t, PyThreadState *ts)
{
    for (tracer_thread *th = t->threads; th; th = th->next)
        if (th->ident == ts->thread_id && th->generation == t->generation)
            return th;
    return NULL;
}

static int callback(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg);

/* The calling thread's record while sonde's hook is in it, else NULL. */
static tracer_thread *current(void)
{
    if (tls_generation == hook_generation && tls_thread)
        return tls_thread;
    tracer *t = tracer_active;
    PyThreadState *ts = PyThreadState_Get();
    tracer_thread *th = t && ts->c_profilefunc == callback ? thread_of(t, ts) : NULL;
    if (th) {
        tls_thread = th;
        tls_generation = hook_generation;
    }
    return th;
}

static int callback(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    tracer_thread *th = current();
    if (!th)
        return 0;
    if (!th->owner->failed)
        record(th, frame, what, arg);
    return th->chain ? th->chain(th->chain_obj, frame, what, arg) : 0;
}

/* Sets ts's profile function, without the audit hook asking for a check. */
static int set_profile(PyThreadState *ts, Py_tracefunc func, PyObject *obj)
{
    changing++;
    int rc = sonde_legacy_set(ts, 0, func, obj);
    changing--;
    return rc;
}

static int hook_thread(tracer *t, PyThreadState *ts, unsigned long native_id)
{
    if (!tracer_attach(t, ts->thread_id, native_id)) {
        PyErr_NoMemory();
        return -1;
    }
    return set_profile(ts, callback, t->owner);
}

/* threading.setprofile's hook: runs once at the start of each new thread,
 * puts the C-level hook in its place and hands it the current event. */
static PyObject *on_thread_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyThreadState *ts = PyThreadState_Get();
    if (!tracer_active || nargs != 3 || !PyUnicode_Check(args[1])) {
        set_profile(ts, NULL, NULL);
        Py_RETURN_NONE;
    }
    if (hook_thread(tracer_active, ts, PyThread_get_thread_native_id()) < 0)
        return NULL;
    const char *event = PyUnicode_AsUTF8(args[1]);
    int what = !event ? -1
               : strcmp(event, "call") == 0 ? PyTrace_CALL
               : strcmp(event, "c_call") == 0 ? PyTrace_C_CALL : -1;
    if (what >= 0 && ts->c_profileobj)
        callback(ts->c_profileobj, (PyFrameObject *)args[0], what, args[2]);
    Py_RETURN_NONE;
}

/* Constant. */
static PyMethodDef thread_start_def = {
    "_sonde_thread_start", (PyCFunction)(void (*)(void))on_thread_start,
    METH_FASTCALL, "Installs sonde's hook in a new thread."
};

/* ---- taking the hook back from a program's profiler ---- */

/* Whether ts needs sonde's hook back. */
static int lost(PyThreadState *ts)
{
    /* threading's hook in a new thread, about to put sonde's in place */
    return ts->c_profilefunc != callback && ts->c_profileobj != thread_hook;
}

/* Puts sonde's hook back in ts, chained to the profile function the
 * program left there (if any), with th's calls made ts's stack again. */
static void retake(tracer_thread *th, PyThreadState *ts, int running)
{
    tracer *t = th->owner;
    PyObject **frames = NULL, **codes = NULL;
    uint32_t n = 0;
    if (sonde_legacy_stack(ts, &frames, &codes, &n) < 0) {
        PyErr_Clear();
        t->failed = 1;
        return;
    }
    tracer_resync(th, frames, codes, n, running);
    free(frames);
    free(codes);
    /* sys.setprofile(sys.getprofile()) gave the profiler back: not chained. */
    int own = ts->c_profileobj == t->owner;
    PyObject *old = th->chain_obj;
    th->chain = own ? NULL : ts->c_profilefunc;
    th->chain_obj = own ? NULL : ts->c_profileobj;
    Py_XINCREF(th->chain_obj);
    Py_XDECREF(old);
    if (set_profile(ts, callback, t->owner) < 0)
        PyErr_Clear();
}

static int check(void *unused)
{
    (void)unused;
    check_pending = 0;
    tracer *t = tracer_active;
    if (!t || t->failed)
        return 0;
    saved_error saved = error_save();
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (!lost(ts))
            continue;
        tracer_thread *th = thread_of(t, ts);
        if (th && th->paused)
            continue;
        /* A thread sonde never hooked counts only once a profiler of the
         * program's runs in it. */
        if (!th && ts->c_profilefunc) {
#if PY_VERSION_HEX >= 0x030B0000
            th = tracer_attach(t, ts->thread_id, ts->native_thread_id);
#else
            th = tracer_attach(t, ts->thread_id, 0);
#endif
        }
        if (th)
            retake(th, ts, ts == me);
    }
    error_restore(saved);
    return 0;
}

/* "sys.setprofile" comes just before a thread's profile function changes:
 * a check is queued for just after. */
static int audit(const char *event, PyObject *args, void *unused)
{
    (void)args;
    (void)unused;
    if (tracer_active && !changing && !check_pending && strcmp(event, "sys.setprofile") == 0 &&
        Py_AddPendingCall(check, NULL) == 0)
        check_pending = 1;
    return 0;
}

/* Puts sonde's hook in thread ts (its record is made here). */
static int hook_any_thread(PyThreadState *ts, void *arg)
{
    PyThreadState *me = PyThreadState_Get();
#if PY_VERSION_HEX >= 0x030B0000
    unsigned long native = ts == me ? PyThread_get_thread_native_id() : ts->native_thread_id;
#else
    unsigned long native = ts == me ? PyThread_get_thread_native_id() : 0;
#endif
    return hook_thread(arg, ts, native);
}

/* Removes sonde's hook from ts (th its record, or NULL), leaving a
 * chained one of the program's. */
static void unhook(tracer_thread *th, PyThreadState *ts)
{
    Py_tracefunc next = th ? th->chain : NULL;
    PyObject *next_obj = th ? th->chain_obj : NULL;
    if (th) {
        th->chain = NULL;
        th->chain_obj = NULL;
    }
    set_profile(ts, next, next_obj);
    Py_XDECREF(next_obj);
}

static int unhook_any_thread(PyThreadState *ts, void *arg)
{
    if (ts->c_profilefunc == callback)
        unhook(thread_of(arg, ts), ts);
    return 0;
}

int hook_install(tracer *t)
{
    static int audit_added; /* audit hooks stay for the process's life; GIL */
    hook_generation++;
    if (!thread_hook && !(thread_hook = PyCFunction_New(&thread_start_def, NULL)))
        return -1;
    if (!audit_added) {
        if (PySys_AddAuditHook(audit, NULL) < 0)
            return -1;
        audit_added = 1;
    }
    return sonde_legacy_install(0, thread_hook, hook_any_thread, unhook_any_thread, t);
}

void hook_pause_current(tracer *t)
{
    (void)t;
    tracer_thread *th = current();
    if (!th)
        return;
    tracer_unwind(th);
    th->paused = 1;
    unhook(th, PyThreadState_Get());
    tls_thread = NULL; /* the hook is out: current() answers NULL here */
}

tracer_thread *hook_current(tracer *t)
{
    (void)t;
    return current();
}

int hook_remove(tracer *t)
{
    hook_generation++;
    return sonde_legacy_remove(0, unhook_any_thread, t);
}

#endif
