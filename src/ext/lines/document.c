/* document.c - the line tracer's lines document (src/formats/lines_doc.h):
 * its counts, with what the Python side knows of each code object (a
 * line's source, the instructions as dis shows them), written by the
 * writer sonde lines -o shares.  Nested code counts in its function's
 * lines and is not listed. */
#include <stdlib.h>

#include "../../formats/lines_doc.h"
#include "../interp/code_name.h"
#include "lines_state.h"

/* counts[k] ticks as nanoseconds. */
static uint64_t ns_of(uint64_t ticks, double ns_per_tick)
{
    return (uint64_t)((double)ticks * ns_per_tick + 0.5);
}

/* The instructions of lc from instructions_of(code): (offset, opname,
 * arg, line) each.  0, or -1 with an exception. */
static int add_instructions(sonde_lines_doc_function *f, const line_code *lc, double ns_per_tick,
                            PyObject *instructions_of, PyObject *keep)
{
    PyObject *list = PyObject_CallFunctionObjArgs(instructions_of, lc->code, NULL);
    PyObject *seq = list ? PySequence_Fast(list, "instructions_of() must give a sequence") : NULL;
    Py_XDECREF(list);
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    sonde_lines_doc_instr *in = calloc(n ? (size_t)n : 1, sizeof *in);
    f->instrs = in;
    f->has_instrs = 1;
    int rc = in ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *opname, *arg;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iOOi:instruction",
                              &in[i].offset, &opname, &arg, &in[i].line) ||
            !(in[i].opname = sonde_keep_text(keep, opname)) ||
            !(in[i].arg = sonde_keep_text(keep, arg))) {
            rc = -1;
            break;
        }
        long unit = in[i].offset / 2;
        if (in[i].offset >= 0 && unit < lc->ninstr) {
            in[i].hits = lc->ihits[unit];
            in[i].time_ns = ns_of(lc->iticks[unit], ns_per_tick);
        }
        f->ninstrs = (uint32_t)i + 1;
    }
    Py_DECREF(seq);
    return rc;
}

/* Function f from lc.  0, or -1 with an exception. */
static int add_function(sonde_lines_doc_function *f, const line_code *lc, double ns_per_tick,
                        PyObject *source_of, PyObject *instructions_of, PyObject *keep)
{
    PyObject *file = ((PyCodeObject *)lc->code)->co_filename;
    sonde_lines_doc_line *lines = calloc((size_t)lc->nlines, sizeof *lines);
    *f = (sonde_lines_doc_function){ .file = sonde_keep_text(keep, file),
                                     .name = sonde_keep_text(keep, lc->name),
                                     .first_line = lc->first, .lines = lines };
    if (!f->file || !f->name)
        return -1;
    if (!lines) {
        PyErr_NoMemory();
        return -1;
    }
    for (int k = 0; k < lc->nlines; k++) {
        lines[k] = (sonde_lines_doc_line){ .line = lc->first + k, .hits = lc->hits[k],
                                           .iterations = lc->iters[k],
                                           .time_ns = ns_of(lc->ticks[k], ns_per_tick),
                                           .source = sonde_keep_source(keep, source_of, file,
                                                                       lc->first + k) };
        if (!lines[k].source)
            return -1;
        f->nlines = (uint32_t)k + 1;
    }
    if (lc->ninstr && instructions_of != Py_None)
        return add_instructions(f, lc, ns_per_tick, instructions_of, keep);
    return 0;
}

PyObject *lines_document(lines_tracer *t, PyObject *source_of, PyObject *instructions_of)
{
    sonde_clock_mark end = t->slot >= 0 ? sonde_clock_mark_now() : t->end;
    double ns_per_tick = 1e9 * sonde_clock_seconds_per_tick(t->start, end);
    sonde_lines_doc_function *fns = calloc(t->ncodes ? t->ncodes : 1, sizeof *fns);
    PyObject *keep = PyList_New(0), *out = NULL;
    uint32_t n = 0;
    int rc = fns && keep ? 0 : -1;
    if (!fns)
        PyErr_NoMemory();
    for (uint32_t i = 0; rc == 0 && i < t->ncodes; i++)
        if (!t->codes[i]->nested)
            rc = add_function(&fns[n++], t->codes[i], ns_per_tick, source_of, instructions_of,
                              keep);
    sonde_buf b;
    sonde_buf_init(&b);
    if (rc == 0 && sonde_lines_doc_write(&b, fns, n) < 0)
        PyErr_NoMemory();
    else if (rc == 0)
        out = PyBytes_FromStringAndSize(b.data, (Py_ssize_t)b.len);
    sonde_buf_free(&b);
    for (uint32_t i = 0; fns && i < n; i++) {
        free((void *)fns[i].lines);
        free((void *)fns[i].instrs);
    }
    free(fns);
    Py_XDECREF(keep);
    return out;
}
