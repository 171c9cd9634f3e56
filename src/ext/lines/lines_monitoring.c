/* lines_monitoring.c - the line tracer's events from sys.monitoring (3.12+):
 * LINE, JUMP (one-line loops) and INSTRUCTION switched on per traced code
 * object, PY_* to follow calls.  See lines.h. */
#include "lines_state.h"

#if PY_VERSION_HEX >= 0x030C0000

#include "../interp/monitoring.h"
#include "../interp/pyerr.h"

#define TOOL_ID 3   /* not the debugger's, coverage's or profiler's */

/* An event's offset or line number beyond the interpreter's cached small
 * ints is a new int made for the call: not the program's memory. */
static void forget_int_arg(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t i)
{
    if (!lines_mem() || i >= nargs)
        return;
    long v = PyLong_AsLong(args[i]);
    if (v > 256 || v < -5)
        mem_forget(args[i]);
}

/* Each event goes to every enabled tracer (see lines_state.h).
 * Activations are told apart by depth on the thread's stack: monitoring
 * callbacks get no frame, so the frame key is the code object. */
static PyObject *m_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    forget_int_arg(args, nargs, 1);
    for (int i = 0; i < lines_non && nargs >= 1; i++) {
        lines_tracer *t = lines_on[i];
        line_code *lc = lines_lookup(t, args[0]);
        if (lc && !t->failed)
            lines_enter(t, lc, args[0]);
    }
    Py_RETURN_NONE;
}

static PyObject *m_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    forget_int_arg(args, nargs, 1);
    int line = nargs >= 2 ? (int)PyLong_AsLong(args[1]) : -1;
    for (int i = 0; i < lines_non && nargs >= 2; i++)
        if (!lines_on[i]->failed)
            lines_on_line(lines_on[i], args[0], args[0], line);
    Py_RETURN_NONE;
}

static PyObject *m_instruction(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    long unit = nargs >= 2 ? PyLong_AsLong(args[1]) / 2 : -1;
    for (int i = 0; i < lines_non && nargs >= 2; i++)
        if (!lines_on[i]->failed)
            lines_on_instruction(lines_on[i], args[0], args[0], unit);
    Py_RETURN_NONE;
}

static PyObject *disable_event; /* sys.monitoring.DISABLE; set once, GIL */

/* A loop whose body is on one line raises no LINE event per iteration, yet
 * sys.settrace reports one: CPython's own settrace does it from JUMP, and
 * so does this.  Forward jumps are switched off where they happen. */
static PyObject *m_jump(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (lines_non == 0 || nargs < 3 || !PyCode_Check(args[0]))
        Py_RETURN_NONE;
    forget_int_arg(args, nargs, 1);
    forget_int_arg(args, nargs, 2);
    long from = PyLong_AsLong(args[1]), to = PyLong_AsLong(args[2]);
    if (to > from) {
        Py_INCREF(disable_event);
        return disable_event;
    }
    /* Lines from the table made once per code object: PyCode_Addr2Line
     * walks the location table from its start on every call. */
    long u_from = from / 2, u_to = to / 2;
    for (int i = 0; i < lines_non; i++) {
        lines_tracer *t = lines_on[i];
        line_code *lc = t->failed ? NULL : lines_lookup(t, args[0]);
        if (lc && u_to >= 0 && u_from < lc->nunits && lc->unit_lines[u_to] &&
            lc->unit_lines[u_to] == lc->unit_lines[u_from])
            lines_on_line(t, args[0], args[0], lc->unit_lines[u_to]);
    }
    Py_RETURN_NONE;
}

static PyObject *m_leave(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    forget_int_arg(args, nargs, 1);
    for (int i = 0; i < lines_non && nargs >= 1; i++)
        lines_leave(lines_on[i], args[0]);
    Py_RETURN_NONE;
}

/* The first LOCAL_EVENTS can be switched on per code object; PY_THROW and
 * PY_UNWIND only for the whole program (they fire when an exception passes
 * through a frame, and the callbacks ignore code they do not trace). */
/* Constant. */
static PyMethodDef m_callbacks[] = {
    { "PY_START", (PyCFunction)(void (*)(void))m_start, METH_FASTCALL, NULL },
    { "PY_RESUME", (PyCFunction)(void (*)(void))m_start, METH_FASTCALL, NULL },
    { "LINE", (PyCFunction)(void (*)(void))m_line, METH_FASTCALL, NULL },
    { "JUMP", (PyCFunction)(void (*)(void))m_jump, METH_FASTCALL, NULL },
    { "INSTRUCTION", (PyCFunction)(void (*)(void))m_instruction, METH_FASTCALL, NULL },
    { "PY_RETURN", (PyCFunction)(void (*)(void))m_leave, METH_FASTCALL, NULL },
    { "PY_YIELD", (PyCFunction)(void (*)(void))m_leave, METH_FASTCALL, NULL },
    { "PY_THROW", (PyCFunction)(void (*)(void))m_start, METH_FASTCALL, NULL },
    { "PY_UNWIND", (PyCFunction)(void (*)(void))m_leave, METH_FASTCALL, NULL },
};
#define NCALLBACKS (sizeof m_callbacks / sizeof m_callbacks[0])
#define LOCAL_EVENTS 7

static long events_mask;      /* the local events of m_callbacks, once installed; GIL */
static long instruction_bit;  /* only for code whose instructions are counted; GIL */

/* Switches a code object's events to what the enabled tracers ask of it:
 * none where none traces it, instructions where one counts them. */
int lines_watch(PyObject *code)
{
    long mask = 0;
    for (int i = 0; i < lines_non; i++) {
        const line_code *lc = lines_lookup(lines_on[i], code);
        if (lc)
            mask |= lc->ninstr ? events_mask : events_mask & ~instruction_bit;
    }
    return sonde_mon_call("set_local_events", "(iOl)", TOOL_ID, code, mask);
}

int lines_install(void)
{
    if (!disable_event && !(disable_event = sonde_mon_attr("DISABLE")))
        return -1;
    instruction_bit = sonde_mon_event("INSTRUCTION");
    if (sonde_mon_call("use_tool_id", "(is)", TOOL_ID, "sonde lines") < 0)
        return -1; /* another tool's: left alone */
    long global_mask;
    int rc = sonde_mon_register(TOOL_ID, m_callbacks, LOCAL_EVENTS, 1, &events_mask) < 0 ||
                     sonde_mon_register(TOOL_ID, m_callbacks + LOCAL_EVENTS,
                                        NCALLBACKS - LOCAL_EVENTS, 1, &global_mask) < 0 ||
                     sonde_mon_call("set_events", "(il)", TOOL_ID, global_mask) < 0
                 ? -1
                 : 0;
    const lines_tracer *first = lines_on[0];
    for (uint32_t i = 0; i < first->ncodes && rc == 0; i++)
        rc = lines_watch(first->codes[i]->code);
    if (rc < 0) {
        saved_error saved = error_save();
        if (lines_uninstall(first) < 0)
            PyErr_Clear();
        error_restore(saved);
    }
    return rc;
}

int lines_uninstall(const lines_tracer *last)
{
    long mask;
    if (sonde_mon_call("set_events", "(ii)", TOOL_ID, 0) < 0)
        PyErr_Clear();
    if (sonde_mon_call("restart_events", "()") < 0) /* undo DISABLE for the next tracer */
        PyErr_Clear();
    for (uint32_t i = 0; i < last->ncodes; i++)
        if (sonde_mon_call("set_local_events", "(iOi)", TOOL_ID, last->codes[i]->code, 0) < 0)
            PyErr_Clear();
    if (sonde_mon_register(TOOL_ID, m_callbacks, NCALLBACKS, 0, &mask) < 0)
        PyErr_Clear();
    return sonde_mon_call("free_tool_id", "(i)", TOOL_ID);
}

#endif
