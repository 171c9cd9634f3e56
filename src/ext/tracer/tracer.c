/* tracer.c - tracer state: threads, the slow path that names callees,
 * unwinding and calibration.  See tracer.h. */
#include "tracer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/grow.h"
#include "../interp/code_name.h"

tracer *tracer_active; /* see tracer.h; protected by the GIL */

int tracer_init(tracer *t)
{
    memset(t, 0, sizeof *t);
    sonde_clock_setup();
    sonde_u64map_init(&t->func_by_key);
    t->builtins = 1;
    return sonde_profile_init(&t->profile);
}

/* Frees a thread's record (no longer in the list). */
static void free_thread(tracer_thread *th)
{
#if PY_VERSION_HEX < 0x030C0000
    Py_XDECREF(th->chain_obj);
#endif
    free(th->stack);
    free(th->spans);
    free(th);
}

void tracer_clear(tracer *t)
{
    tracer_timer_clear(t);
    for (size_t i = 0; i < t->nheld; i++)
        Py_DECREF(t->held[i]);
    free(t->held);
    tracer_thread *th = t->threads;
    while (th) {
        tracer_thread *next = th->next;
        free_thread(th);
        th = next;
    }
    sonde_u64map_free(&t->func_by_key);
    sonde_profile_free(&t->profile);
    memset(t, 0, sizeof *t);
}

void tracer_forked(tracer *t, unsigned long ident, unsigned long native_id)
{
    tracer_thread *mine = NULL, **link = &t->threads;
    while (*link) {
        tracer_thread *th = *link;
        if (!mine && th->ident == ident && th->generation == t->generation) {
            mine = th;
            link = &th->next;
        } else {
            *link = th->next;
            free_thread(th);
        }
    }
    /* The functions of the forking thread's open calls, before their
     * nodes go with the tree. */
    uint32_t depth = mine ? mine->depth : 0;
    uint32_t *funcs = malloc((depth ? depth : 1) * sizeof *funcs);
    for (uint32_t i = 0; funcs && i < depth; i++)
        funcs[i] = t->profile.nodes[mine->stack[i].node].func;
    sonde_profile_clear_tree(&t->profile);
    t->nspans = 0;
    t->spans_full = 0;
    if (!mine) {
        free(funcs);
        return;
    }
    int64_t index = funcs ? sonde_profile_add_thread(&t->profile, ident, native_id, "") : -1;
    mine->depth = 0;
    mine->nspans = mine->cut = 0;
    mine->named = 0;
    if (index < 0) {
        free(funcs);
        t->failed = 1;
        return;
    }
    mine->index = (uint32_t)index;
    mine->root = t->profile.threads[index].root;
    uint64_t now = tracer_now(t);
    uint32_t parent = mine->root;
    for (uint32_t i = 0; i < depth; i++) {
        tracer_frame *f = &mine->stack[i];
        uint32_t node = sonde_profile_add_child(&t->profile, parent, f->key, funcs[i]);
        if (node == SONDE_NO_NODE) {
            t->failed = 1;
            break;
        }
        f->node = parent = node;
        f->start = now;
        f->child_ticks = 0;
        mine->depth = i + 1;
    }
    free(funcs);
}

tracer_thread *tracer_attach(tracer *t, unsigned long ident, unsigned long native_id)
{
    tracer_thread *th = calloc(1, sizeof *th);
    int64_t index = th ? sonde_profile_add_thread(&t->profile, ident, native_id, "") : -1;
    if (index < 0) {
        free(th);
        t->failed = 1;
        return NULL;
    }
    th->owner = t;
    th->index = (uint32_t)index;
    th->root = t->profile.threads[index].root;
    th->ident = ident;
    th->generation = t->generation;
    th->next = t->threads;
    t->threads = th;
    return th;
}

int tracer_grow_stack(tracer_thread *th)
{
    tracer_frame *s = sonde_grow(th->stack, &th->cap, (size_t)th->depth + 1, sizeof *s,
                                 UINT32_MAX);
    if (!s) {
        th->owner->failed = 1;
        return -1;
    }
    th->stack = s;
    return 0;
}

void tracer_log_span(tracer_thread *th, uint32_t node, uint64_t start, uint64_t end)
{
    tracer *t = th->owner;
    if (t->nspans >= TRACER_MAX_SPANS) {
        t->spans_full = 1;
        return;
    }
    if (th->nspans == th->spans_cap) {
        sonde_span *s = sonde_grow(th->spans, &th->spans_cap, th->nspans + 1, sizeof *s,
                                   TRACER_MAX_SPANS);
        if (!s) {
            t->spans_full = 1;
            return;
        }
        th->spans = s;
    }
    th->spans[th->nspans++] = (sonde_span){ .start = start, .end = end, .node = node };
    t->nspans++;
}

static int hold(tracer *t, PyObject *obj)
{
    if (t->nheld == t->held_cap) {
        PyObject **h = sonde_grow(t->held, &t->held_cap, t->nheld + 1, sizeof *h, SIZE_MAX);
        if (!h)
            return -1;
        t->held = h;
    }
    Py_INCREF(obj);
    t->held[t->nheld++] = obj;
    return 0;
}

static uint32_t python_func(tracer *t, PyCodeObject *code)
{
    uint32_t f = sonde_code_func(&t->profile, code);
    if (f != SONDE_NO_FUNC && hold(t, (PyObject *)code) < 0)
        return SONDE_NO_FUNC;
    return f;
}

/* A torch region's function, held by its interned name (the key). */
static uint32_t region_func(tracer *t, PyObject *name)
{
    const char *text = PyUnicode_AsUTF8(name);
    uint32_t f = text ? sonde_profile_func(&t->profile, SONDE_TORCH_FILE, 0, text, text,
                                           SONDE_FUNC_TORCH)
                      : SONDE_NO_FUNC;
    if (f != SONDE_NO_FUNC && hold(t, name) < 0)
        return SONDE_NO_FUNC;
    if (f != SONDE_NO_FUNC)
        t->profile.funcs[f].region = 1;
    return f;
}

static uint32_t c_func(tracer *t, PyObject *callable, PyObject *self_arg)
{
    PyObject *bound = NULL;
    if (!PyCFunction_Check(callable)) {
        /* An unbound method descriptor: bind it as cProfile does, so the
         * label names the type the method was called on. */
        descrgetfunc get = Py_TYPE(callable)->tp_descr_get;
        bound = get ? get(callable, self_arg, (PyObject *)Py_TYPE(self_arg)) : NULL;
        if (!bound || !PyCFunction_Check(bound)) {
            PyErr_Clear();
            Py_XDECREF(bound);
            bound = NULL;
        }
    }
    /* One that cannot be bound (bytes.find(str()): the call raises
     * TypeError) is named by its own repr, the label cProfile gives the
     * method ("<method 'find' of 'bytes' objects>"). */
    PyObject *label = bound || PyCFunction_Check(callable) ? tracer_cfunc_label(bound ? bound
                                                                                    : callable)
                                                           : PyObject_Repr(callable);
    Py_XDECREF(bound);
    if (!label)
        PyErr_Clear();
    PyObject *name = sonde_text_bytes(label, "<built-in method ?>");
    Py_XDECREF(label);
    uint32_t f = SONDE_NO_FUNC;
    if (name)
        f = sonde_profile_func(&t->profile, "~", 0, PyBytes_AS_STRING(name),
                               PyBytes_AS_STRING(name), SONDE_FUNC_C);
    PyErr_Clear();
    Py_XDECREF(name);
    return f;
}

/* Names th from threading._active, which holds a thread from just before
 * it runs its target until it ends.  Returns 1 when named.  Only looks in
 * sys.modules: never imports; keeps the program's pending exception. */
static int name_from_threading(tracer_thread *th)
{
    saved_error saved = error_save();
    PyObject *modules = PyImport_GetModuleDict();
    PyObject *threading = modules ? PyDict_GetItemString(modules, "threading") : NULL;
    PyObject *active = threading ? PyObject_GetAttrString(threading, "_active") : NULL;
    PyObject *key = active ? PyLong_FromUnsignedLong(th->ident) : NULL;
    PyObject *thread = key && PyDict_Check(active) ? PyDict_GetItemWithError(active, key) : NULL;
    PyObject *name = thread ? PyObject_GetAttrString(thread, "_name") : NULL;
    PyObject *text = name ? sonde_text_bytes(name, "?") : NULL;
    int named = text && sonde_profile_set_thread_name(&th->owner->profile, th->index,
                                                      PyBytes_AS_STRING(text)) == 0;
    Py_XDECREF(text);
    PyErr_Clear();
    Py_XDECREF(name);
    Py_XDECREF(key);
    Py_XDECREF(active);
    error_restore(saved);
    return named;
}

uint32_t tracer_new_node(tracer_thread *th, uint32_t parent, const void *key,
                         PyObject *what, PyObject *self_arg)
{
    tracer *t = th->owner;
    uint32_t f = sonde_u64map_get(&t->func_by_key, (uint64_t)(uintptr_t)key);
    if (f == SONDE_U64MAP_NONE) {
        /* Naming may run Python code (a repr); keep any exception of the
         * profiled program intact around it. */
        saved_error saved = error_save();
        f = PyCode_Check(what) ? python_func(t, (PyCodeObject *)what)
            : PyUnicode_Check(what) ? region_func(t, what)
                                    : c_func(t, what, self_arg);
        error_restore(saved);
        uint32_t *slot = f == SONDE_NO_FUNC ? NULL
                         : sonde_u64map_slot(&t->func_by_key, (uint64_t)(uintptr_t)key, f);
        if (!slot) {
            t->failed = 1;
            return SONDE_NO_NODE;
        }
    }
    /* Each thread makes new nodes of its own as it starts: the first made
     * after threading registered it names it. */
    if (!th->named)
        th->named = name_from_threading(th);
    uint32_t node = sonde_profile_add_child(&t->profile, parent, key, f);
    if (node == SONDE_NO_NODE) {
        t->failed = 1;
    }
    return node;
}

void tracer_leave_other(tracer_thread *th, const void *key)
{
    uint32_t k = th->depth;
    while (k > 0 && th->stack[k - 1].key != key)
        k--;
    if (k == 0)
        return;
    uint64_t now = tracer_now(th->owner);
    while (th->depth >= k)
        tracer_leave_at(th, now);
}

void tracer_resync(tracer_thread *th, PyObject *const *frames, PyObject *const *codes, uint32_t n,
                   int running)
{
    const sonde_profile *p = &th->owner->profile;
    uint32_t keep = 0, r = 0; /* open calls kept; frames already open */
    for (uint32_t k = n; k > 0 && !keep; k--)
        for (uint32_t i = th->depth; i > 0; i--)
            if (th->stack[i - 1].frame == frames[k - 1] && th->stack[i - 1].key == codes[k - 1]) {
                keep = i;
                r = k;
                break;
            }
    /* Above the innermost frame, C calls may still be open, but only in a
     * thread waiting for the GIL (a stale one ends at its caller's return,
     * which finds it above). */
    if (keep && r == n && !running)
        while (keep < th->depth && p->funcs[p->nodes[th->stack[keep].node].func].kind == SONDE_FUNC_C)
            keep++;
    uint64_t now = tracer_now(th->owner);
    while (th->depth > keep)
        tracer_leave_at(th, now);
    /* With no open call left to place them, the frames entered unseen are
     * not known from those that ran before sonde started. */
    for (uint32_t k = keep ? r : n; k < n && !th->owner->failed; k++)
        tracer_enter(th, codes[k], frames[k], codes[k], NULL);
}

void tracer_unwind_all(tracer *t)
{
    for (tracer_thread *th = t->threads; th; th = th->next)
        tracer_unwind(th);
}

void tracer_name_threads(tracer *t)
{
    for (tracer_thread *th = t->threads; th; th = th->next) {
        if (th->named || (th->named = name_from_threading(th)))
            continue;
        char fallback[48];
        snprintf(fallback, sizeof fallback, "Thread-%lu", th->ident);
        sonde_profile_set_thread_name(&t->profile, th->index, fallback);
    }
}

void tracer_calibrate(tracer *t)
{
    sonde_clock_mark end = tracer_active == t ? sonde_clock_mark_now() : t->end;
    t->profile.seconds_per_tick = !t->timer.fn ? sonde_clock_seconds_per_tick(t->start, end)
                                  : t->timer.unit > 0 ? t->timer.unit : 1e-9;
}
