/* lines.c - the line tracer's Python type (LineTracer): registering code
 * objects, enable/disable, the document; see lines.h.  The counting is in
 * lines_state.h, the events in lines_monitoring.c / lines_legacy.c, the
 * document in document.c; with memory=True the memory profiler
 * (../mem/memory.h) is driven from here and from the counting.
 *
 * Protected by the GIL: every callback, and the enabled tracers. */
#include "lines.h"

#include <string.h>

#include "lines_state.h"
#include "../interp/pyerr.h"

lines_tracer *lines_on[LINES_MAX_ON]; /* see lines_state.h; protected by the GIL */
int lines_non;                        /* see lines_state.h; protected by the GIL */
/* Thread-local, each read and written by its own thread only (lines_state.h). */
_Thread_local lines_cached lines_tls[LINES_TLS_CACHED] __attribute__((tls_model("initial-exec")));

static uint64_t last_serial; /* protected by the GIL */

/* The calling thread's key: the address of its own cache, unique among
 * the threads alive. */
static uintptr_t thread_key(void)
{
    return (uintptr_t)&lines_tls;
}

line_thread *lines_attach(lines_tracer *t)
{
    uintptr_t key = thread_key();
    line_thread *th = t->threads;
    while (th && th->owner != key)
        th = th->next;
    if (!th && (th = calloc(1, sizeof *th))) {
        th->owner = key;
        th->next = t->threads;
        t->threads = th;
    }
    if (!th)
        t->failed = 1;
    lines_tls[t->slot % LINES_TLS_CACHED] = (lines_cached){ .serial = th ? t->serial : 0,
                                                          .th = th };
    return th;
}

static PyObject *tracer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    /* constant */
    static char *kwlist[] = { "memory", "sample_bytes", "interval_ms", "line_events", NULL };
    int memory = 0, line_events = 1;
    unsigned long long sample_bytes = 512;
    double interval_ms = 10;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pKdp:LineTracer", kwlist, &memory,
                                     &sample_bytes, &interval_ms, &line_events))
        return NULL;
    if (!(interval_ms >= 0.1 && interval_ms <= 3600e3)) {
        PyErr_Format(PyExc_ValueError, "interval_ms must be between 0.1 and 3600000, not %g",
                     interval_ms);
        return NULL;
    }
    if (sample_bytes > (1ull << 30)) {
        PyErr_Format(PyExc_ValueError, "sample_bytes must be at most 1 GiB, not %llu",
                     sample_bytes);
        return NULL;
    }
    lines_tracer *t = (lines_tracer *)type->tp_alloc(type, 0);
    if (!t)
        return NULL;
    sonde_u64map_init(&t->by_code);
    sonde_clock_setup();
    t->slot = -1;
    t->serial = ++last_serial;
    t->line_events = line_events || !memory;
    if (memory && !(t->mem = mem_new(sample_bytes, (uint64_t)(interval_ms * 1e6),
                                     t->line_events))) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

/* Takes t out of lines_on, its cache slot freed. */
static void take_off(lines_tracer *t)
{
    for (int i = 0; i < lines_non; i++)
        if (lines_on[i] == t)
            lines_on[i] = lines_on[--lines_non];
    t->slot = -1;
}

/* Switches the events of t's code to what the tracers still enabled ask. */
static int rewatch(const lines_tracer *t)
{
    int rc = 0;
    for (uint32_t i = 0; i < t->ncodes; i++)
        if (lines_watch(t->codes[i]->code) < 0)
            rc = -1;
    return rc;
}

static void stop(lines_tracer *t)
{
    if (t->slot < 0)
        return;
    take_off(t);
    saved_error saved = error_save();
    if (t->line_events && (lines_non == 0 ? lines_uninstall(t) : rewatch(t)) < 0)
        PyErr_Clear();
    error_restore(saved);
    uint64_t now = sonde_clock_ticks();
    for (line_thread *th = t->threads; th; th = th->next)
        for (; th->depth; th->depth--)
            if (!t->mem)
                lines_close(&th->stack[th->depth - 1], now);
    if (t->mem)
        mem_stop(t->mem); /* closes its own open activations */
    t->end = sonde_clock_mark_now();
}

static void free_code(line_code *lc)
{
    if (!lc->nested) {
        free(lc->hits);
        free(lc->iters);
    }
    free(lc->ticks);
    free(lc->ihits);
    free(lc->iticks);
    free(lc->unit_lines);
    Py_XDECREF(lc->name);
    free(lc);
}

static void tracer_dealloc(lines_tracer *t)
{
    stop(t);
    for (uint32_t i = 0; i < t->ncodes; i++) {
        Py_DECREF(t->codes[i]->code);
        free_code(t->codes[i]);
    }
    free(t->codes);
    while (t->threads) {
        line_thread *next = t->threads->next;
        free(t->threads->stack);
        free(t->threads);
        t->threads = next;
    }
    sonde_u64map_free(&t->by_code);
    mem_free(t->mem);
    Py_XDECREF(t->floor);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* The name the document shows for code when add_code was given none:
 * its qualified name where the interpreter has one (borrowed). */
static PyObject *default_name(PyObject *code)
{
#if PY_VERSION_HEX >= 0x030B0000
    return ((PyCodeObject *)code)->co_qualname;
#else
    return ((PyCodeObject *)code)->co_name;
#endif
}

/* A new line_code for code (nested in outer, or NULL) shown as name, or
 * NULL on out of memory. */
static line_code *new_code(PyObject *code, int first, int last, int ninstr,
                           const char *unit_lines, size_t nunits, line_code *outer, PyObject *name)
{
    line_code *lc = malloc(sizeof *lc);
    size_t n = (size_t)(last - first + 1);
    if (!lc)
        return NULL;
    Py_INCREF(name);
    *lc = (line_code){
        .code = code, .first = first, .nlines = (int)n, .nested = outer != NULL,
        .hits = outer ? outer->hits : calloc(n, sizeof(uint64_t)),
        .iters = outer ? outer->iters : calloc(n, sizeof(uint64_t)),
        .ticks = calloc(n, sizeof(uint64_t)), .ninstr = ninstr,
        .ihits = ninstr ? calloc((size_t)ninstr, sizeof(uint64_t)) : NULL,
        .iticks = ninstr ? calloc((size_t)ninstr, sizeof(uint64_t)) : NULL,
        .unit_lines = nunits ? malloc(nunits * sizeof(int32_t)) : NULL, .nunits = (int)nunits,
        .name = name,
        .site = outer ? MEM_NESTED : MEM_NO_SITE,
    };
    if (lc->unit_lines)
        memcpy(lc->unit_lines, unit_lines, nunits * sizeof(int32_t));
    if (!lc->hits || !lc->iters || !lc->ticks || (ninstr && (!lc->ihits || !lc->iticks)) ||
        (nunits && !lc->unit_lines)) {
        free_code(lc);
        return NULL;
    }
    return lc;
}

static PyObject *tracer_add_code(lines_tracer *t, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "code", "first_line", "last_line", "code_units", "unit_lines",
                              "parent", "name", NULL }; /* constant */
    PyObject *code, *parent = Py_None, *name = Py_None;
    int first, last, ninstr = 0;
    const char *unit_lines = NULL;
    Py_ssize_t unit_lines_len = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!ii|iy#OO:add_code", kwlist, &PyCode_Type,
                                     &code, &first, &last, &ninstr, &unit_lines, &unit_lines_len,
                                     &parent, &name))
        return NULL;
    if (lines_lookup(t, code))
        Py_RETURN_FALSE;
    line_code *outer = parent == Py_None ? NULL : lines_lookup(t, parent);
    if (parent != Py_None && (!outer || outer->nested || outer->first != first ||
                              outer->first + outer->nlines - 1 != last || ninstr)) {
        PyErr_SetString(PyExc_ValueError, "parent must be a traced function's code object, "
                                          "with the same lines and no instructions counted");
        return NULL;
    }
    if (last < first || last - first > 1000000 || ninstr < 0 || ninstr > 10000000) {
        PyErr_Format(PyExc_ValueError, "bad line range %d..%d or code size %d", first, last,
                     ninstr);
        return NULL;
    }
    if (name != Py_None && !PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "name must be a str or None");
        return NULL;
    }
    if (t->ncodes == t->cap) {
        line_code **c = sonde_grow(t->codes, &t->cap, (size_t)t->ncodes + 1, sizeof *c,
                                   UINT32_MAX);
        if (!c)
            return PyErr_NoMemory();
        t->codes = c;
    }
    line_code *lc = new_code(code, first, last, ninstr, unit_lines,
                             (size_t)unit_lines_len / sizeof(int32_t), outer,
                             name != Py_None ? name : default_name(code));
    uint32_t *slot = lc ? sonde_u64map_slot(&t->by_code, (uint64_t)(uintptr_t)code, t->ncodes)
                        : NULL;
    if (!slot) {
        if (lc)
            free_code(lc);
        return PyErr_NoMemory();
    }
    *slot = t->ncodes; /* the key may be there from a registration undone */
    if (t->mem && !outer &&
        (lc->site = mem_add_site(t->mem, (PyCodeObject *)code, lc->name, first, lc->nlines,
                                 t->line_events ? lc->hits : NULL)) == MEM_NO_SITE) {
        *slot = SONDE_U64MAP_NONE - 1; /* undone: no index (lines_lookup) */
        free_code(lc);
        return NULL;
    }
    t->codes[t->ncodes++] = lc;
    Py_INCREF(code);
    if (t->slot >= 0 && t->line_events && lines_watch(code) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

/* A free slot (its cache entry: lines_tls), or -1. */
static int free_slot(void)
{
    for (int slot = 0; slot < LINES_MAX_ON; slot++) {
        int used = 0;
        for (int i = 0; i < lines_non; i++)
            used |= lines_on[i]->slot == slot;
        if (!used)
            return slot;
    }
    return -1;
}

static PyObject *tracer_enable(lines_tracer *t, PyObject *unused)
{
    (void)unused;
    if (t->slot >= 0)
        Py_RETURN_NONE;
    if (lines_non > 0 && (t->mem || lines_mem())) {
        PyErr_SetString(PyExc_RuntimeError, "sonde's memory profiler records alone: another "
                                            "sonde line tracer is enabled");
        return NULL;
    }
    int slot = free_slot();
    if (slot < 0) {
        PyErr_Format(PyExc_RuntimeError, "%d sonde line profilers are enabled already: "
                                         "disable one first", LINES_MAX_ON);
        return NULL;
    }
    if (t->start.ns == 0)
        t->start = sonde_clock_mark_now();
    t->slot = slot;
    lines_on[lines_non++] = t;
    int rc = t->mem ? mem_start(t->mem) : 0;
    if (rc == 0 && t->line_events && (rc = lines_non == 1 ? lines_install() : rewatch(t)) < 0 &&
        t->mem) {
        saved_error saved = error_save();
        mem_stop(t->mem);
        error_restore(saved);
    }
    if (rc < 0) {
        take_off(t); /* lines_install left nothing installed; the others' events stay */
        saved_error saved = error_save();
        if (t->line_events && lines_non > 0 && rewatch(t) < 0)
            PyErr_Clear();
        error_restore(saved);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *tracer_disable(lines_tracer *t, PyObject *unused)
{
    (void)unused;
    stop(t);
    if (t->failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* document(source_of, instructions_of=None) -> bytes: see the method's
 * docstring. */
static PyObject *tracer_document(lines_tracer *t, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "source_of", "instructions_of", NULL }; /* constant */
    PyObject *source_of, *instructions_of = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:document", kwlist, &source_of,
                                     &instructions_of))
        return NULL;
    if (!t->mem)
        return lines_document(t, source_of, instructions_of);
    if (t->slot >= 0) {
        PyErr_SetString(PyExc_RuntimeError, "disable the tracer before reading its memory figures");
        return NULL;
    }
    return mem_document(t->mem, source_of);
}

/* The type and its methods: readied once under the GIL at import, then
 * constant. */
static PyObject *tracer_stack_floor(lines_tracer *t, PyObject *code)
{
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "_stack_floor takes a code object");
        return NULL;
    }
    if (t->mem) {
        Py_INCREF(code);
        Py_XSETREF(t->floor, code);
        mem_set_floor(t->mem, code);
    }
    Py_RETURN_NONE;
}

/* In a child just forked (sonde lines and mem --subprocesses, from
 * os.register_at_fork): the counts so far are the parent's, which writes
 * them; the child's start at zero, from now.  Only the forking thread
 * lives on: the others' records go, and its open lines and instructions
 * restart their time now (their hit was the parent's).  Memory mode: the
 * memory profiler's books too (memory.h's mem_forked). */
static PyObject *tracer_forked(lines_tracer *t, PyObject *unused)
{
    (void)unused;
    if (t->mem && mem_forked(t->mem) < 0)
        return NULL;
    for (uint32_t i = 0; i < t->ncodes; i++) {
        line_code *lc = t->codes[i];
        if (!lc->nested) {
            memset(lc->hits, 0, (size_t)lc->nlines * sizeof *lc->hits);
            memset(lc->iters, 0, (size_t)lc->nlines * sizeof *lc->iters);
        }
        memset(lc->ticks, 0, (size_t)lc->nlines * sizeof *lc->ticks);
        if (lc->ninstr) {
            memset(lc->ihits, 0, (size_t)lc->ninstr * sizeof *lc->ihits);
            memset(lc->iticks, 0, (size_t)lc->ninstr * sizeof *lc->iticks);
        }
    }
    uintptr_t own = thread_key();
    uint64_t now = sonde_clock_ticks();
    for (line_thread **at = &t->threads; *at;) {
        line_thread *th = *at;
        if (th->owner == own) {
            for (uint32_t d = 0; d < th->depth; d++)
                th->stack[d].start = th->stack[d].istart = now;
            at = &th->next;
            continue;
        }
        *at = th->next;
        free(th->stack);
        free(th);
    }
    t->start = sonde_clock_mark_now();
    Py_RETURN_NONE;
}

static PyMethodDef tracer_methods[] = {
    { "add_code", (PyCFunction)(void (*)(void))tracer_add_code, METH_VARARGS | METH_KEYWORDS,
      "add_code(code, first_line, last_line, code_units=0, unit_lines=b'', parent=None, "
      "name=None) -> bool: trace this code object's lines (and its instructions when "
      "code_units is its length in code units); unit_lines: the line of each code unit as "
      "int32s (3.12+); parent: a traced function's code object this one is nested in (a "
      "lambda or comprehension), whose hits it counts in, over the same lines; name: what "
      "the document calls it (its qualified name by default)." },
    { "enable", (PyCFunction)tracer_enable, METH_NOARGS, "Start tracing in every thread." },
    { "_stack_floor", (PyCFunction)tracer_stack_floor, METH_O,
      "_stack_floor(code): memory mode: a frame of this code started the program (sonde's "
      "launcher); it and the frames outside it are not the program's, and allocating "
      "stacks end below it." },
    { "disable", (PyCFunction)tracer_disable, METH_NOARGS, "Stop; open lines end now." },
    { "_forked", (PyCFunction)tracer_forked, METH_NOARGS,
      "_forked(): in a child just forked, counts start again from zero, now, in the forking "
      "thread alone (the parent keeps what was counted before)." },
    { "document", (PyCFunction)(void (*)(void))tracer_document, METH_VARARGS | METH_KEYWORDS,
      "document(source_of, instructions_of=None) -> bytes: the JSON document of `sonde lines "
      "-o`, or with memory=True of `sonde mem -o` (docs/formats.md); source_of(file, "
      "line) gives a line's text, instructions_of(code) the (offset, opname, arg, line) of "
      "its instructions when they were counted." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject tracer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sonde._sonde.LineTracer",
    .tp_basicsize = sizeof(lines_tracer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "LineTracer(memory=False, sample_bytes=512, interval_ms=10, line_events=True): "
              "exact per-line hits and time of chosen code objects, and with memory=True "
              "what each line allocates (sampled every sample_bytes on average; 0: every "
              "block) and a timeline of RSS every interval_ms; memory=True with "
              "line_events=False places allocations by reading the stack at each sample "
              "instead of following every line (faster; no hits).",
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
