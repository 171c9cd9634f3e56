/* lines.c - the line tracer; see lines.h.
 *
 * Protected by the GIL: every callback, and the one active tracer. */
#include "lines.h"

#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/u64map.h"
#include "pyerr.h"

#include "legacy.h"
#include "monitoring.h"

typedef struct line_code {
    PyObject *code;          /* strong reference */
    int first, nlines;       /* lines first .. first + nlines - 1 */
    uint64_t *hits, *ticks;
    int ninstr;              /* code units, when instructions are counted too, else 0 */
    uint64_t *ihits, *iticks;/* per code unit (an instruction's offset / 2) */
    int32_t *unit_lines;     /* 3.12+: the line of each code unit (0: none) */
    int nunits;
} line_code;

typedef struct line_frame {
    line_code *lc;
    const void *frame;       /* the activation (<= 3.11: its frame object) */
    int line;                /* the open line, or -1 */
    uint64_t start;          /* ticks when it opened */
    int instr;               /* the open instruction (code unit), or -1 */
    uint64_t istart;
} line_frame;

typedef struct line_thread {
    line_frame *stack;
    uint32_t depth, cap;
    struct line_thread *next;
} line_thread;

typedef struct tracer_object {
    PyObject_HEAD
    line_code **codes;       /* each allocated alone: open frames point at them */
    uint32_t ncodes, cap;
    sonde_u64map by_code;    /* code object address -> codes[] index */
    line_thread *threads;
    int enabled, failed;
    sonde_clock_mark start, end;
} tracer_object;

static tracer_object *active;          /* the enabled tracer */
static uint64_t active_generation;
static _Thread_local line_thread *tls_thread __attribute__((tls_model("initial-exec")));
static _Thread_local uint64_t tls_generation __attribute__((tls_model("initial-exec")));

static line_thread *current_thread(tracer_object *t)
{
    if (tls_generation == active_generation)
        return tls_thread;
    line_thread *th = calloc(1, sizeof *th);
    if (th) {
        th->next = t->threads;
        t->threads = th;
    } else {
        t->failed = 1;
    }
    tls_thread = th;
    tls_generation = active_generation;
    return th;
}

static line_code *lookup(tracer_object *t, const void *code)
{
    uint32_t i = sonde_u64map_get(&t->by_code, (uint64_t)(uintptr_t)code);
    return i == SONDE_U64MAP_NONE ? NULL : t->codes[i];
}

static void enter(tracer_object *t, line_code *lc, const void *frame)
{
    line_thread *th = current_thread(t);
    if (!th)
        return;
    if (th->depth == th->cap) {
        uint32_t cap = th->cap ? th->cap * 2 : 64;
        line_frame *s = realloc(th->stack, cap * sizeof *s);
        if (!s) {
            t->failed = 1;
            return;
        }
        th->stack = s;
        th->cap = cap;
    }
    th->stack[th->depth++] = (line_frame){ lc, frame, -1, 0, -1, 0 };
}

static void close_line(line_frame *f, uint64_t now)
{
    if (f->line >= 0)
        f->lc->ticks[f->line - f->lc->first] += now - f->start;
    if (f->instr >= 0)
        f->lc->iticks[f->instr] += now - f->istart;
}

/* The frame on top of this thread's stack when it runs code, else NULL. */
static line_frame *top_for(tracer_object *t, const void *frame, const void *code)
{
    line_thread *th = current_thread(t);
    if (!th || th->depth == 0)
        return NULL;
    line_frame *f = &th->stack[th->depth - 1];
    return f->frame == frame && (const void *)f->lc->code == code ? f : NULL;
}

static void on_instruction(tracer_object *t, const void *frame, const void *code, long unit)
{
    line_frame *f = top_for(t, frame, code);
    if (!f || f->lc->ninstr == 0)
        return;
    uint64_t now = sonde_clock_ticks();
    if (f->instr >= 0)
        f->lc->iticks[f->instr] += now - f->istart;
    f->instr = unit >= 0 && unit < f->lc->ninstr ? (int)unit : -1;
    if (f->instr >= 0) {
        f->lc->ihits[f->instr]++;
        f->istart = sonde_clock_ticks();
    }
}

static void on_line(tracer_object *t, const void *frame, const void *code, int line)
{
    line_frame *f = top_for(t, frame, code);
    if (!f)
        return;
    uint64_t now = sonde_clock_ticks();
    if (f->line >= 0)
        f->lc->ticks[f->line - f->lc->first] += now - f->start;
    if (line < f->lc->first || line >= f->lc->first + f->lc->nlines) {
        f->line = -1;
        return;
    }
    f->lc->hits[line - f->lc->first]++;
    f->line = line;
    f->start = sonde_clock_ticks();
}

static void leave(tracer_object *t, const void *frame)
{
    line_thread *th = current_thread(t);
    if (!th || th->depth == 0 || th->stack[th->depth - 1].frame != frame)
        return;
    close_line(&th->stack[--th->depth], sonde_clock_ticks());
}

#if PY_VERSION_HEX >= 0x030C0000
/* ---- 3.12+: sys.monitoring, events on the registered code only ---- */

#define TOOL_ID 3   /* not the debugger's, coverage's or profiler's */

/* Activations are told apart by depth on the thread's stack: monitoring
 * callbacks get no frame, so the frame key is the code object. */
static PyObject *m_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    line_code *lc = active && nargs >= 1 ? lookup(active, args[0]) : NULL;
    if (lc && !active->failed)
        enter(active, lc, args[0]);
    Py_RETURN_NONE;
}

static PyObject *m_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (active && !active->failed && nargs >= 2)
        on_line(active, args[0], args[0], (int)PyLong_AsLong(args[1]));
    Py_RETURN_NONE;
}

static PyObject *m_instruction(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (active && !active->failed && nargs >= 2)
        on_instruction(active, args[0], args[0], PyLong_AsLong(args[1]) / 2);
    Py_RETURN_NONE;
}

static PyObject *disable_event; /* sys.monitoring.DISABLE */

/* A loop whose body is on one line raises no LINE event per iteration, yet
 * sys.settrace reports one: CPython's own settrace does it from JUMP, and
 * so does this.  Forward jumps are switched off where they happen. */
static PyObject *m_jump(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!active || active->failed || nargs < 3 || !PyCode_Check(args[0]))
        Py_RETURN_NONE;
    long from = PyLong_AsLong(args[1]), to = PyLong_AsLong(args[2]);
    if (to > from) {
        Py_INCREF(disable_event);
        return disable_event;
    }
    /* Lines from the table made once per code object: PyCode_Addr2Line
     * walks the location table from its start on every call. */
    line_code *lc = lookup(active, args[0]);
    long u_from = from / 2, u_to = to / 2;
    if (lc && u_to >= 0 && u_from < lc->nunits && lc->unit_lines[u_to] &&
        lc->unit_lines[u_to] == lc->unit_lines[u_from])
        on_line(active, args[0], args[0], lc->unit_lines[u_to]);
    Py_RETURN_NONE;
}

static PyObject *m_leave(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (active && nargs >= 1)
        leave(active, args[0]);
    Py_RETURN_NONE;
}

/* The first LOCAL_EVENTS can be switched on per code object; PY_THROW and
 * PY_UNWIND only for the whole program (they fire when an exception passes
 * through a frame, and the callbacks ignore code they do not trace). */
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

static long events_mask;      /* the local events of m_callbacks, once installed */
static long instruction_bit;  /* only for code whose instructions are counted */

/* Switches the events on for one code object. */
static int watch(const line_code *lc)
{
    long mask = lc->ninstr ? events_mask : events_mask & ~instruction_bit;
    return sonde_mon_call("set_local_events", "(iOl)", TOOL_ID, lc->code, mask);
}

static int install(tracer_object *t)
{
    if (!disable_event && !(disable_event = sonde_mon_attr("DISABLE")))
        return -1;
    long global_mask;
    instruction_bit = sonde_mon_event("INSTRUCTION");
    if (sonde_mon_call("use_tool_id", "(is)", TOOL_ID, "sonde lines") < 0 ||
        sonde_mon_register(TOOL_ID, m_callbacks, LOCAL_EVENTS, 1, &events_mask) < 0 ||
        sonde_mon_register(TOOL_ID, m_callbacks + LOCAL_EVENTS, NCALLBACKS - LOCAL_EVENTS, 1,
                           &global_mask) < 0 ||
        sonde_mon_call("set_events", "(il)", TOOL_ID, global_mask) < 0)
        return -1;
    for (uint32_t i = 0; i < t->ncodes; i++)
        if (watch(t->codes[i]) < 0)
            return -1;
    return 0;
}

static int uninstall(tracer_object *t)
{
    long mask;
    if (sonde_mon_call("set_events", "(ii)", TOOL_ID, 0) < 0)
        PyErr_Clear();
    if (sonde_mon_call("restart_events", "()") < 0) /* undo DISABLE for the next tracer */
        PyErr_Clear();
    for (uint32_t i = 0; i < t->ncodes; i++)
        if (sonde_mon_call("set_local_events", "(iOi)", TOOL_ID, t->codes[i]->code, 0) < 0)
            PyErr_Clear();
    if (sonde_mon_register(TOOL_ID, m_callbacks, NCALLBACKS, 0, &mask) < 0)
        PyErr_Clear();
    return sonde_mon_call("free_tool_id", "(i)", TOOL_ID);
}

#else
/* ---- up to 3.11: PyEval_SetTrace in every thread ---- */

/* Every code object's events come through the one hook already. */
static int watch(const line_code *lc)
{
    (void)lc;
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
    static PyObject *name; /* "f_trace_lines", interned once */
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

static int trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)arg;
    tracer_object *t = (tracer_object *)obj;
    if (t != active || t->failed)
        return 0;
    switch (what) {
    case PyTrace_CALL: {
        line_code *lc = lookup(t, sonde_frame_code(frame));
        if (lc) {
            enter(t, lc, frame);
            if (lc->ninstr)
                trace_opcodes(frame);
        } else {
            no_line_events(frame);
        }
        break;
    }
    case PyTrace_OPCODE:
        on_instruction(t, frame, sonde_frame_code(frame), frame_unit(frame));
        break;
    case PyTrace_LINE:
        on_line(t, frame, sonde_frame_code(frame), PyFrame_GetLineNumber(frame));
        break;
    case PyTrace_RETURN:
        leave(t, frame);
        break;
    }
    return 0;
}

/* threading.settrace's hook: puts the C hook in a new thread's place. */
static PyObject *on_thread_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!active || nargs != 3) {
        PyEval_SetTrace(NULL, NULL);
        Py_RETURN_NONE;
    }
    PyEval_SetTrace(trace, (PyObject *)active);
    if (PyUnicode_Check(args[1]) && PyUnicode_CompareWithASCIIString(args[1], "call") == 0)
        trace((PyObject *)active, (PyFrameObject *)args[0], PyTrace_CALL, Py_None);
    Py_RETURN_NONE;
}

static PyMethodDef thread_start_def = {
    "_sonde_lines_thread_start", (PyCFunction)(void (*)(void))on_thread_start, METH_FASTCALL,
    "Installs sonde's line hook in a new thread."
};

static int install(tracer_object *t)
{
    PyObject *hook = PyCFunction_New(&thread_start_def, NULL);
    int rc = hook ? sonde_legacy_threading(1, hook) : -1;
    Py_XDECREF(hook);
    if (rc < 0)
        return -1;
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts))
        if (sonde_legacy_set(ts, 1, trace, (PyObject *)t) < 0)
            return -1;
    return 0;
}

static int uninstall(tracer_object *t)
{
    (void)t;
    PyThreadState *me = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts->c_tracefunc == trace)
            sonde_legacy_set(ts, 1, NULL, NULL);
    return sonde_legacy_threading(1, Py_None);
}
#endif

/* ---- the Python type ---- */

static PyObject *tracer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)args;
    (void)kwds;
    tracer_object *t = (tracer_object *)type->tp_alloc(type, 0);
    if (t) {
        sonde_u64map_init(&t->by_code);
        sonde_clock_setup();
    }
    return (PyObject *)t;
}

static void stop(tracer_object *t)
{
    if (!t->enabled)
        return;
    saved_error saved = error_save();
    if (uninstall(t) < 0)
        PyErr_Clear();
    error_restore(saved);
    uint64_t now = sonde_clock_ticks();
    for (line_thread *th = t->threads; th; th = th->next)
        while (th->depth)
            close_line(&th->stack[--th->depth], now);
    t->enabled = 0;
    t->end = sonde_clock_mark_now();
    active = NULL;
    active_generation++;
}

static void tracer_dealloc(tracer_object *t)
{
    stop(t);
    for (uint32_t i = 0; i < t->ncodes; i++) {
        Py_DECREF(t->codes[i]->code);
        free(t->codes[i]->hits);
        free(t->codes[i]->ticks);
        free(t->codes[i]->ihits);
        free(t->codes[i]->iticks);
        free(t->codes[i]->unit_lines);
        free(t->codes[i]);
    }
    free(t->codes);
    while (t->threads) {
        line_thread *next = t->threads->next;
        free(t->threads->stack);
        free(t->threads);
        t->threads = next;
    }
    sonde_u64map_free(&t->by_code);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static PyObject *tracer_add_code(tracer_object *t, PyObject *args)
{
    PyObject *code;
    int first, last, ninstr = 0;
    const char *unit_lines = NULL;
    Py_ssize_t unit_lines_len = 0;
    if (!PyArg_ParseTuple(args, "O!ii|iy#:add_code", &PyCode_Type, &code, &first, &last, &ninstr,
                          &unit_lines, &unit_lines_len))
        return NULL;
    if (lookup(t, code))
        Py_RETURN_FALSE;
    if (last < first || last - first > 1000000 || ninstr < 0 || ninstr > 10000000) {
        PyErr_Format(PyExc_ValueError, "bad line range %d..%d or code size %d", first, last,
                     ninstr);
        return NULL;
    }
    if (t->ncodes == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        line_code **c = realloc(t->codes, cap * sizeof *c);
        if (!c)
            return PyErr_NoMemory();
        t->codes = c;
        t->cap = cap;
    }
    line_code *lc = malloc(sizeof *lc);
    size_t n = (size_t)(last - first + 1);
    size_t nunits = (size_t)unit_lines_len / sizeof(int32_t);
    if (lc) {
        *lc = (line_code){ code, first, (int)n, calloc(n, sizeof(uint64_t)),
                           calloc(n, sizeof(uint64_t)), ninstr,
                           ninstr ? calloc((size_t)ninstr, sizeof(uint64_t)) : NULL,
                           ninstr ? calloc((size_t)ninstr, sizeof(uint64_t)) : NULL,
                           nunits ? malloc(nunits * sizeof(int32_t)) : NULL, (int)nunits };
        if (lc->unit_lines)
            memcpy(lc->unit_lines, unit_lines, nunits * sizeof(int32_t));
    }
    int complete = lc && lc->hits && lc->ticks && (!ninstr || (lc->ihits && lc->iticks)) &&
                   (!nunits || lc->unit_lines);
    uint32_t *slot = complete
                         ? sonde_u64map_slot(&t->by_code, (uint64_t)(uintptr_t)code, t->ncodes)
                         : NULL;
    if (!slot) {
        if (lc) {
            free(lc->hits);
            free(lc->ticks);
            free(lc->ihits);
            free(lc->iticks);
            free(lc->unit_lines);
        }
        free(lc);
        return PyErr_NoMemory();
    }
    Py_INCREF(code);
    t->codes[t->ncodes++] = lc;
    if (t->enabled && watch(lc) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

static PyObject *tracer_enable(tracer_object *t, PyObject *unused)
{
    (void)unused;
    if (t->enabled)
        Py_RETURN_NONE;
    if (active) {
        PyErr_SetString(PyExc_RuntimeError, "another sonde line tracer is enabled");
        return NULL;
    }
    if (t->start.ns == 0)
        t->start = sonde_clock_mark_now();
    active = t;
    active_generation++;
    t->enabled = 1;
    if (install(t) < 0) {
        saved_error saved = error_save();
        stop(t);
        error_restore(saved);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *tracer_disable(tracer_object *t, PyObject *unused)
{
    (void)unused;
    stop(t);
    if (t->failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* counts[0..n) as a list of ints, scaled by `scale` (1 for hits). */
static PyObject *int_list(const uint64_t *counts, int n, double scale)
{
    PyObject *list = PyList_New(n);
    for (int k = 0; list && k < n; k++) {
        PyObject *v = PyLong_FromUnsignedLongLong(
            scale == 1.0 ? counts[k] : (unsigned long long)((double)counts[k] * scale + 0.5));
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, v);
    }
    return list;
}

/* results() -> [(code, first_line, [hits], [ns], [instruction hits], [instruction ns])]
 * per code object: per line from first_line, per code unit (empty when
 * instructions were not counted). */
static PyObject *tracer_results(tracer_object *t, PyObject *unused)
{
    (void)unused;
    sonde_clock_mark end = t->enabled ? sonde_clock_mark_now() : t->end;
    double ns_per_tick = 1e9 * sonde_clock_seconds_per_tick(t->start, end);
    PyObject *out = PyList_New(0);
    for (uint32_t i = 0; out && i < t->ncodes; i++) {
        const line_code *lc = t->codes[i];
        PyObject *hits = int_list(lc->hits, lc->nlines, 1.0);
        PyObject *ns = int_list(lc->ticks, lc->nlines, ns_per_tick);
        PyObject *ihits = int_list(lc->ihits, lc->ninstr, 1.0);
        PyObject *ins = int_list(lc->iticks, lc->ninstr, ns_per_tick);
        PyObject *item = hits && ns && ihits && ins
                             ? Py_BuildValue("(OiOOOO)", lc->code, lc->first, hits, ns, ihits, ins)
                             : NULL;
        Py_XDECREF(hits);
        Py_XDECREF(ns);
        Py_XDECREF(ihits);
        Py_XDECREF(ins);
        if (!item || PyList_Append(out, item) < 0)
            Py_CLEAR(out);
        Py_XDECREF(item);
    }
    return out;
}

static PyMethodDef tracer_methods[] = {
    { "add_code", (PyCFunction)tracer_add_code, METH_VARARGS,
      "add_code(code, first_line, last_line, code_units=0, unit_lines=b'') -> bool: trace "
      "this code object's lines (and its instructions when code_units is its length in "
      "code units); unit_lines: the line of each code unit as int32s (3.12+)." },
    { "enable", (PyCFunction)tracer_enable, METH_NOARGS, "Start tracing in every thread." },
    { "disable", (PyCFunction)tracer_disable, METH_NOARGS, "Stop; open lines end now." },
    { "results", (PyCFunction)tracer_results, METH_NOARGS,
      "[(code, first_line, hits, ns, instruction_hits, instruction_ns)] per code object." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject tracer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sonde._sonde.LineTracer",
    .tp_basicsize = sizeof(tracer_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Exact per-line hits and time of chosen code objects.",
    .tp_new = tracer_new,
    .tp_dealloc = (destructor)tracer_dealloc,
    .tp_methods = tracer_methods,
};

int sonde_lines_add_type(PyObject *module)
{
    if (PyType_Ready(&tracer_type) < 0)
        return -1;
    Py_INCREF(&tracer_type);
    if (PyModule_AddObject(module, "LineTracer", (PyObject *)&tracer_type) < 0) {
        Py_DECREF(&tracer_type);
        return -1;
    }
    return 0;
}
