/* torch_ops.c - PyTorch operators joined to the tracer's calls; see
 * torch_ops.h.
 *
 * The clocks: torch stamps operators with CLOCK_REALTIME nanoseconds (its
 * approximate clock, converted); the tracer counts ticks.  Both are read
 * together when spans start and again when operators are placed, and the
 * line through the two pairs converts one to the other.  Operators of a
 * thread the tracer never saw (autograd's device threads) are placed
 * against the spans of the thread that started torch profiling: beneath
 * what it was running then (its backward() call). */
#include "torch_ops.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/timeline.h"

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void torch_ops_begin(tracer *t)
{
    t->span_ticks0 = sonde_clock_ticks();
    t->span_realtime0 = realtime_ns();
    t->span_native = PyThread_get_thread_native_id();
    t->spans_on = 1;
}

/* The tracer's thread running on native thread tid, else the one that
 * began torch profiling, else NULL. */
static tracer_thread *thread_of(tracer *t, unsigned long long tid)
{
    tracer_thread *begun = NULL;
    for (tracer_thread *th = t->threads; th; th = th->next) {
        uint64_t native = t->profile.threads[th->index].native_id;
        if (native == tid)
            return th;
        if (native == t->span_native && !begun)
            begun = th;
    }
    return begun;
}

/* The operators of the input, converted, in *ops (malloc'd), with each
 * one's thread in *threads.  0, or -1 with an exception. */
static int read_ops(tracer *t, PyObject *tids, PyObject *names, PyObject *starts,
                    PyObject *ends, PyObject *mems, int shapes, sonde_op **ops,
                    tracer_thread ***threads, Py_ssize_t *n, double *ns_per_tick)
{
    *n = PyList_Check(tids) ? PyList_GET_SIZE(tids) : -1;
    if (*n < 0 || !PyList_Check(names) || !PyList_Check(starts) || !PyList_Check(ends) ||
        PyList_GET_SIZE(names) != *n || PyList_GET_SIZE(starts) != *n ||
        PyList_GET_SIZE(ends) != *n ||
        (mems != Py_None && (!PyList_Check(mems) || PyList_GET_SIZE(mems) != *n))) {
        PyErr_SetString(PyExc_TypeError, "_torch_place: lists of one length expected");
        return -1;
    }
    int64_t rt1 = realtime_ns();
    uint64_t ticks1 = sonde_clock_ticks();
    double per_ns = rt1 > t->span_realtime0
                        ? (double)(ticks1 - t->span_ticks0) / (double)(rt1 - t->span_realtime0)
                        : 1.0;
    *ns_per_tick = per_ns > 0 ? 1.0 / per_ns : 1.0;
    *ops = malloc(((size_t)*n + 1) * sizeof **ops);
    *threads = malloc(((size_t)*n + 1) * sizeof **threads);
    if (!*ops || !*threads) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        unsigned long long tid = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(tids, i));
        long long start = PyLong_AsLongLong(PyList_GET_ITEM(starts, i));
        long long end = PyLong_AsLongLong(PyList_GET_ITEM(ends, i));
        long long mem = mems == Py_None ? 0 : PyLong_AsLongLong(PyList_GET_ITEM(mems, i));
        const char *name = PyUnicode_AsUTF8(PyList_GET_ITEM(names, i));
        if (PyErr_Occurred())
            return -1;
        int32_t line = shapes ? SONDE_TORCH_SHAPES_LINE : 0;
        uint32_t f = sonde_profile_func(&t->profile, SONDE_TORCH_FILE, line, name, name,
                                        SONDE_FUNC_TORCH);
        int64_t same = f == SONDE_NO_FUNC ? -1 : sonde_strtab_intern(
            &t->profile.strings, name, sonde_torch_name_len(&t->profile.funcs[f], name));
        if (same < 0) {
            PyErr_NoMemory();
            return -1;
        }
        double from0 = (double)(start - t->span_realtime0) * per_ns;
        double length = (double)(end > start ? end - start : 0) * per_ns;
        uint64_t s = (uint64_t)((double)t->span_ticks0 + from0);
        (*ops)[i] = (sonde_op){ .start = s, .end = s + (uint64_t)length, .func = f,
                                .same = (uint32_t)same, .mem = mem };
        (*threads)[i] = thread_of(t, tid);
    }
    return 0;
}

/* Adds each placed operator's bytes to its node's (cpu_mem).  0, or -1. */
static int add_memory(sonde_profile *p, const sonde_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ops[i].node == SONDE_NO_NODE)
            continue;
        int64_t *m = sonde_profile_cpu_mem(p, ops[i].node);
        if (!m)
            return -1;
        *m = (*m == SONDE_NO_MEM ? 0 : *m) + ops[i].mem;
    }
    return 0;
}

/* Places the operators of each thread in turn (those of th are gathered
 * into the front of `mine`), with their memory when it was recorded, and
 * adds its calls and operators to the profile's timeline when it keeps
 * one.  0, or -1 on out of memory. */
static int place_all(tracer *t, sonde_op *ops, tracer_thread **threads, Py_ssize_t n,
                     sonde_op *mine, int memory, double ns_per_tick, size_t *top,
                     size_t *placed)
{
    for (tracer_thread *th = t->threads; th; th = th->next) {
        size_t k = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (threads[i] == th)
                mine[k++] = ops[i];
        if (k == 0 && th->nspans == 0)
            continue;
        if (sonde_ops_place(&t->profile, th->root, th->spans, th->nspans, mine, k, top,
                            placed) < 0 ||
            (memory && add_memory(&t->profile, mine, k) < 0) ||
            sonde_timeline_add(&t->profile, th->index, th->spans, th->nspans, mine, k,
                               t->span_ticks0, ns_per_tick) < 0)
            return -1;
    }
    return 0;
}

static void free_spans(tracer *t)
{
    for (tracer_thread *th = t->threads; th; th = th->next) {
        free(th->spans);
        th->spans = NULL;
        th->nspans = th->spans_cap = 0;
    }
    t->nspans = 0;
    t->spans_on = 0;
}

PyObject *torch_ops_place(tracer *t, PyObject *tids, PyObject *names, PyObject *starts,
                          PyObject *ends, PyObject *mems, int shapes, uint64_t budget)
{
    sonde_op *ops = NULL, *mine = NULL;
    tracer_thread **threads = NULL;
    Py_ssize_t n = 0;
    size_t top = 0, placed = 0;
    double ns_per_tick = 1.0;
    PyObject *r = NULL;
    sonde_profile *p = &t->profile;
    p->nslices = p->slices_dropped = 0;
    p->slices_budget = budget;
    if (budget && !p->pid)
        p->pid = (int)getpid(); /* the trace's process */
    if (read_ops(t, tids, names, starts, ends, mems, shapes, &ops, &threads, &n,
                 &ns_per_tick) == 0) {
        mine = malloc(((size_t)n + 1) * sizeof *mine);
        if (!mine || place_all(t, ops, threads, n, mine, mems != Py_None, ns_per_tick, &top,
                               &placed) < 0)
            PyErr_NoMemory();
        else
            r = Py_BuildValue("(nnniKK)", n, (Py_ssize_t)top, (Py_ssize_t)placed,
                              t->spans_full, (unsigned long long)p->nslices,
                              (unsigned long long)p->slices_dropped);
    }
    free(ops);
    free(mine);
    free(threads);
    free_spans(t);
    return r;
}

int torch_region_enter(tracer *t, PyObject *name)
{
    tracer_thread *th = hook_current(t);
    if (!th)
        return 0;
    Py_INCREF(name);
    PyUnicode_InternInPlace(&name);
    /* The interned name is the key: held by the tracer (tracer_new_node)
     * once its node exists, so its address stays this region's. */
    uint32_t below = th->depth ? th->depth - 1 : 0;
    uint32_t parent = below ? th->stack[below - 1].node : th->root;
    uint32_t node = sonde_profile_find_child(&t->profile, parent, name);
    if (node == SONDE_NO_NODE)
        node = tracer_new_node(th, parent, name, name, NULL);
    Py_DECREF(name);
    if (node == SONDE_NO_NODE || (th->depth == th->cap && tracer_grow_stack(th) < 0)) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t now = sonde_clock_ticks();
    if (th->depth)
        memmove(&th->stack[below + 1], &th->stack[below], sizeof *th->stack);
    th->stack[below] = (tracer_frame){
        .key = name, .node = node, .start = th->depth ? th->stack[below + 1].start : now,
    };
    th->depth++;
    return 1;
}

int torch_region_exit(tracer *t, PyObject *name)
{
    tracer_thread *th = hook_current(t);
    if (!th)
        return 0;
    Py_INCREF(name);
    PyUnicode_InternInPlace(&name);
    uint32_t k = th->depth;
    while (k > 0 && th->stack[k - 1].key != name)
        k--;
    Py_DECREF(name);
    if (k == 0)
        return 0;
    k--;
    uint64_t now = sonde_clock_ticks();
    tracer_frame *f = &th->stack[k];
    /* The calls open above the region go on: the time they have run so
     * far stays theirs, not the region's own, and their caller below
     * counts it when they end. */
    uint64_t elapsed = now - f->start;
    uint64_t above = k + 1 < th->depth ? now - th->stack[k + 1].start : 0;
    if (above > elapsed)
        above = elapsed;
    uint64_t busy = f->child_ticks + above;
    sonde_node *n = &t->profile.nodes[f->node];
    n->calls++;
    n->total += elapsed;
    n->self += busy < elapsed ? elapsed - busy : 0;
    if (k > 0)
        th->stack[k - 1].child_ticks += elapsed - above;
    if (t->spans_on && elapsed >= TRACER_SPAN_MIN)
        tracer_log_span(th, f->node, f->start, now);
    memmove(&th->stack[k], &th->stack[k + 1], (th->depth - k - 1) * sizeof *th->stack);
    th->depth--;
    return 1;
}
