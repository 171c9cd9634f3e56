/* module.c - the _sonde extension module: the Profiler type and main().
 *
 * Profiler is the engine behind sonde.Profile (python/sonde/__init__.py):
 * enable/disable drive the tracer, and the results leave through the same
 * C writers the command line uses (pstats bytes, files, the text table).
 * main() runs the command line itself, so `python3 -m sonde` and
 * build/bin/sonde are one program. */
#include "tracer/tracer.h"

#include <stdlib.h>

#include "../cli/cli.h"
#include "../core/stats.h"
#include "../formats/format.h"
#include "../formats/lines_table.h"
#include "../formats/mem_plot.h"
#include "../formats/mem_table.h"
#include "../formats/pstats.h"
#include "../formats/table.h"
#include "lines/lines.h"

typedef struct profiler_object {
    PyObject_HEAD
    tracer t;
    int ready;
} profiler_object;

PyMethodDef *tracer_own_methods[TRACER_OWN_METHODS];
static tracer *active_tracer; /* at most one sonde profiler records at a time */

static int profiler_init(profiler_object *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { NULL };
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Profiler", kwlist))
        return -1;
    if (self->ready)
        return 0;
    if (tracer_init(&self->t) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    self->ready = 1;
    return 0;
}

static int stop(profiler_object *self)
{
    tracer *t = &self->t;
    if (!t->enabled)
        return 0;
    int rc = hook_remove(t);
    tracer_unwind_all(t);
    t->enabled = 0;
    t->end = sonde_clock_mark_now();
    active_tracer = NULL;
    tracer_name_threads(t);
    return rc;
}

static void profiler_dealloc(profiler_object *self)
{
    if (self->ready) {
        saved_error saved = error_save();
        if (stop(self) < 0)
            PyErr_Clear();
        error_restore(saved);
        tracer_clear(&self->t);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_ready(profiler_object *self)
{
    if (!self->ready)
        PyErr_SetString(PyExc_RuntimeError, "Profiler.__init__ was not called");
    return self->ready;
}

static PyObject *profiler_enable(profiler_object *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "subcalls", "builtins", NULL };
    int subcalls = 1, builtins = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pp:enable", kwlist, &subcalls, &builtins))
        return NULL;
    if (!check_ready(self))
        return NULL;
    tracer *t = &self->t;
    if (t->enabled)
        Py_RETURN_NONE;
    if (active_tracer) {
        PyErr_SetString(PyExc_RuntimeError,
                        "another sonde profiler is enabled: disable it first");
        return NULL;
    }
    t->builtins = builtins;
    t->generation++;
    if (!t->calibrated) {
        t->start = sonde_clock_mark_now();
        t->calibrated = 1;
    }
    t->enabled = 1;
    if (hook_install(t) < 0) {
        saved_error saved = error_save();
        hook_remove(t);
        PyErr_Clear();
        error_restore(saved);
        t->enabled = 0;
        return NULL;
    }
    active_tracer = t;
    Py_RETURN_NONE;
}

static PyObject *profiler_disable(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self))
        return NULL;
    if (stop(self) < 0)
        return NULL;
    if (self->t.failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *profiler_pause_thread(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self))
        return NULL;
    if (self->t.enabled)
        hook_pause_current(&self->t);
    Py_RETURN_NONE;
}

static PyObject *profiler_clear(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self))
        return NULL;
    if (self->t.enabled) {
        PyErr_SetString(PyExc_RuntimeError, "disable the profiler before clearing it");
        return NULL;
    }
    tracer_clear(&self->t);
    if (tracer_init(&self->t) < 0) {
        self->ready = 0;
        return PyErr_NoMemory();
    }
    Py_RETURN_NONE;
}

/* The stats of what was recorded so far. */
static int build_stats(profiler_object *self, sonde_stats *s)
{
    tracer_calibrate(&self->t);
    sonde_stats_init(s);
    if (sonde_stats_from_profile(s, &self->t.profile) < 0) {
        sonde_stats_free(s);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *profiler_pstats(profiler_object *self, PyObject *unused)
{
    (void)unused;
    sonde_stats s;
    if (!check_ready(self) || build_stats(self, &s) < 0)
        return NULL;
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_pstats_write(&b, &self->t.profile, &s);
    sonde_stats_free(&s);
    PyObject *r = sonde_buf_ok(&b) ? PyBytes_FromStringAndSize(b.data ? b.data : "",
                                                               (Py_ssize_t)b.len)
                                   : PyErr_NoMemory();
    sonde_buf_free(&b);
    return r;
}

static PyObject *profiler_write(profiler_object *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "path", "format", NULL };
    PyObject *path_obj;
    const char *format = "pstats";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|s:write", kwlist,
                                     PyUnicode_FSConverter, &path_obj, &format))
        return NULL;
    const sonde_format *fmt = sonde_format_find(format);
    sonde_stats s;
    if (!fmt || fmt->needs_timeline) {
        PyErr_Format(PyExc_ValueError, fmt ? "'%s' needs a timeline of samples (sonde record)"
                                           : "unknown format '%s' (use %s)",
                     format, sonde_format_names());
    } else if (check_ready(self) && build_stats(self, &s) == 0) {
        char err[512];
        if (sonde_format_write_file(fmt, PyBytes_AS_STRING(path_obj), &self->t.profile, &s,
                                    NULL, err, sizeof err) < 0)
            PyErr_SetString(PyExc_OSError, err);
        sonde_stats_free(&s);
    }
    Py_DECREF(path_obj);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *profiler_table(profiler_object *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "sort", "limit", "callers", "callees", NULL };
    sonde_table_opts o = { .sort = "cumtime" };
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|slzz:table", kwlist, &o.sort,
                                     &o.limit, &o.callers_re, &o.callees_re))
        return NULL;
    sonde_stats s;
    if (!check_ready(self) || build_stats(self, &s) < 0)
        return NULL;
    sonde_buf b;
    sonde_buf_init(&b);
    char err[256];
    int rc = sonde_table_write(&b, &self->t.profile, &s, &o, err, sizeof err);
    sonde_stats_free(&s);
    PyObject *r = NULL;
    if (rc < 0)
        PyErr_SetString(PyExc_ValueError, err);
    else if (!sonde_buf_ok(&b))
        PyErr_NoMemory();
    else
        r = PyUnicode_DecodeUTF8(b.data ? b.data : "", (Py_ssize_t)b.len, NULL);
    sonde_buf_free(&b);
    return r;
}

static PyMethodDef profiler_methods[] = {
    { "enable", (PyCFunction)(void (*)(void))profiler_enable, METH_VARARGS | METH_KEYWORDS,
      "enable(subcalls=True, builtins=True): start recording in every thread." },
    { "disable", (PyCFunction)profiler_disable, METH_NOARGS,
      "Stop recording; open calls are closed at the current time." },
    { "pause_thread", (PyCFunction)profiler_pause_thread, METH_NOARGS,
      "Stop recording the calling thread (other threads go on) until disable()." },
    { "clear", (PyCFunction)profiler_clear, METH_NOARGS, "Forget everything recorded." },
    { "_pstats", (PyCFunction)profiler_pstats, METH_NOARGS,
      "The stats as pstats' marshal bytes (what a .prof file holds)." },
    { "write", (PyCFunction)(void (*)(void))profiler_write, METH_VARARGS | METH_KEYWORDS,
      "write(path, format='pstats'): write the profile (pstats, collapsed, json)." },
    { "table", (PyCFunction)(void (*)(void))profiler_table, METH_VARARGS | METH_KEYWORDS,
      "table(sort='cumtime', limit=0, callers=None, callees=None): the text report." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject profiler_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sonde._sonde.Profiler",
    .tp_basicsize = sizeof(profiler_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Deterministic profiler of every call in every thread (cProfile's engine, faster).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)profiler_init,
    .tp_dealloc = (destructor)profiler_dealloc,
    .tp_methods = profiler_methods,
};

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
    return sonde_mem_table(b, t, err, errlen);
}

static int write_mem_plot(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                          size_t errlen)
{
    (void)unit;
    return sonde_mem_plot(b, t, err, errlen);
}

/* lines_table(json_text, unit=None) -> the line_profiler table. */
static PyObject *module_lines_table(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *text, *unit = NULL;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#|z:lines_table", &text, &len, &unit))
        return NULL;
    return draw_json(text, len, sonde_lines_table, unit);
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

static PyMethodDef module_methods[] = {
    { "lines_table", module_lines_table, METH_VARARGS,
      "lines_table(json_text, unit=None) -> str: line_profiler's table of a lines profile." },
    { "mem_table", module_mem_table, METH_VARARGS,
      "mem_table(json_text) -> str: memory_profiler's table and the leaks of a mem profile." },
    { "mem_plot", module_mem_plot, METH_VARARGS,
      "mem_plot(json_text) -> str: the SVG of a mem profile's memory over time." },
    { "main", module_main, METH_VARARGS,
      "main(argv, python, package_dir) -> int: run the sonde command line." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_sonde",
    "sonde's engine: the deterministic tracer and the profile writers.",
    -1, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__sonde(void);

__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__sonde(void)
{
    for (int i = 0; i < TRACER_OWN_METHODS; i++)
        tracer_own_methods[i] = &profiler_methods[i]; /* enable, disable, pause_thread */
    if (PyType_Ready(&profiler_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    Py_INCREF(&profiler_type);
    if (PyModule_AddObject(m, "Profiler", (PyObject *)&profiler_type) < 0) {
        Py_DECREF(&profiler_type);
        Py_DECREF(m);
        return NULL;
    }
    if (sonde_lines_add_type(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
