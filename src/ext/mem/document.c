/* document.c - the memory profiler's mem document (src/formats/mem_doc.h):
 * the figures of src/mem once recording stopped (per line, the leaks
 * largest first, the timeline), with each line's source from the Python
 * side, written by the writer sonde mem -o shares. */
#include <stdlib.h>

#include "../../formats/mem_doc.h"
#include "../../mem/account.h"
#include "../interp/code_name.h"
#include "memory.h"

/* A site's file as Python has it, for source_of: its code object's (the
 * line tracer holds the code object while m lives). */
static PyObject *py_file(const mem_site *s) { return ((PyCodeObject *)s->code)->co_filename; }

/* The figures of every site's lines.  0, or -1 with an exception. */
static int add_functions(sonde_mem_doc *d, const mem_data *m, PyObject *source_of,
                         PyObject *keep)
{
    sonde_mem_doc_function *fns = calloc(m->nsites ? m->nsites : 1, sizeof *fns);
    d->functions = fns;
    if (!fns) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint32_t i = 0; i < m->nsites; i++) {
        const mem_site *s = m->sites[i];
        sonde_mem_doc_line *lines = calloc((size_t)s->nlines, sizeof *lines);
        fns[i] = (sonde_mem_doc_function){ .file = s->file, .name = s->name,
                                           .first_line = s->first, .lines = lines };
        d->nfunctions = i + 1;
        if (!lines) {
            PyErr_NoMemory();
            return -1;
        }
        for (int k = 0; k < s->nlines; k++) {
            const mem_line_figures *f = &s->lines[k];
            lines[k] = (sonde_mem_doc_line){
                .line = s->first + k, .hits = s->hits ? s->hits[k] : 0, .alloc = f->alloc,
                .freed = f->freed, .net = f->net, .reserved = f->reserved,
                .peak_heap = f->peak_heap, .rss = f->rss_max, .rss_increment = f->rss_increment,
                .source = sonde_keep_source(keep, source_of, py_file(s), s->first + k) };
            if (!lines[k].source)
                return -1;
            fns[i].nlines = (uint32_t)k + 1;
        }
    }
    return 0;
}

/* Leak l: node n's bytes and its stack, outermost first.  0, or -1 with
 * an exception. */
static int add_leak(sonde_mem_doc_leak *l, const mem_data *m, const mem_node_bytes *nb,
                    uint32_t n, PyObject *source_of, PyObject *keep)
{
    *l = (sonde_mem_doc_leak){ .bytes = nb->all[n], .native = nb->native[n],
                               .reserved = nb->reserved[n] };
    uint32_t depth = 0;
    for (uint32_t x = n; x != SONDE_NO_NODE && x != m->root; x = m->stacks.nodes[x].parent)
        depth++;
    sonde_mem_doc_frame *stack = calloc(depth ? depth : 1, sizeof *stack);
    l->stack = stack;
    if (!stack) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint32_t x = n, k = depth; x != SONDE_NO_NODE && x != m->root;
         x = m->stacks.nodes[x].parent) {
        int line = 0;
        const mem_site *s = mem_node_site(m, x, &line); /* every node under the root has one */
        stack[--k] = (sonde_mem_doc_frame){
            .file = s ? s->file : "?", .name = s ? s->name : "?", .line = line,
            .source = s ? sonde_keep_source(keep, source_of, py_file(s), line) : "" };
        if (!stack[k].source)
            return -1;
    }
    l->depth = depth;
    return 0;
}

/* The leaks, largest first, as many as the document lists.  0, or -1 with
 * an exception. */
static int add_leaks(sonde_mem_doc *d, const mem_data *m, const mem_node_bytes *nb,
                     PyObject *source_of, PyObject *keep)
{
    uint32_t count = 0, *order = mem_leaks(m, nb, &count);
    uint32_t n = count < SONDE_MEM_DOC_LEAKS ? count : SONDE_MEM_DOC_LEAKS;
    sonde_mem_doc_leak *leaks = order ? calloc(n ? n : 1, sizeof *leaks) : NULL;
    d->leaks = leaks;
    int rc = leaks ? 0 : (PyErr_NoMemory(), -1);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        rc = add_leak(&leaks[i], m, nb, order[i], source_of, keep);
        d->nleaks = i + 1;
    }
    free(order);
    return rc;
}

/* The timeline and the spans, in ns since the start.  0, or -1 with an
 * exception. */
static int add_timeline(sonde_mem_doc *d, const mem_data *m)
{
    sonde_mem_doc_point *points = calloc(m->npoints ? m->npoints : 1, sizeof *points);
    sonde_mem_doc_span *spans = calloc(m->nspans ? m->nspans : 1, sizeof *spans);
    d->points = points;
    d->spans = spans;
    if (!points || !spans) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint32_t i = 0; i < m->npoints; i++) {
        const mem_point *p = &m->points[i];
        points[i] = (sonde_mem_doc_point){ .t_ns = p->ns - m->start_ns, .rss = p->rss,
                                           .heap = p->heap, .reserved = p->reserved };
    }
    for (uint32_t i = 0; i < m->nspans; i++) {
        const mem_span *s = &m->spans[i];
        spans[i] = (sonde_mem_doc_span){
            .name = s->site < m->nsites ? m->sites[s->site]->name : "?",
            .start_ns = s->start - m->start_ns,
            .end_ns = (s->end ? s->end : s->start) - m->start_ns };
    }
    d->npoints = m->npoints;
    d->nspans = m->nspans;
    return 0;
}

static void free_doc(sonde_mem_doc *d)
{
    for (uint32_t i = 0; d->functions && i < d->nfunctions; i++)
        free((void *)d->functions[i].lines);
    free((void *)d->functions);
    for (uint32_t i = 0; d->leaks && i < d->nleaks; i++)
        free((void *)d->leaks[i].stack);
    free((void *)d->leaks);
    free((void *)d->points);
    free((void *)d->spans);
}

PyObject *mem_document(mem_data *m, PyObject *source_of)
{
    mem_node_bytes nb = { 0 };
    sonde_mem_doc d = {
        .sample_bytes = m->sample_bytes, .native = m->native, .line_events = m->line_events,
        .interval_ms = (double)m->interval_ns / 1e6, .heap_peak = m->heap_peak,
        .reserved = m->reserved, .rss_high_water = m->rss_high_water,
        .untracked = m->untracked,
    };
    PyObject *keep = PyList_New(0), *out = NULL;
    int rc = keep ? 0 : -1;
    if (rc == 0 && mem_figures_net(m, &nb) < 0) {
        PyErr_NoMemory();
        rc = -1;
    }
    if (rc == 0)
        rc = add_functions(&d, m, source_of, keep);
    if (rc == 0)
        rc = add_leaks(&d, m, &nb, source_of, keep);
    if (rc == 0)
        rc = add_timeline(&d, m);
    sonde_buf b;
    sonde_buf_init(&b);
    if (rc == 0 && sonde_mem_doc_write(&b, &d) < 0)
        PyErr_NoMemory();
    else if (rc == 0)
        out = PyBytes_FromStringAndSize(b.data, (Py_ssize_t)b.len);
    sonde_buf_free(&b);
    free_doc(&d);
    mem_node_bytes_free(&nb);
    Py_XDECREF(keep);
    return out;
}
