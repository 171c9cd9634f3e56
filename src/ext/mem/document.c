/* document.c - sonde mem's figures for Python: per line, the bytes still
 * alive at the end (net), the stacks that allocated them (leaks) and the
 * timeline.  The shapes are LineTracer.memory()'s docstring. */
#include <stdlib.h>

#include "../../mem/account.h"
#include "memory.h"

/* (code, first line, [(hits, alloc, freed, net, reserved, peak heap, rss,
 * rss increment)] per line). */
static PyObject *line_figures(const mem_site *s)
{
    PyObject *lines = PyList_New(s->nlines);
    for (int k = 0; lines && k < s->nlines; k++) {
        const mem_line_figures *f = &s->lines[k];
        PyObject *v = Py_BuildValue("(KKKKKKKL)", (unsigned long long)(s->hits ? s->hits[k] : 0),
                                    (unsigned long long)f->alloc, (unsigned long long)f->freed,
                                    (unsigned long long)f->net, (unsigned long long)f->reserved,
                                    (unsigned long long)f->peak_heap,
                                    (unsigned long long)f->rss_max, (long long)f->rss_increment);
        if (!v) {
            Py_CLEAR(lines);
            break;
        }
        PyList_SET_ITEM(lines, k, v);
    }
    PyObject *item = lines ? Py_BuildValue("(OiO)", (PyObject *)s->code, s->first, lines) : NULL;
    Py_XDECREF(lines);
    return item;
}

/* The stack of node n, outermost first: [(site, line)]. */
static PyObject *stack_of(const mem_data *m, uint32_t n)
{
    PyObject *stack = PyList_New(0);
    for (uint32_t x = n; stack && x != SONDE_NO_NODE && x != m->root;
         x = m->stacks.nodes[x].parent) {
        int line = 0;
        const mem_site *s = mem_node_site(m, x, &line);
        PyObject *frame = s ? Py_BuildValue("(Ii)", s->index, line) : NULL;
        if (!frame || PyList_Insert(stack, 0, frame) < 0)
            Py_CLEAR(stack);
        Py_XDECREF(frame);
    }
    return stack;
}

/* [(bytes, native bytes, reserved bytes, stack)] per allocating stack with
 * blocks alive, largest first (then the most reserved). */
static PyObject *leaks(const mem_data *m, const mem_node_bytes *nb)
{
    uint32_t count = 0, *order = mem_leaks(m, nb, &count);
    if (!order)
        return PyErr_NoMemory();
    PyObject *out = PyList_New(0);
    for (uint32_t i = 0; out && i < count; i++) {
        PyObject *stack = stack_of(m, order[i]);
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
        PyObject *v = Py_BuildValue("(IKK)", s->site, (unsigned long long)(s->start - m->start_ns),
                                    (unsigned long long)(end - m->start_ns));
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

PyObject *mem_document(mem_data *m, PyObject *source_of)
{
    (void)source_of;
    mem_node_bytes nb = { 0 };
    PyObject *out = NULL, *codes = NULL;
    if (mem_figures_net(m, &nb) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    codes = PyList_New(m->nsites);
    for (uint32_t i = 0; codes && i < m->nsites; i++) {
        PyObject *item = line_figures(m->sites[i]);
        if (!item)
            Py_CLEAR(codes);
        else
            PyList_SET_ITEM(codes, i, item);
    }
    PyObject *leak_list = codes ? leaks(m, &nb) : NULL;
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
    mem_node_bytes_free(&nb);
    return out;
}
