/* profiler.c - the Profiler type (sonde.Profile's engine), kept beside
 * the tracer and its hooks as _lsprof.c keeps cProfile's.
 *
 * enable/disable drive the tracer through the hooks of this interpreter
 * (hook_legacy.c or hook_monitoring.c); the results leave through the
 * same C writers the command line uses (pstats bytes, files, the text
 * table).  At most one tracer records at a time: tracer_active. */
#include "profiler.h"

#include "torch_ops.h"
#include "../../core/timeline.h"
#include "tracer.h"

#include "../../core/stats.h"
#include "../../formats/format.h"
#include "../../formats/pstats.h"
#include "../../report/table.h"

typedef struct profiler_object {
    PyObject_HEAD
    tracer t;
    int ready;
} profiler_object;

PyObject *profiler_active_error;

static int profiler_init(profiler_object *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "timer", "timeunit", NULL }; /* constant */
    PyObject *timer = Py_None;
    double unit = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Od:Profiler", kwlist, &timer, &unit))
        return -1;
    if (self->ready && tracer_active == &self->t) {
        PyErr_SetString(PyExc_RuntimeError, "disable the profiler before initializing it again");
        return -1;
    }
    if (!self->ready) {
        if (tracer_init(&self->t) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        self->ready = 1;
    }
    return tracer_timer_set(&self->t, timer == Py_None ? NULL : timer, unit);
}

static int stop(profiler_object *self)
{
    tracer *t = &self->t;
    if (tracer_active != t)
        return 0;
    tracer_active = NULL;
    int rc = hook_remove(t);
    tracer_unwind_all(t);
    t->end = sonde_clock_mark_now();
    tracer_name_threads(t);
    Py_CLEAR(t->owner); /* the caller holds self */
    return rc;
}

static void profiler_dealloc(profiler_object *self)
{
    PyObject_GC_UnTrack(self);
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
    static char *kwlist[] = { "subcalls", "builtins", NULL }; /* constant */
    int subcalls = 1, builtins = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pp:enable", kwlist, &subcalls, &builtins))
        return NULL;
    if (!check_ready(self))
        return NULL;
    tracer *t = &self->t;
    if (tracer_active == t)
        Py_RETURN_NONE;
    if (tracer_active) {
        PyErr_SetString(profiler_active_error,
                        "another sonde profiler is enabled: disable it first");
        return NULL;
    }
    t->builtins = builtins;
    Py_INCREF(self); /* held while enabled, as cProfile's hooks hold theirs */
    t->owner = (PyObject *)self;
    t->generation++;
    if (!t->calibrated) {
        t->start = sonde_clock_mark_now();
        t->calibrated = 1;
    }
    tracer_active = t;
    if (hook_install(t) < 0) {
        tracer_active = NULL;
        Py_CLEAR(t->owner);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Whether the profiler's timer is being called (its state must stay as
 * it is): else 0, or -1 with RuntimeError, as cProfile's. */
static int in_timer(profiler_object *self, const char *what)
{
    if (!self->t.timer.calling)
        return 0;
    PyErr_Format(PyExc_RuntimeError, "cannot %s the profiler while its timer runs", what);
    return -1;
}

/* Raises the timer's first failure (kept: each disable() raises it until
 * clear()). */
static PyObject *raise_timer_error(PyObject *error)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(Py_NewRef(error));
#else
    PyObject *tb = PyException_GetTraceback(error);
    Py_INCREF(Py_TYPE(error));
    Py_INCREF(error);
    PyErr_Restore((PyObject *)Py_TYPE(error), error, tb);
#endif
    return NULL;
}

static PyObject *profiler_disable(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self) || in_timer(self, "disable") < 0)
        return NULL;
    if (stop(self) < 0)
        return NULL;
    if (self->t.timer.error)
        return raise_timer_error(self->t.timer.error);
    if (self->t.failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *profiler_pause_thread(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self))
        return NULL;
    if (tracer_active == &self->t)
        hook_pause_current(&self->t);
    Py_RETURN_NONE;
}

static PyObject *profiler_forked(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self))
        return NULL;
    tracer_forked(&self->t, PyThread_get_thread_ident(), PyThread_get_thread_native_id());
    Py_RETURN_NONE;
}

static PyObject *profiler_clear(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self) || in_timer(self, "clear") < 0)
        return NULL;
    if (tracer_active == &self->t) {
        PyErr_SetString(PyExc_RuntimeError, "disable the profiler before clearing it");
        return NULL;
    }
    PyObject *timer = self->t.timer.fn;
    double unit = self->t.timer.unit;
    Py_XINCREF(timer);
    tracer_clear(&self->t);
    int rc = tracer_init(&self->t);
    if (rc == 0)
        rc = tracer_timer_set(&self->t, timer, unit);
    Py_XDECREF(timer);
    if (rc < 0) {
        self->ready = 0;
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
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
    sonde_pstats_write(&b, &self->t.profile, &s, NULL);
    sonde_stats_free(&s);
    PyObject *r = sonde_buf_ok(&b) ? PyBytes_FromStringAndSize(b.data ? b.data : "",
                                                               (Py_ssize_t)b.len)
                                   : PyErr_NoMemory();
    sonde_buf_free(&b);
    return r;
}

/* write()'s steps=(first, last), for a tensorboard trace, into o.  0, or
 * -1 with an exception set. */
static int read_window(PyObject *steps, const char *format, sonde_format_opts *o)
{
    if (strcmp(format, "tensorboard") != 0) {
        PyErr_SetString(PyExc_ValueError, "write's steps= is for a tensorboard trace");
        return -1;
    }
    if (!PyTuple_Check(steps) || PyTuple_GET_SIZE(steps) != 2) {
        PyErr_SetString(PyExc_TypeError, "write's steps: a tuple (first, last)");
        return -1;
    }
    unsigned long long first = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(steps, 0));
    unsigned long long last = first == (unsigned long long)-1 && PyErr_Occurred()
                                  ? 0 : PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(steps, 1));
    if (PyErr_Occurred() || first > last || last > UINT32_MAX) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "write's steps: (first, last), step numbers with "
                                          "0 <= first <= last");
        return -1;
    }
    o->window = 1;
    o->window_first = (uint32_t)first;
    o->window_last = (uint32_t)last;
    return 0;
}

static PyObject *profiler_write(profiler_object *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "path", "format", "all_calls", "steps", NULL }; /* constant */
    PyObject *path_obj, *steps = Py_None;
    const char *format = "pstats";
    sonde_format_opts opts = *sonde_format_opts_or_default(NULL);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|spO:write", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &format, &opts.all_calls, &steps))
        return NULL;
    if (steps != Py_None && read_window(steps, format, &opts) < 0) {
        Py_DECREF(path_obj);
        return NULL;
    }
    const sonde_format *fmt = sonde_format_find(format);
    sonde_stats s;
    if (!fmt || (fmt->needs_timeline && !self->t.profile.slices_budget)) {
        PyErr_Format(PyExc_ValueError, fmt ? "'%s' needs a timeline: sonde record -f chrome "
                                             "(samples) or sonde run --torch -f chrome "
                                             "(calls and operators)"
                                           : "unknown format '%s' (use %s)",
                     format, sonde_format_names());
    } else if (check_ready(self) && build_stats(self, &s) == 0) {
        char err[512];
        if (sonde_format_write_file(fmt, PyBytes_AS_STRING(path_obj), &self->t.profile, &s,
                                    &opts, err, sizeof err) < 0)
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
    static char *kwlist[] = { "sort", "limit", "callers", "callees", NULL }; /* constant */
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

static PyObject *profiler_torch_begin(profiler_object *self, PyObject *unused)
{
    (void)unused;
    if (!check_ready(self))
        return NULL;
    torch_ops_begin(&self->t);
    Py_RETURN_NONE;
}

static PyObject *profiler_torch_spans(profiler_object *self, PyObject *args)
{
    int on, drop = 0;
    if (!PyArg_ParseTuple(args, "p|p:_torch_spans", &on, &drop) || !check_ready(self))
        return NULL;
    torch_ops_spans(&self->t, on, drop);
    Py_RETURN_NONE;
}

static PyObject *profiler_torch_place(profiler_object *self, PyObject *args)
{
    torch_input in = { .mems = Py_None, .device_mems = Py_None, .kernels = Py_None,
                       .regions = Py_None, .steps = Py_None };
    int shapes = 0;
    unsigned long long budget = 0;
    if (!PyArg_ParseTuple(args, "OOOO|pKOOOOO:_torch_place", &in.tids, &in.names, &in.starts,
                          &in.ends, &shapes, &budget, &in.mems, &in.device_mems, &in.kernels,
                          &in.regions, &in.steps) ||
        !check_ready(self))
        return NULL;
    if (budget > SONDE_MAX_SLICES) {
        PyErr_Format(PyExc_ValueError, "a timeline keeps at most %llu slices",
                     (unsigned long long)SONDE_MAX_SLICES);
        return NULL;
    }
    if (tracer_active == &self->t) {
        PyErr_SetString(PyExc_RuntimeError, "disable the profiler before placing operators");
        return NULL;
    }
    return torch_ops_place(&self->t, &in, shapes, budget);
}

static PyObject *profiler_region(profiler_object *self, PyObject *name, int enter)
{
    if (!check_ready(self))
        return NULL;
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "a region's name is a str");
        return NULL;
    }
    if (tracer_active != &self->t)
        Py_RETURN_FALSE;
    int done = enter ? torch_region_enter(&self->t, name) : torch_region_exit(&self->t, name);
    if (done < 0)
        return NULL;
    return PyBool_FromLong(done);
}

static PyObject *profiler_region_enter(profiler_object *self, PyObject *name)
{
    return profiler_region(self, name, 1);
}

static PyObject *profiler_region_exit(profiler_object *self, PyObject *name)
{
    return profiler_region(self, name, 0);
}

/* The type and its methods: readied once under the GIL at import, then
 * constant. */
PyMethodDef profiler_methods[PROFILER_NMETHODS + 1] = {
    [PROFILER_ENABLE] = { "enable", (PyCFunction)(void (*)(void))profiler_enable,
                          METH_VARARGS | METH_KEYWORDS,
                          "enable(subcalls=True, builtins=True): start recording in every "
                          "thread." },
    [PROFILER_DISABLE] = { "disable", (PyCFunction)profiler_disable, METH_NOARGS,
                           "Stop recording; open calls are closed at the current time." },
    [PROFILER_PAUSE_THREAD] = { "pause_thread", (PyCFunction)profiler_pause_thread, METH_NOARGS,
                                "Stop recording the calling thread (other threads go on) "
                                "until disable()." },
    [PROFILER_CLEAR] = { "clear", (PyCFunction)profiler_clear, METH_NOARGS,
                         "Forget everything recorded." },
    [PROFILER_FORKED] = { "_forked", (PyCFunction)profiler_forked, METH_NOARGS,
                          "In a forked child (os.register_at_fork's after_in_child): forget "
                          "the parent's recording; the calling thread's open calls start "
                          "again now." },
    [PROFILER_PSTATS] = { "_pstats", (PyCFunction)profiler_pstats, METH_NOARGS,
                          "The stats as pstats' marshal bytes (what a .prof file holds)." },
    [PROFILER_WRITE] = { "write", (PyCFunction)(void (*)(void))profiler_write,
                         METH_VARARGS | METH_KEYWORDS,
                         "write(path, format='pstats', all_calls=False, steps=None): write "
                         "the profile (pstats, collapsed, json, ...; with torch, chrome and "
                         "tensorboard traces); all_calls: a chrome trace of torch's operators "
                         "keeps every Python call, not only those holding an operator or "
                         "region; steps: (first, last), a tensorboard trace of those steps "
                         "and what ran in them only." },
    [PROFILER_TABLE] = { "table", (PyCFunction)(void (*)(void))profiler_table,
                         METH_VARARGS | METH_KEYWORDS,
                         "table(sort='cumtime', limit=0, callers=None, callees=None): the text "
                         "report." },
    [PROFILER_TORCH_BEGIN] = { "_torch_begin", (PyCFunction)profiler_torch_begin, METH_NOARGS,
                               "Log calls as spans from now on, for _torch_place." },
    [PROFILER_TORCH_SPANS] = { "_torch_spans", (PyCFunction)profiler_torch_spans, METH_VARARGS,
                               "_torch_spans(on, drop=False): calls logged as spans again, "
                               "or no more (those still open logged as ending now; with "
                               "drop, every span logged so far forgotten)." },
    [PROFILER_TORCH_PLACE] = { "_torch_place", (PyCFunction)profiler_torch_place, METH_VARARGS,
                               "_torch_place(tids, names, starts_ns, ends_ns, shapes=False, "
                               "budget=0, mems=None, device_mems=None, kernels=None, "
                               "regions=None, steps=None): "
                               "operators into the tree beneath the calls that ran them, "
                               "kernels beneath their operators, and with a budget a "
                               "timeline of at most that many slices (write(path, "
                               "'chrome' or 'tensorboard')); mems and device_mems each "
                               "operator's net CPU and GPU bytes; regions whether each is a "
                               "record_function region; steps (thread, start_ns, end_ns, "
                               "number) each training step; returns "
                               "(operators, top-level, placed beneath a call, spans_full, "
                               "slices kept, slices dropped)." },
    [PROFILER_REGION_ENTER] = { "_region_enter", (PyCFunction)profiler_region_enter, METH_O,
                                "_region_enter(name): a torch region opens beneath the "
                                "caller's caller (record_function.__enter__'s); whether "
                                "this thread is recorded." },
    [PROFILER_REGION_EXIT] = { "_region_exit", (PyCFunction)profiler_region_exit, METH_O,
                               "_region_exit(name): the region of that name open on this "
                               "thread closes; whether there was one." },
    [PROFILER_NMETHODS] = { NULL, NULL, 0, NULL },
};

static int profiler_traverse(profiler_object *self, visitproc visit, void *arg)
{
    Py_VISIT(self->t.timer.fn);
    Py_VISIT(self->t.timer.error);
    return 0;
}

/* Called as a profile function, it does nothing: sys.getprofile() answers
 * the profiler (up to 3.11, as cProfile's), and a program that sets it
 * back with sys.setprofile() gets sonde's hook back (hook_legacy.c). */
static PyObject *profiler_call(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    (void)args;
    (void)kwds;
    Py_RETURN_NONE;
}

static PyTypeObject profiler_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sonde._sonde.Profiler",
    .tp_basicsize = sizeof(profiler_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Profiler(timer=None, timeunit=0.0): deterministic profiler of every call in "
              "every thread (cProfile's engine, faster); timer: a clock of the program's, "
              "called at every event (see sonde.Profile).",
    .tp_traverse = (traverseproc)profiler_traverse,
    .tp_call = profiler_call,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)profiler_init,
    .tp_dealloc = (destructor)profiler_dealloc,
    .tp_methods = profiler_methods,
};


int sonde_profiler_add_type(PyObject *module)
{
    if (PyType_Ready(&profiler_type) < 0)
        return -1;
    PyObject *bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_RuntimeError);
    profiler_active_error = bases ? PyErr_NewExceptionWithDoc(
        "sonde.ProfilerActiveError",
        "Another profiler records already (cProfile raises ValueError).", bases, NULL) : NULL;
    Py_XDECREF(bases);
    if (!profiler_active_error)
        return -1;
    Py_INCREF(profiler_active_error);
    if (PyModule_AddObject(module, "ProfilerActiveError", profiler_active_error) < 0) {
        Py_DECREF(profiler_active_error);
        return -1;
    }
    Py_INCREF(&profiler_type);
    if (PyModule_AddObject(module, "Profiler", (PyObject *)&profiler_type) < 0) {
        Py_DECREF(&profiler_type);
        return -1;
    }
    return 0;
}
