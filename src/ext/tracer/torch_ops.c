/* torch_ops.c - PyTorch operators joined to the tracer's calls; see
 * torch_ops.h.
 *
 * The clocks: torch stamps operators with CLOCK_REALTIME nanoseconds (its
 * approximate clock, converted); the tracer counts ticks.  Both are read
 * together (sonde_clock_mark_against) when spans start and again when
 * operators are placed, and the line through the two pairs converts one
 * to the other.  A pair read apart by even a few hundred nanoseconds would
 * move every operator that much against the calls, and an operator that
 * starts that soon after the C call running it (a detach, a clone) out of
 * it.  Operators of a
 * thread the tracer never saw (autograd's device threads) are placed
 * against the spans of the thread that started torch profiling: beneath
 * what it was running then (its backward() call). */
#include "torch_ops.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/step_parts.h"
#include "../../core/timeline.h"

void torch_ops_begin(tracer *t)
{
    sonde_clock_mark mark = sonde_clock_mark_against(CLOCK_REALTIME);
    t->span_ticks0 = mark.ticks;
    t->span_realtime0 = (int64_t)mark.ns;
    t->span_native = PyThread_get_thread_native_id();
    t->spans_since = t->span_ticks0;
    t->spans_on = 1;
}

/* Logging on again: the spans cut short when it stopped whose calls are
 * still open go (they end, or are cut again, while logging). */
static void spans_resume(tracer *t)
{
    for (tracer_thread *th = t->threads; th; th = th->next) {
        size_t base = th->nspans - th->cut, open = 0;
        while (open < th->cut && open < th->depth &&
               th->spans[base + open].start == th->stack[open].start &&
               th->spans[base + open].node == th->stack[open].node)
            open++;
        memmove(&th->spans[base], &th->spans[base + open],
                (th->cut - open) * sizeof *th->spans);
        th->nspans -= open;
        t->nspans -= open;
        th->cut = 0;
    }
    t->spans_since = sonde_clock_ticks();
    t->spans_on = 1;
}

/* Logging off: each thread's open calls logged as ending now, outermost
 * first, so that the operators recorded inside them find them. */
static void spans_cut(tracer *t)
{
    uint64_t now = sonde_clock_ticks();
    for (tracer_thread *th = t->threads; th; th = th->next) {
        th->cut = 0;
        for (uint32_t i = 0; i < th->depth && !t->spans_full; i++) {
            tracer_log_span(th, th->stack[i].node, th->stack[i].start, now);
            th->cut += !t->spans_full;
        }
    }
    t->spans_on = 0;
}

void torch_ops_spans(tracer *t, int on, int drop)
{
    if (drop) {
        for (tracer_thread *th = t->threads; th; th = th->next)
            th->nspans = th->cut = 0;
        t->nspans = 0;
        t->spans_on = 0;
    } else if (on && !t->spans_on) {
        spans_resume(t);
    } else if (!on && t->spans_on) {
        spans_cut(t);
    }
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

/* A list of n items, or None when may_be_none: whether it is one. */
static int list_of(PyObject *list, Py_ssize_t n, int may_be_none)
{
    if (list == Py_None)
        return may_be_none;
    return PyList_Check(list) && PyList_GET_SIZE(list) == n;
}

/* An int item of a list that may be None (then 0). */
static long long item_or_zero(PyObject *list, Py_ssize_t i)
{
    return list == Py_None ? 0 : PyLong_AsLongLong(PyList_GET_ITEM(list, i));
}

/* The torch function of this name and line; SONDE_NO_FUNC with an
 * exception on out of memory. */
static uint32_t torch_func(tracer *t, const char *name, int32_t line)
{
    uint32_t f = sonde_profile_func(&t->profile, SONDE_TORCH_FILE, line, name, name,
                                    SONDE_FUNC_TORCH);
    if (f == SONDE_NO_FUNC)
        PyErr_NoMemory();
    return f;
}

/* The operators of the input, converted, in *ops (malloc'd), with each
 * one's thread in *threads.  0, or -1 with an exception. */
static int read_ops(tracer *t, const torch_input *in, int shapes, sonde_op **ops,
                    tracer_thread ***threads, Py_ssize_t *n, double *ns_per_tick)
{
    *n = PyList_Check(in->tids) ? PyList_GET_SIZE(in->tids) : -1;
    if (*n < 0 || !list_of(in->names, *n, 0) || !list_of(in->starts, *n, 0) ||
        !list_of(in->ends, *n, 0) || !list_of(in->mems, *n, 1) ||
        !list_of(in->device_mems, *n, 1) || !list_of(in->regions, *n, 1) ||
        (in->kernels != Py_None && !PyList_Check(in->kernels)) ||
        (in->steps != Py_None && !PyList_Check(in->steps))) {
        PyErr_SetString(PyExc_TypeError, "_torch_place: lists of one length expected");
        return -1;
    }
    sonde_clock_mark mark = sonde_clock_mark_against(CLOCK_REALTIME);
    int64_t rt1 = (int64_t)mark.ns;
    uint64_t ticks1 = mark.ticks;
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
        unsigned long long tid = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(in->tids, i));
        long long start = PyLong_AsLongLong(PyList_GET_ITEM(in->starts, i));
        long long end = PyLong_AsLongLong(PyList_GET_ITEM(in->ends, i));
        long long mem = item_or_zero(in->mems, i), device_mem = item_or_zero(in->device_mems, i);
        const char *name = PyUnicode_AsUTF8(PyList_GET_ITEM(in->names, i));
        if (PyErr_Occurred())
            return -1;
        uint32_t f = torch_func(t, name, shapes ? SONDE_TORCH_SHAPES_LINE : 0);
        if (f == SONDE_NO_FUNC)
            return -1;
        if (item_or_zero(in->regions, i))
            t->profile.funcs[f].region = 1;
        int64_t same = sonde_strtab_intern(&t->profile.strings, name,
                                           sonde_torch_name_len(&t->profile.funcs[f], name));
        if (same < 0) {
            PyErr_NoMemory();
            return -1;
        }
        double from0 = (double)(start - t->span_realtime0) * per_ns;
        double length = (double)(end > start ? end - start : 0) * per_ns;
        uint64_t s = (uint64_t)((double)t->span_ticks0 + from0);
        (*ops)[i] = (sonde_op){ .start = s, .end = s + (uint64_t)length, .func = f,
                                .same = (uint32_t)same, .id = (uint32_t)i, .mem = mem,
                                .device_mem = device_mem };
        (*threads)[i] = thread_of(t, tid);
    }
    return 0;
}

/* Adds to a node's figure (made when new).  0, or -1. */
static int add_figure(sonde_profile *p, enum sonde_node_figure which, uint32_t node,
                      int64_t value)
{
    int64_t *m = sonde_profile_figure(p, which, node);
    if (!m)
        return -1;
    *m = (*m == SONDE_NO_FIGURE ? 0 : *m) + value;
    return 0;
}

/* Adds each placed operator's bytes to its node's figures.  0, or -1. */
static int add_memory(sonde_profile *p, const sonde_op *ops, size_t n, int device)
{
    for (size_t i = 0; i < n; i++)
        if (ops[i].node != SONDE_NO_NODE &&
            (add_figure(p, SONDE_CPU_MEM, ops[i].node, ops[i].mem) < 0 ||
             (device && add_figure(p, SONDE_DEVICE_MEM, ops[i].node, ops[i].device_mem) < 0)))
            return -1;
    return 0;
}

/* Tick `at` on the steps' clock (nanoseconds since the operators' clock
 * began, as keep_steps puts them). */
static uint64_t steps_clock(const tracer *t, uint64_t at, double ns_per_tick)
{
    return at > t->span_ticks0 ? (uint64_t)((double)(at - t->span_ticks0) * ns_per_tick) : 0;
}

/* The record_function region the operator or region at node ran in: the
 * nearest torch node above it, past the Python calls between, when that
 * is a region; else SONDE_NO_NODE. */
static uint32_t region_above(const sonde_profile *p, uint32_t node)
{
    uint32_t up = p->nodes[node].parent;
    for (uint32_t depth = 0; up != SONDE_NO_NODE && depth < p->nnodes; depth++) {
        uint32_t f = p->nodes[up].func;
        if (f == SONDE_NO_FUNC) /* a thread's root */
            return SONDE_NO_NODE;
        if (p->funcs[f].kind == SONDE_FUNC_TORCH)
            return p->funcs[f].region ? up : SONDE_NO_NODE;
        up = p->nodes[up].parent;
    }
    return SONDE_NO_NODE;
}

static int is_region(const sonde_profile *p, uint32_t node)
{
    uint32_t f = p->nodes[node].func;
    return f != SONDE_NO_FUNC && p->funcs[f].kind == SONDE_FUNC_TORCH && p->funcs[f].region;
}

/* With steps: one thread's placed operators and its record_function
 * regions (spans of region nodes), each into its node's part of the step
 * it began in.  A region's (and a top-level operator's: one nested in
 * another has left its holder's self time already, in sonde_ops_place)
 * time leaves the self time of the region it ran in, Python calls
 * between, as torch.profiler counts a region's.  0, or -1 on out of
 * memory. */
static int add_step_parts(tracer *t, const sonde_op *ops, size_t n, const sonde_span *spans,
                          size_t nspans, double ns_per_tick)
{
    sonde_profile *p = &t->profile;
    for (size_t i = 0; p->nsteps && i < nspans; i++) {
        if (!is_region(p, spans[i].node))
            continue;
        uint64_t d = spans[i].end > spans[i].start ? spans[i].end - spans[i].start : 0;
        uint32_t step = sonde_step_at(p, steps_clock(t, spans[i].start, ns_per_tick));
        uint32_t outer = region_above(p, spans[i].node);
        if (sonde_step_part_add(p, spans[i].node, step, 1, d, (int64_t)d) < 0 ||
            (outer != SONDE_NO_NODE && sonde_step_part_add(p, outer, step, 0, 0, -(int64_t)d) < 0))
            return -1;
    }
    for (size_t i = 0; p->nsteps && i < n; i++) {
        if (ops[i].node == SONDE_NO_NODE)
            continue;
        uint32_t step = sonde_step_at(p, steps_clock(t, ops[i].start, ns_per_tick));
        uint64_t d = ops[i].end > ops[i].start ? ops[i].end - ops[i].start : 0;
        uint32_t up = p->nodes[ops[i].node].parent;
        uint32_t f = up == SONDE_NO_NODE ? SONDE_NO_FUNC : p->nodes[up].func;
        uint32_t region = f != SONDE_NO_FUNC && p->funcs[f].kind == SONDE_FUNC_TORCH
                              ? SONDE_NO_NODE /* nested in an operator */
                              : region_above(p, ops[i].node);
        if (sonde_step_part_add(p, ops[i].node, step, 1, d, (int64_t)ops[i].self) < 0 ||
            (region != SONDE_NO_NODE &&
             sonde_step_part_add(p, region, step, 0, 0, -(int64_t)d) < 0))
            return -1;
    }
    return 0;
}

/* Places the operators of each thread in turn (those of th are gathered
 * into the front of `mine`), with their memory when it was recorded, and
 * adds its calls and operators to the profile's timeline when it keeps
 * one, and to the steps' parts when there are steps; home[i] is then the
 * node operator i's kernels go beneath.  0, or -1 on out of memory. */
static int place_all(tracer *t, const torch_input *in, sonde_op *ops, tracer_thread **threads,
                     Py_ssize_t n, sonde_op *mine, uint32_t *home, double ns_per_tick,
                     size_t *top, size_t *placed)
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
            (in->mems != Py_None &&
             add_memory(&t->profile, mine, k, in->device_mems != Py_None) < 0) ||
            add_step_parts(t, mine, k, th->spans, th->nspans, ns_per_tick) < 0 ||
            sonde_timeline_add(&t->profile, th->index, th->spans, th->nspans, mine, k,
                               t->span_ticks0, ns_per_tick) < 0)
            return -1;
        for (size_t j = 0; j < k; j++)
            home[mine[j].id] = mine[j].home;
    }
    return 0;
}

/* One kernel of the input: beneath its operator's home (else `orphans`,
 * the root of the thread that began recording), its launch counted and
 * its time on the GPU added; with a timeline, its slice into *slice.  1
 * when placed, 0 when there is nowhere to place it, -1 with an exception. */
static int place_kernel(tracer *t, PyObject *item, const uint32_t *home, Py_ssize_t n,
                        uint32_t orphans, sonde_slice *slice)
{
    Py_ssize_t op;
    const char *name;
    long long start, end, device, stream;
    if (!PyTuple_Check(item) ||
        !PyArg_ParseTuple(item, "nsLLLL", &op, &name, &start, &end, &device, &stream)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_torch_place: a kernel is a tuple (operator, "
                            "name, start, end, device, stream)");
        return -1;
    }
    uint32_t under = op >= 0 && op < n ? home[op] : SONDE_NO_NODE;
    if (under == SONDE_NO_NODE)
        under = orphans;
    uint32_t f = torch_func(t, name, SONDE_TORCH_KERNEL_LINE);
    if (f == SONDE_NO_FUNC)
        return -1;
    if (under == SONDE_NO_NODE)
        return 0;
    sonde_profile *p = &t->profile;
    uint32_t node = sonde_profile_child_for(p, under, f, 0);
    int64_t track = node == SONDE_NO_NODE ? -1 : sonde_profile_device_track(p, device, stream);
    if (track < 0 || add_figure(p, SONDE_DEVICE_NS, node, end > start ? end - start : 0) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    p->nodes[node].calls++;
    uint64_t from = start > t->span_realtime0 ? (uint64_t)(start - t->span_realtime0) : 0;
    uint64_t to = end > t->span_realtime0 ? (uint64_t)(end - t->span_realtime0) : 0;
    *slice = (sonde_slice){ .start_ns = from, .end_ns = to > from ? to : from,
                            .thread = SONDE_SLICE_DEVICE | (uint32_t)track, .node = node };
    return 1;
}

/* The input's kernels, placed, and with a timeline their slices.  0, or
 * -1 with an exception. */
static int place_kernels(tracer *t, const torch_input *in, const uint32_t *home, Py_ssize_t n)
{
    if (in->kernels == Py_None)
        return 0;
    Py_ssize_t nk = PyList_GET_SIZE(in->kernels);
    sonde_slice *slices = malloc(((size_t)nk + 1) * sizeof *slices);
    if (!slices) {
        PyErr_NoMemory();
        return -1;
    }
    tracer_thread *begun = thread_of(t, t->span_native);
    uint32_t orphans = begun ? begun->root : SONDE_NO_NODE;
    size_t kept = 0;
    int rc = 0;
    for (Py_ssize_t i = 0; i < nk && rc >= 0; i++) {
        rc = place_kernel(t, PyList_GET_ITEM(in->kernels, i), home, n, orphans, &slices[kept]);
        kept += rc > 0;
    }
    if (rc >= 0 && t->profile.slices_budget &&
        sonde_timeline_add_kernels(&t->profile, slices, kept) < 0) {
        PyErr_NoMemory();
        rc = -1;
    }
    free(slices);
    return rc < 0 ? -1 : 0;
}

/* The input's training steps into the profile, on the slices' clock (as
 * a kernel's: nanoseconds since the operators' clock began).  0, or -1
 * with an exception. */
static int keep_steps(tracer *t, const torch_input *in)
{
    sonde_profile *p = &t->profile;
    free(p->steps);
    p->steps = NULL;
    p->nsteps = 0;
    if (in->steps == Py_None)
        return 0;
    Py_ssize_t n = PyList_GET_SIZE(in->steps);
    if (n >= (Py_ssize_t)UINT32_MAX || !(p->steps = malloc(((size_t)n + 1) * sizeof *p->steps))) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long tid;
        long long start, end;
        unsigned int number;
        PyObject *item = PyList_GET_ITEM(in->steps, i);
        if (!PyTuple_Check(item) ||
            !PyArg_ParseTuple(item, "KLLI", &tid, &start, &end, &number)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_torch_place: a step is a tuple (thread, "
                                "start, end, number)");
            return -1;
        }
        tracer_thread *th = thread_of(t, tid);
        if (!th)
            continue;
        uint64_t from = start > t->span_realtime0 ? (uint64_t)(start - t->span_realtime0) : 0;
        uint64_t to = end > t->span_realtime0 ? (uint64_t)(end - t->span_realtime0) : 0;
        p->steps[p->nsteps++] = (sonde_step){ .start_ns = from, .end_ns = to > from ? to : from,
                                              .thread = th->index, .number = number };
    }
    return 0;
}

static void free_spans(tracer *t)
{
    for (tracer_thread *th = t->threads; th; th = th->next) {
        free(th->spans);
        th->spans = NULL;
        th->nspans = th->spans_cap = 0;
        th->cut = 0;
    }
    t->nspans = 0;
    t->spans_on = 0;
}

PyObject *torch_ops_place(tracer *t, const torch_input *in, int shapes, uint64_t budget)
{
    sonde_op *ops = NULL, *mine = NULL;
    tracer_thread **threads = NULL;
    uint32_t *home = NULL;
    Py_ssize_t n = 0;
    size_t top = 0, placed = 0;
    double ns_per_tick = 1.0;
    PyObject *r = NULL;
    sonde_profile *p = &t->profile;
    p->nslices = p->slices_dropped = 0;
    p->slices_budget = budget;
    if (budget && !p->pid)
        p->pid = (int)getpid(); /* the trace's process */
    if (read_ops(t, in, shapes, &ops, &threads, &n, &ns_per_tick) == 0 &&
        keep_steps(t, in) == 0) {
        mine = malloc(((size_t)n + 1) * sizeof *mine);
        home = malloc(((size_t)n + 1) * sizeof *home);
        for (Py_ssize_t i = 0; home && i < n; i++)
            home[i] = SONDE_NO_NODE;
        if (!mine || !home ||
            place_all(t, in, ops, threads, n, mine, home, ns_per_tick, &top, &placed) < 0)
            PyErr_NoMemory();
        else if (place_kernels(t, in, home, n) == 0)
            r = Py_BuildValue("(nnniKK)", n, (Py_ssize_t)top, (Py_ssize_t)placed,
                              t->spans_full, (unsigned long long)p->nslices,
                              (unsigned long long)p->slices_dropped);
    }
    free(ops);
    free(mine);
    free(home);
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
    /* (one begun before logging last began torch did not record either) */
    if (t->spans_on && elapsed >= TRACER_SPAN_MIN && f->start >= t->spans_since)
        tracer_log_span(th, f->node, f->start, now);
    memmove(&th->stack[k], &th->stack[k + 1], (th->depth - k - 1) * sizeof *th->stack);
    th->depth--;
    return 1;
}
