/* lines_legacy.c - the line tracer's events from PyEval_SetTrace (up to
 * 3.11): a C trace function in every thread, line events switched off in
 * frames whose code is not traced, opcode events on where instructions are
 * counted, and a program's own trace function kept running beside it
 * (lines_chain.h); a profile function that notices when the program puts
 * one in, and in memory mode recognises what the interpreter allocates
 * only because tracing is on.  See lines.h. */
#include "lines_state.h"

#if PY_VERSION_HEX < 0x030C0000

#include "../interp/legacy.h"
#include "../interp/pyerr.h"
#include "lines_chain.h"

/* Every code object's events come through the one hook already. */
int lines_watch(PyObject *code)
{
    (void)code;
    return 0;
}

/* The frame's last instruction, in code units. */
static long frame_unit(PyFrameObject *frame)
{
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetLasti(frame) / 2;
#elif PY_VERSION_HEX >= 0x030A0000
    return frame->f_lasti; /* 3.10 counts code units */
#else
    return frame->f_lasti / 2;
#endif
}

/* Spares a frame whose code is not traced its line events. */
static void no_line_events(PyFrameObject *frame)
{
#if PY_VERSION_HEX >= 0x030B0000
    static PyObject *name; /* "f_trace_lines", interned once; GIL */
    if (!name && !(name = PyUnicode_InternFromString("f_trace_lines")))
        PyErr_Clear();
    if (name && PyObject_SetAttr((PyObject *)frame, name, Py_False) < 0)
        PyErr_Clear();
#else
    frame->f_trace_lines = 0;
#endif
}

/* Asks the interpreter for an opcode event per instruction of frame. */
static void trace_opcodes(PyFrameObject *frame)
{
#if PY_VERSION_HEX >= 0x030B0000
    if (PyObject_SetAttrString((PyObject *)frame, "f_trace_opcodes", Py_True) < 0)
        PyErr_Clear();
#else
    frame->f_trace_opcodes = 1;
#endif
}

/* Whether a tracer counts the instructions of frame's code: sonde asked
 * for its opcode events, which the program's own function never did. */
static int counts_instructions(PyFrameObject *frame)
{
    for (int i = 0; i < lines_non; i++) {
        line_code *lc = lines_on[i]->failed ? NULL
                                            : lines_lookup(lines_on[i], sonde_frame_code(frame));
        if (lc && lc->ninstr)
            return 1;
    }
    return 0;
}

/* sonde's part of an event: each event goes to every enabled tracer (see
 * lines_state.h).  chained: the thread has a function of the program's,
 * which wants line events in every frame. */
static void own_event(PyFrameObject *frame, int what, int chained)
{
    if (lines_mem())
        mem_event();
    switch (what) {
    case PyTrace_CALL: {
#if PY_VERSION_HEX >= 0x030B0000
        /* 3.11 makes frame objects lazily, and this one for the hook.  A
         * frame is a GC object: its block starts with the collector's
         * header, two words before the object. */
        if (lines_mem())
            mem_forget((char *)frame - 2 * sizeof(void *));
#endif
        int traced = 0, opcodes = 0;
        for (int i = 0; i < lines_non; i++) {
            lines_tracer *t = lines_on[i];
            line_code *lc = t->failed ? NULL : lines_lookup(t, sonde_frame_code(frame));
            if (lc) {
                lines_enter(t, lc, frame);
                traced = 1;
                opcodes |= lc->ninstr != 0;
            }
        }
        if (opcodes)
            trace_opcodes(frame);
        if (!traced && !chained)
            no_line_events(frame);
        break;
    }
    case PyTrace_OPCODE:
        for (int i = 0; i < lines_non; i++)
            if (!lines_on[i]->failed)
                lines_on_instruction(lines_on[i], frame, sonde_frame_code(frame),
                                     frame_unit(frame));
        break;
    case PyTrace_LINE:
        for (int i = 0; i < lines_non; i++)
            if (!lines_on[i]->failed)
                lines_on_line(lines_on[i], frame, sonde_frame_code(frame),
                              PyFrame_GetLineNumber(frame));
        break;
    case PyTrace_RETURN:
        for (int i = 0; i < lines_non; i++)
            if (!lines_on[i]->failed)
                lines_leave(lines_on[i], frame);
        break;
    }
}

static int trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg);

/* Set while sonde itself sets a trace function (on_audit lets it pass).  GIL. */
static int setting;

/* Line events back on in every frame of the calling thread, for the
 * program's function that just came: sonde had switched them off in
 * frames it does not trace, and a debugger steps through those too. */
static void line_events_back(PyThreadState *ts)
{
    PyObject **frames, **codes;
    uint32_t n;
    if (sonde_legacy_stack(ts, &frames, &codes, &n) < 0)
        return;
    for (uint32_t i = 0; i < n; i++) {
#if PY_VERSION_HEX >= 0x030B0000
        if (PyObject_SetAttrString(frames[i], "f_trace_lines", Py_True) < 0)
            PyErr_Clear();
#else
        ((PyFrameObject *)frames[i])->f_trace_lines = 1;
#endif
    }
    free(frames);
    free(codes);
}

/* Puts sonde's trace function in thread ts's slot, where something else
 * is (or nothing): a function the program put there is passed every event
 * on from then on.  0, or -1 with an exception. */
static int take_slot(PyThreadState *ts)
{
    PyObject *obj;
    if (ts->c_tracefunc) {
        if (!(obj = trace_chain_new(ts->c_tracefunc, ts->c_traceobj)))
            return -1;
        if (ts == PyThreadState_Get())
            line_events_back(ts);
    } else {
        obj = (PyObject *)lines_on[0];
        Py_INCREF(obj);
    }
    setting = 1;
    int rc = sonde_legacy_set(ts, 1, trace, obj);
    setting = 0;
    Py_DECREF(obj);
    return rc;
}

/* The interpreter's trace hook in every thread: sonde's part, then the
 * program's function's, where the thread has one. */
static int trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    int chained = trace_chain_check(obj);
    own_event(frame, what, chained);
    if (!chained || (what == PyTrace_OPCODE && counts_instructions(frame)))
        return 0;
    int rc = trace_chain_pass(obj, frame, what, arg);
    /* the program's function put another in (sys.settrace from a
     * debugger's handler), or took itself out on an error */
    PyThreadState *ts = PyThreadState_Get();
    if (ts->c_tracefunc != trace && lines_non > 0 && take_slot(ts) < 0)
        PyErr_WriteUnraisable(NULL);
    return rc;
}

/* The interpreter's profile hook, in a thread whose trace slot a program
 * is about to take (see on_audit), and in memory mode in every thread
 * where the program has none.  It sees every call and return, C
 * functions' too (sys.settrace's own): where the program has put its
 * trace function in sonde's slot since the last event, sonde takes it
 * back, chaining the program's, and counts the call the program's
 * function had alone; outside memory mode it then takes itself out.
 *
 * Memory mode.  While tracing is on, CPython (3.9-3.11; 3.8 reuses them)
 * calls a method descriptor through a bound method object made for the
 * call, only to hand it to a profile function with C_CALL
 * (trace_call_function in ceval.c): 72 bytes per call of a method such as
 * deque.popleft, which a bare run never allocates.  Such an object is the
 * last block sampled just before its C_CALL, with no event between and no
 * reference but the interpreter's: it is taken back.  Any other event
 * says that what was sampled last was the program's. */
static int watch(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    if (lines_mem()) {
        if (what == PyTrace_C_CALL && PyCFunction_Check(arg) && Py_REFCNT(arg) == 1)
            mem_forget_fresh((char *)arg - 2 * sizeof(void *)); /* GC header first */
        else
            mem_event();
    }
    PyThreadState *ts = PyThreadState_Get();
    if (ts->c_tracefunc != trace && lines_non > 0) {
        if (take_slot(ts) < 0)
            PyErr_WriteUnraisable(NULL);
        else if (what == PyTrace_CALL) /* its CALL went to the program's function alone */
            own_event(frame, what, trace_chain_check(ts->c_traceobj));
    }
    if (!lines_mem() && sonde_legacy_set(ts, 0, NULL, NULL) < 0)
        PyErr_WriteUnraisable(NULL);
    return 0;
}

/* An audit hook, for the life of the process: where a program is about
 * to set a trace function while sonde's hook is in (sys.settrace, a
 * debugger, a C tracer's PyEval_SetTrace: each audits "sys.settrace"),
 * puts the watch in the thread's profile slot, if free, to take the
 * trace slot back at the next event. */
static int on_audit(const char *event, PyObject *args, void *data)
{
    (void)args;
    (void)data;
    if (lines_non == 0 || setting || strcmp(event, "sys.settrace") != 0)
        return 0;
    PyThreadState *ts = _PyThreadState_UncheckedGet();
    if (ts && !ts->c_profilefunc) {
        setting = 1;
        int rc = sonde_legacy_set(ts, 0, watch, (PyObject *)lines_on[0]);
        setting = 0;
        if (rc < 0)
            PyErr_Clear(); /* the program's call goes on; sonde misses its lines */
    }
    return 0;
}

/* Installs the hooks in thread ts: the trace function, taking over any of
 * the program's (see take_slot), and in memory mode the profile function
 * where no other profiler has that slot.  Where the program has no trace function, the
 * hook's object (what the interpreter's sys.gettrace would answer) is the
 * first tracer enabled when it went in: it stays referenced, enabled or
 * not, until the last tracer is disabled and the hooks come out. */
static int hook_thread(PyThreadState *ts, void *arg)
{
    (void)arg;
    if (ts->c_tracefunc != trace && take_slot(ts) < 0)
        return -1;
    if (lines_mem() && !ts->c_profilefunc)
        return sonde_legacy_set(ts, 0, watch, (PyObject *)lines_on[0]);
    return 0;
}

/* Takes sonde's hooks out of thread ts, where they still are, leaving the
 * program's trace function in their place. */
static int unhook_thread(PyThreadState *ts, void *arg)
{
    (void)arg;
    int rc = 0;
    setting = 1;
    if (ts->c_tracefunc == trace) {
        PyObject *obj = ts->c_traceobj;
        if (trace_chain_check(obj)) {
            trace_chain *c = (trace_chain *)obj;
            PyObject *theirs = c->obj;
            Py_XINCREF(theirs); /* the slot's reference to the chain goes first */
            rc = sonde_legacy_set(ts, 1, c->func, theirs);
            Py_XDECREF(theirs);
        } else {
            rc = sonde_legacy_set(ts, 1, NULL, NULL);
        }
    }
    setting = 0;
    if (ts->c_profilefunc == watch && sonde_legacy_set(ts, 0, NULL, NULL) < 0)
        rc = -1;
    return rc;
}

/* threading.settrace's hook: puts the C hooks in a new thread's place. */
static PyObject *on_thread_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    setting = 1;
    PyEval_SetTrace(NULL, NULL); /* this hook's own trampoline, not the program's */
    setting = 0;
    if (lines_non == 0 || nargs != 3)
        Py_RETURN_NONE;
    if (hook_thread(PyThreadState_Get(), NULL) < 0)
        return NULL;
    if (PyUnicode_Check(args[1]) && PyUnicode_CompareWithASCIIString(args[1], "call") == 0)
        trace(Py_None, (PyFrameObject *)args[0], PyTrace_CALL, Py_None);
    Py_RETURN_NONE;
}

/* threading.setprofile's hook: the same where a program's
 * threading.settrace took the place of sonde's (coverage's does); the
 * program's function is then the new thread's, and chained. */
static PyObject *on_thread_profile(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyEval_SetProfile(NULL, NULL); /* this hook's own trampoline */
    if (lines_non == 0 || nargs != 3)
        Py_RETURN_NONE;
    PyThreadState *ts = PyThreadState_Get();
    int seen = ts->c_tracefunc == trace; /* on_thread_start has run */
    if (hook_thread(ts, NULL) < 0)
        return NULL;
    if (!seen && PyUnicode_Check(args[1]) &&
        PyUnicode_CompareWithASCIIString(args[1], "call") == 0)
        own_event((PyFrameObject *)args[0], PyTrace_CALL, trace_chain_check(ts->c_traceobj));
    Py_RETURN_NONE;
}

/* Constant. */
static PyMethodDef thread_start_def = {
    "_sonde_lines_thread_start", (PyCFunction)(void (*)(void))on_thread_start, METH_FASTCALL,
    "Installs sonde's line hook in a new thread."
};

/* Constant. */
static PyMethodDef thread_profile_def = {
    "_sonde_lines_thread_profile", (PyCFunction)(void (*)(void))on_thread_profile,
    METH_FASTCALL, "Installs sonde's line hook in a new thread a program's own tracer reached."
};

/* threading's profile hook for new threads, hook, where the program has
 * none (install = 1); taken out where it is still hook (install = 0).  0,
 * or -1 with an exception. */
static int thread_profile_hook(PyObject *hook, int install)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *now = threading ? PyObject_GetAttrString(threading, "_profile_hook") : NULL;
    Py_XDECREF(threading);
    if (!now) {
        PyErr_Clear(); /* a threading without it: new threads go without */
        return 0;
    }
    int rc = 0;
    if (install ? now == Py_None : now == hook || (PyCFunction_Check(now) &&
                                                  PyCFunction_GET_FUNCTION(now) ==
                                                  PyCFunction_GET_FUNCTION(hook)))
        rc = sonde_legacy_threading_hook(0, install ? hook : Py_None);
    Py_DECREF(now);
    return rc;
}

int lines_install(void)
{
    static int audited; /* on_audit is in: for good, as audit hooks are */
    if (!audited && PySys_AddAuditHook(on_audit, NULL) < 0)
        return -1;
    audited = 1;
    if (trace_chain_gettrace_install(trace) < 0)
        return -1;
    PyObject *profile_hook = PyCFunction_New(&thread_profile_def, NULL);
    PyObject *hook = profile_hook ? PyCFunction_New(&thread_start_def, NULL) : NULL;
    int rc = hook ? sonde_legacy_install(1, hook, hook_thread, unhook_thread, NULL) : -1;
    if (rc == 0 && (rc = thread_profile_hook(profile_hook, 1)) < 0) {
        saved_error saved = error_save();
        if (sonde_legacy_remove(1, unhook_thread, NULL) < 0)
            PyErr_Clear();
        error_restore(saved);
    }
    Py_XDECREF(hook);
    Py_XDECREF(profile_hook);
    if (rc < 0) {
        saved_error saved = error_save();
        if (trace_chain_gettrace_remove() < 0)
            PyErr_Clear();
        error_restore(saved);
    }
    return rc;
}

int lines_uninstall(const lines_tracer *last)
{
    (void)last;
    int rc = sonde_legacy_remove(1, unhook_thread, NULL);
    PyObject *profile_hook = PyCFunction_New(&thread_profile_def, NULL);
    if (!profile_hook || thread_profile_hook(profile_hook, 0) < 0 ||
        trace_chain_gettrace_remove() < 0) {
        if (rc < 0)
            PyErr_Clear();
        rc = -1;
    }
    Py_XDECREF(profile_hook);
    return rc;
}
#endif
