/* module.c - the _sonde extension module: its functions and its types.
 *
 * The types live with their modes: Profiler (sonde.Profile) in tracer/,
 * LineTracer (sonde.LineProfiler and sonde.MemoryProfiler) in lines/ with
 * the memory profiler in mem/; interp/ holds what they share.  The
 * module's own functions: main() runs the command line itself, so
 * `python3 -m sonde` and build/bin/sonde are one program; the line and
 * memory tables and plot are drawn by the writers the command line uses;
 * write_file() writes the Python side's files as the command writes its own. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>

#include "../cli/cli.h"
#include "../core/outfile.h"
#include "../core/timeline.h"
#include "../formats/json_read.h"
#include "../report/lines_table.h"
#include "../report/mem_plot.h"
#include "../report/mem_table.h"
#include "lines/lines.h"
#include "signals/retry.h"
#include "tracer/profiler.h"

/* main(argv, python, package_dir) -> exit code of the sonde command. */
static PyObject *module_main(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *list;
    const char *python, *package_dir;
    if (!PyArg_ParseTuple(args, "O!ss:main", &PyList_Type, &list, &python, &package_dir))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    if (!argv)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (!s) {
            free(argv);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "main() takes a list of str");
            return NULL;
        }
        argv[i] = (char *)s;
    }
    sonde_env env = { .python = python[0] ? python : NULL, .package_dir = package_dir };
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sonde_main((int)n, argv, &env);
    Py_END_ALLOW_THREADS
    free(argv);
    return PyLong_FromLong(rc);
}

/* Draws a profile's JSON text with one of the writers below (their output
 * is valid UTF-8: a name's bytes that are not show as \xNN in tables and
 * U+FFFD in pictures). */
typedef int (*json_writer)(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                           size_t errlen);

static PyObject *draw_json(const char *text, Py_ssize_t len, json_writer write, const char *unit)
{
    sonde_jtree t;
    char err[256];
    sonde_buf b;
    sonde_buf_init(&b);
    PyObject *r = NULL;
    if (sonde_json_read(&t, text, (size_t)len, err, sizeof err) < 0) {
        PyErr_Format(PyExc_ValueError, "not JSON: %s", err);
    } else {
        if (write(&b, &t, unit, err, sizeof err) < 0)
            PyErr_SetString(PyExc_ValueError, err);
        else if (!sonde_buf_ok(&b))
            PyErr_NoMemory();
        else
            r = PyUnicode_DecodeUTF8(b.data ? b.data : "", (Py_ssize_t)b.len, NULL);
        sonde_jtree_free(&t);
    }
    sonde_buf_free(&b);
    return r;
}

static int write_mem_table(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                           size_t errlen)
{
    (void)unit;
    return sonde_mem_table_write(b, t, err, errlen);
}

static int write_mem_plot(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                          size_t errlen)
{
    (void)unit;
    return sonde_mem_plot_write(b, t, err, errlen);
}

/* lines_table(json_text, unit=None) -> the line_profiler table. */
static PyObject *module_lines_table(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text, *unit = NULL;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#|z:lines_table", &text, &len, &unit))
        return NULL;
    return draw_json(text, len, sonde_lines_table_write, unit);
}

/* mem_table(json_text) -> memory_profiler's table and the leaks. */
static PyObject *module_mem_table(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#:mem_table", &text, &len))
        return NULL;
    return draw_json(text, len, write_mem_table, NULL);
}

/* mem_plot(json_text) -> the memory-over-time SVG. */
static PyObject *module_mem_plot(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#:mem_plot", &text, &len))
        return NULL;
    return draw_json(text, len, write_mem_plot, NULL);
}

/* The module's functions and definition: constant, read by the interpreter. */
/* write_file(path, data): the one way sonde's Python side writes a file
 * (core/outfile.h): OSError "cannot write 'PATH': WHY" when it cannot,
 * with nothing left behind. */
static PyObject *module_write_file(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "O&y*:write_file", PyUnicode_FSConverter, &path, &data))
        return NULL;
    char err[512];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sonde_outfile_write_bytes(PyBytes_AS_STRING(path), NULL, data.buf, (size_t)data.len,
                                   err, sizeof err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    Py_DECREF(path);
    if (rc < 0) {
        PyErr_SetString(PyExc_OSError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = { /* constant */
    { "write_file", module_write_file, METH_VARARGS,
      "write_file(path, data): write bytes to path, as every sonde output is written." },
    { "lines_table", module_lines_table, METH_VARARGS,
      "lines_table(json_text, unit=None) -> str: line_profiler's table of a lines profile." },
    { "mem_table", module_mem_table, METH_VARARGS,
      "mem_table(json_text) -> str: memory_profiler's table and the leaks of a mem profile." },
    { "mem_plot", module_mem_plot, METH_VARARGS,
      "mem_plot(json_text) -> str: the SVG of a mem profile's memory over time." },
    { "_signals_retry", sonde_signals_retry, METH_O,
      "_signals_retry(signums): each signal, whose Python handler is set, is sent again "
      "every 20 ms until _signals_seen() (a signal that came just before a blocking call "
      "still reaches its handler)." },
    { "_signals_seen", sonde_signals_seen, METH_NOARGS,
      "_signals_seen(): the Python handler runs: no more resends." },
    { "_signals_after_fork", sonde_signals_after_fork, METH_NOARGS,
      "_signals_after_fork(): in a forked child, its own resend timers." },
    { "main", module_main, METH_VARARGS,
      "main(argv, python, package_dir) -> int: run the sonde command line." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = { /* read by PyModule_Create once, at import */
    PyModuleDef_HEAD_INIT, "_sonde",
    "sonde's engine: the deterministic tracer, the line tracer, the memory profiler, "
    "the writers and the command line.",
    -1, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__sonde(void);

__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__sonde(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (sonde_profiler_add_type(m) < 0 || sonde_lines_add_type(m) < 0 ||
        PyModule_AddStringConstant(m, "VERSION", sonde_version()) < 0 ||
        PyModule_AddIntConstant(m, "DEFAULT_MAX_EVENTS", SONDE_DEFAULT_SLICES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
