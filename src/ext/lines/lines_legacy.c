/* lines_legacy.c - the line tracer's events from PyEval_SetTrace (up to
 * 3.11): a C trace function in every thread, line events switched off in
 * frames whose code is not traced, opcode events on where instructions are
 * counted.  In memory mode, also a profile function that recognises what
 * the interpreter allocates only because tracing is on.  See lines.h. */
#include "lines_state.h"

#if PY_VERSION_HEX < 0x030C0000

#include "../interp/legacy.h"

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

/* Each event goes to every enabled tracer (see lines_state.h). */
static int trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
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
        if (!traced)
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
    return 0;
}

/* Memory mode.  While tracing is on, CPython (3.9-3.11; 3.8 reuses them)
 * calls a method descriptor through a bound method object made for the
 * call, only to hand it to a profile function with C_CALL
 * (trace_call_function in ceval.c): 72 bytes per call of a method such as
 * deque.popleft, which a bare run never allocates.  Such an object is the
 * last block sampled just before its C_CALL, with no event between and no
 * reference but the interpreter's: it is taken back.  Any other event
 * says that what was sampled last was the program's. */
static int profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)frame;
    if (what == PyTrace_C_CALL && PyCFunction_Check(arg) && Py_REFCNT(arg) == 1)
        mem_forget_fresh((char *)arg - 2 * sizeof(void *)); /* its block starts with the GC header */
    else
        mem_event();
    return 0;
}

/* Installs the hooks in thread ts: the trace function, and in memory mode
 * the profile function where no other profiler has that slot.  The hooks'
 * object (what sys.gettrace() answers) is the first tracer enabled when
 * they went in: it stays referenced, enabled or not, until the last
 * tracer is disabled and the hooks come out. */
static int hook_thread(PyThreadState *ts, void *arg)
{
    (void)arg;
    PyObject *obj = (PyObject *)lines_on[0];
    if (sonde_legacy_set(ts, 1, trace, obj) < 0)
        return -1;
    if (lines_mem() && !ts->c_profilefunc)
        return sonde_legacy_set(ts, 0, profile, obj);
    return 0;
}

/* Takes sonde's hooks out of thread ts, where they still are. */
static int unhook_thread(PyThreadState *ts, void *arg)
{
    (void)arg;
    int rc = 0;
    if (ts->c_tracefunc == trace)
        rc = sonde_legacy_set(ts, 1, NULL, NULL);
    if (ts->c_profilefunc == profile && sonde_legacy_set(ts, 0, NULL, NULL) < 0)
        rc = -1;
    return rc;
}

/* threading.settrace's hook: puts the C hooks in a new thread's place. */
static PyObject *on_thread_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (lines_non == 0 || nargs != 3) {
        PyEval_SetTrace(NULL, NULL);
        Py_RETURN_NONE;
    }
    if (hook_thread(PyThreadState_Get(), NULL) < 0)
        return NULL;
    if (PyUnicode_Check(args[1]) && PyUnicode_CompareWithASCIIString(args[1], "call") == 0)
        trace(Py_None, (PyFrameObject *)args[0], PyTrace_CALL, Py_None);
    Py_RETURN_NONE;
}

/* Constant. */
static PyMethodDef thread_start_def = {
    "_sonde_lines_thread_start", (PyCFunction)(void (*)(void))on_thread_start, METH_FASTCALL,
    "Installs sonde's line hook in a new thread."
};

int lines_install(void)
{
    PyObject *hook = PyCFunction_New(&thread_start_def, NULL);
    int rc = hook ? sonde_legacy_install(1, hook, hook_thread, unhook_thread, NULL) : -1;
    Py_XDECREF(hook);
    return rc;
}

int lines_uninstall(const lines_tracer *last)
{
    (void)last;
    return sonde_legacy_remove(1, unhook_thread, NULL);
}
#endif
