/* mem_results.c - sonde mem's figures for Python: per line, the bytes
 * still alive at the end (net), the stacks that allocated them (leaks) and
 * the timeline.  The shapes are LineTracer.memory()'s docstring. */
#include <stdlib.h>
#include <string.h>

#include "../interp/code_name.h"
#include "../lines/lines_state.h"

uint32_t mem_add_function(mem_data *m, PyCodeObject *code)
{
    mem_lock(m); /* what it allocates is sonde's, not the program's */
    uint32_t func = sonde_code_func(&m->stacks, code);
    mem_unlock(m);
    return func;
}

/* The bytes alive per stack node: the followed blocks summed by node
 * (of a mapping, its touched part; the rest is reserved). */
typedef struct node_bytes {
    uint64_t *all, *native, *reserved;
} node_bytes;

static int sum_live(const mem_data *m, node_bytes *nb)
{
    uint32_t n = m->stacks.nnodes;
    nb->all = calloc(n ? n : 1, sizeof(uint64_t));
    nb->native = calloc(n ? n : 1, sizeof(uint64_t));
    nb->reserved = calloc(n ? n : 1, sizeof(uint64_t));
    if (!nb->all || !nb->native || !nb->reserved)
        return -1;
    for (uint64_t i = 0; i < m->live.nslots; i++) {
        const livemap_entry *e = &m->live.slots[i];
        if (!e->addr || e->node >= n || e->kind == MEM_MAPPED)
            continue;
        nb->all[e->node] += e->bytes;
        if (e->kind == MEM_NATIVE)
            nb->native[e->node] += e->bytes;
    }
    for (uint32_t i = 0; i < m->mapped.n; i++) {
        const mem_mapping *mp = &m->mapped.items[i];
        if (mp->node >= n)
            continue;
        nb->all[mp->node] += mp->touched;
        nb->native[mp->node] += mp->touched;
        nb->reserved[mp->node] += mp->len - mp->touched;
    }
    return 0;
}

/* The traced line a stack node stands for, or NULL. */
static line_mem *node_line(lines_tracer *t, const uint32_t *code_of, const sonde_node *node)
{
    if (node->func >= t->mem->stacks.nfuncs || code_of[node->func] == UINT32_MAX)
        return NULL;
    line_code *lc = t->codes[code_of[node->func]];
    int k = node->line - lc->first;
    return k >= 0 && k < lc->nlines ? &lc->mem[k] : NULL;
}

/* Each line's net and reserved bytes: the blocks alive whose stack
 * passes through it, each counted once however often the line recurs in
 * that stack. */
static void add_net(lines_tracer *t, const uint32_t *code_of, const node_bytes *nb)
{
    const mem_data *m = t->mem;
    for (uint32_t i = 0; i < t->ncodes; i++)
        for (int k = 0; k < t->codes[i]->nlines; k++) {
            line_mem *lm = &t->codes[i]->mem[k];
            lm->net = lm->reserved = lm->stamp = 0;
        }
    uint32_t walk = 0;
    for (uint32_t n = 1; n < m->stacks.nnodes; n++) {
        if (!nb->all[n] && !nb->reserved[n])
            continue;
        walk++;
        for (uint32_t x = n; x != SONDE_NO_NODE && x != m->root; x = m->stacks.nodes[x].parent) {
            line_mem *lm = node_line(t, code_of, &m->stacks.nodes[x]);
            if (lm && lm->stamp != walk) {
                lm->stamp = walk;
                lm->net += nb->all[n];
                lm->reserved += nb->reserved[n];
            }
        }
    }
}

/* (code, first line, [(hits, alloc, freed, net, reserved, peak heap, rss,
 * rss increment)] per line). */
static PyObject *line_figures(const line_code *lc)
{
    PyObject *lines = PyList_New(lc->nlines);
    for (int k = 0; lines && k < lc->nlines; k++) {
        const line_mem *m = &lc->mem[k];
        PyObject *v = Py_BuildValue("(KKKKKKKL)", (unsigned long long)lc->hits[k],
                                    (unsigned long long)m->alloc, (unsigned long long)m->freed,
                                    (unsigned long long)m->net, (unsigned long long)m->reserved,
                                    (unsigned long long)m->peak_heap,
                                    (unsigned long long)m->rss_max, (long long)m->rss_increment);
        if (!v) {
            Py_CLEAR(lines);
            break;
        }
        PyList_SET_ITEM(lines, k, v);
    }
    PyObject *item = lines ? Py_BuildValue("(OiO)", lc->code, lc->first, lines) : NULL;
    Py_XDECREF(lines);
    return item;
}

/* The stack of node n, outermost first: [(code index, line)]. */
static PyObject *stack_of(lines_tracer *t, const uint32_t *code_of, uint32_t n)
{
    const mem_data *m = t->mem;
    PyObject *stack = PyList_New(0);
    for (uint32_t x = n; stack && x != SONDE_NO_NODE && x != m->root;
         x = m->stacks.nodes[x].parent) {
        const sonde_node *node = &m->stacks.nodes[x];
        uint32_t code = node->func < m->stacks.nfuncs ? code_of[node->func] : UINT32_MAX;
        PyObject *frame = code == UINT32_MAX ? NULL : Py_BuildValue("(Ii)", code, node->line);
        if (!frame || PyList_Insert(stack, 0, frame) < 0)
            Py_CLEAR(stack);
        Py_XDECREF(frame);
    }
    return stack;
}

static const node_bytes *sort_bytes; /* qsort has no context argument; GIL */
static int cmp_nodes(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint64_t x = sort_bytes->all[i], y = sort_bytes->all[j];
    if (x == y) {
        x = sort_bytes->reserved[i];
        y = sort_bytes->reserved[j];
    }
    return x < y ? 1 : x > y ? -1 : 0;
}

/* [(bytes, native bytes, reserved bytes, stack)] per allocating stack with
 * blocks alive, largest first (then the most reserved). */
static PyObject *leaks(lines_tracer *t, const uint32_t *code_of, const node_bytes *nb)
{
    const mem_data *m = t->mem;
    uint32_t *order = malloc((m->stacks.nnodes ? m->stacks.nnodes : 1) * sizeof *order);
    if (!order)
        return PyErr_NoMemory();
    uint32_t count = 0;
    for (uint32_t n = 1; n < m->stacks.nnodes; n++)
        if (nb->all[n] || nb->reserved[n])
            order[count++] = n;
    sort_bytes = nb;
    qsort(order, count, sizeof *order, cmp_nodes);
    PyObject *out = PyList_New(0);
    for (uint32_t i = 0; out && i < count; i++) {
        PyObject *stack = stack_of(t, code_of, order[i]);
        PyObject *item = stack ? Py_BuildValue("(KKKO)", (unsigned long long)nb->all[order[i]],
                                               (unsigned long long)nb->native[order[i]],
                                               (unsigned long long)nb->reserved[order[i]], stack)
                               : NULL;
        if (!item || PyList_Append(out, item) < 0)
            Py_CLEAR(out);
        Py_XDECREF(item);
        Py_XDECREF(stack);
    }
    free(order);
    return out;
}

static PyObject *timeline(const mem_data *m)
{
    PyObject *points = PyList_New(m->npoints);
    for (uint32_t i = 0; points && i < m->npoints; i++) {
        const mem_point *p = &m->points[i];
        PyObject *v = Py_BuildValue("(KKKK)", (unsigned long long)(p->ns - m->start_ns),
                                    (unsigned long long)p->rss, (unsigned long long)p->heap,
                                    (unsigned long long)p->reserved);
        if (!v) {
            Py_CLEAR(points);
            break;
        }
        PyList_SET_ITEM(points, i, v);
    }
    return points;
}

static PyObject *spans(const mem_data *m)
{
    PyObject *out = PyList_New(m->nspans);
    for (uint32_t i = 0; out && i < m->nspans; i++) {
        const mem_span *s = &m->spans[i];
        uint64_t end = s->end ? s->end : s->start;
        PyObject *v = Py_BuildValue("(IKK)", s->code, (unsigned long long)(s->start - m->start_ns),
                                    (unsigned long long)(end - m->start_ns));
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

PyObject *mem_results(lines_tracer *t, PyObject *unused)
{
    (void)unused;
    mem_data *m = t->mem;
    if (!m) {
        PyErr_SetString(PyExc_ValueError, "this LineTracer was not made with memory=True");
        return NULL;
    }
    if (lines_active == t) {
        PyErr_SetString(PyExc_RuntimeError, "disable the tracer before reading its memory figures");
        return NULL;
    }
    node_bytes nb = { NULL, NULL, NULL };
    uint32_t *code_of = malloc((m->stacks.nfuncs ? m->stacks.nfuncs : 1) * sizeof *code_of);
    PyObject *out = NULL, *codes = NULL;
    if (!code_of || sum_live(m, &nb) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    memset(code_of, 0xff, (m->stacks.nfuncs ? m->stacks.nfuncs : 1) * sizeof *code_of);
    for (uint32_t i = 0; i < t->ncodes; i++)
        if (t->codes[i]->func < m->stacks.nfuncs)
            code_of[t->codes[i]->func] = i;
    add_net(t, code_of, &nb);
    codes = PyList_New(t->ncodes);
    for (uint32_t i = 0; codes && i < t->ncodes; i++) {
        PyObject *item = line_figures(t->codes[i]);
        if (!item)
            Py_CLEAR(codes);
        else
            PyList_SET_ITEM(codes, i, item);
    }
    PyObject *leak_list = codes ? leaks(t, code_of, &nb) : NULL;
    PyObject *points = leak_list ? timeline(m) : NULL;
    PyObject *span_list = points ? spans(m) : NULL;
    if (span_list)
        out = Py_BuildValue(
            "{sOsOsOsOsKsOsKsKsKsKsKsKsd}", "codes", codes, "leaks", leak_list, "timeline", points,
            "spans", span_list, "sample_bytes", (unsigned long long)m->sample_bytes, "native",
            m->native ? Py_True : Py_False, "heap_peak", (unsigned long long)m->heap_peak,
            "reserved", (unsigned long long)m->reserved,
            "rss_high_water", (unsigned long long)m->rss_high_water, "untracked_bytes",
            (unsigned long long)m->untracked, "samples", (unsigned long long)m->samples,
            "spans_dropped", (unsigned long long)m->spans_dropped, "interval_ms",
            (double)m->interval_ns / 1e6);
    Py_XDECREF(leak_list);
    Py_XDECREF(points);
    Py_XDECREF(span_list);
done:
    Py_XDECREF(codes);
    free(code_of);
    free(nb.all);
    free(nb.native);
    free(nb.reserved);
    return out;
}
