/* tracer.h - the deterministic tracer's state and its hot path.
 *
 * A tracer fills one sonde_profile from interpreter events.  Each thread
 * that runs Python code while the tracer is on gets a tracer_thread: its
 * own root node and a stack of open calls.  Calls and returns arrive from
 * one of two hooks (hook_legacy.c: PyEval_SetProfile up to 3.11;
 * hook_monitoring.c: sys.monitoring from 3.12) and go through
 * tracer_enter / tracer_leave, which do no allocation in the common case:
 * the callee is found among the current node's children by pointer.
 *
 * Everything here runs with the GIL held.  Callbacks never raise: on
 * failure the tracer sets `failed`, the hooks then ignore every event,
 * and disable() reports it.  The tracer owns its threads, profile and the references it holds
 * on code objects (so their addresses stay unique while it lives). */
#ifndef SONDE_TRACER_H
#define SONDE_TRACER_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifndef Py_IS_TYPE /* 3.8 */
#define Py_IS_TYPE(ob, type) (Py_TYPE(ob) == (type))
#endif

#include "../../core/clock.h"
#include "../interp/pyerr.h"
#include "../../core/ops.h"
#include "../../core/profile.h"
#include "../../core/u64map.h"

typedef struct tracer_frame {
    const void *key;       /* the callee: its code object or PyMethodDef */
    const void *frame;     /* up to 3.11, a Python call's frame object */
    uint32_t node;
    uint64_t start;        /* ticks at entry */
    uint64_t child_ticks;  /* ticks spent in callees so far */
} tracer_frame;

typedef struct tracer tracer;

/* The program's own clock (cProfile's `timer` and `timeunit`), called at
 * every event instead of sonde's: user_timer.c. */
typedef struct tracer_timer {
    PyObject *fn;          /* the callable, or NULL for sonde's clock (strong) */
    double unit;           /* > 0: fn returns ints of this many seconds; 0: seconds */
    uint64_t last;         /* its last good reading, in ticks */
    int calling;           /* calls of fn under way (disable() and clear() refuse) */
    PyObject *error;       /* its first failure (sticky; strong): disable() raises it */
} tracer_timer;

typedef struct tracer_thread {
    tracer *owner;
    uint32_t index;        /* in owner->profile.threads */
    uint32_t root;         /* root node */
    tracer_frame *stack;
    uint32_t depth;
    size_t cap;
    unsigned long ident;
    uint64_t generation;   /* owner->generation when attached */
    int named;             /* the threading module's name was found */
    int paused;            /* pause_thread(): not hooked again (up to 3.11) */
#if PY_VERSION_HEX < 0x030C0000
    Py_tracefunc chain;    /* a profile function of the program's, chained */
    PyObject *chain_obj;   /* its argument (strong reference) */
#endif
    sonde_span *spans;     /* with spans_on: this thread's calls that lasted
                            * TRACER_SPAN_MIN ticks or more, in end order */
    size_t nspans, spans_cap;
    uint32_t cut;          /* spans logged for its open calls when logging last
                            * stopped (torch_ops_spans), the last ones */
    struct tracer_thread *next;
} tracer_thread;

struct tracer {
    sonde_profile profile;
    sonde_u64map func_by_key;   /* key pointer -> function id */
    PyObject **held;            /* strong references to keyed code objects */
    size_t nheld, held_cap;
    tracer_thread *threads;
    uint64_t generation;        /* bumped by each enable() */
    int builtins;               /* record C functions */
    int failed;                 /* sticky: out of memory while recording */
    int calibrated;
    sonde_clock_mark start, end;
    int spans_on;               /* log calls as spans (for torch operators) */
    size_t nspans;              /* spans logged, every thread together */
    int spans_full;             /* sticky: TRACER_MAX_SPANS reached, logging stopped */
    uint64_t span_ticks0;       /* ticks and CLOCK_REALTIME ns read together when */
    int64_t span_realtime0;     /* spans_on was set (torch's clock is the latter) */
    unsigned long span_native;  /* the thread that set spans_on */
    uint64_t spans_since;       /* ticks when spans_on was last set */
    PyObject *owner;            /* the Profiler object, held while enabled (strong):
                                 * what sys.getprofile() answers up to 3.11 */
    tracer_timer timer;         /* the program's clock, else sonde's (user_timer.c) */
};

/* Calls shorter than this many ticks (0.3-0.5 us of TSC, 1 us of the
 * nanosecond clock) are not logged as spans: no operator fits in one
 * (an operator under the profiler lasts over 1 us with its call).  */
#define TRACER_SPAN_MIN 1000u
/* Spans kept at most, all threads together (24 bytes each: 96 MiB). */
#define TRACER_MAX_SPANS (4u * 1024 * 1024)

int tracer_init(tracer *t);
/* Releases everything; the tracer must be disabled. */
void tracer_clear(tracer *t);

/* A new thread record for the calling thread (or for ident, another
 * thread); NULL on out of memory (t->failed is set). */
tracer_thread *tracer_attach(tracer *t, unsigned long ident, unsigned long native_id);
/* Closes every open call of every thread at the current time. */
void tracer_unwind_all(tracer *t);
/* In the child of a fork (run --subprocesses): what was recorded is the
 * parent's, so it goes, and only the thread that forked (ident, now
 * native_id) lives on: the others' records go too, and its open calls
 * open again now, in a tree of the child's own. */
void tracer_forked(tracer *t, unsigned long ident, unsigned long native_id);
/* Gives threads still unnamed their names from the threading module. */
void tracer_name_threads(tracer *t);
/* Sets profile.seconds_per_tick from the marks taken so far. */
void tracer_calibrate(tracer *t);

/* The program's timer, read now, in ticks (ns for a timer of seconds);
 * its last good reading once it has failed, or while another call of it
 * is under way in this thread.  Keeps a pending exception of the program's. */
uint64_t tracer_timer_read(tracer *t);
/* Sets t's timer (fn NULL: sonde's clock).  0, or -1 with an exception
 * (fn not callable, unit negative or not finite). */
int tracer_timer_set(tracer *t, PyObject *fn, double unit);
/* Releases the timer's references. */
void tracer_timer_clear(tracer *t);

/* The time now, in ticks of t's clock. */
static inline uint64_t tracer_now(tracer *t)
{
    return t->timer.fn ? tracer_timer_read(t) : sonde_clock_ticks();
}

/* Slow path of tracer_enter: a new node under parent for key; `what` is
 * the code object or C function object the key came from (or, for a
 * torch region, its interned name: the key), `self_arg` the bound object
 * for an unbound method descriptor (else NULL). */
uint32_t tracer_new_node(tracer_thread *th, uint32_t parent, const void *key,
                         PyObject *what, PyObject *self_arg);
int tracer_grow_stack(tracer_thread *th);
/* Logs a call of node from start to end as a span of th (spans_on). */
void tracer_log_span(tracer_thread *th, uint32_t node, uint64_t start, uint64_t end);
/* Slow path of tracer_leave: a return whose call is not the open call on
 * top.  When key's call is open deeper, it and the calls above it end
 * (their returns were not seen: another profiler had the hook); else the
 * call began unseen (before sonde started, or meanwhile) and is ignored. */
void tracer_leave_other(tracer_thread *th, const void *key);
/* Makes th's open calls those of its Python stack after a time in which
 * its events were not seen (up to 3.11): n frames, outermost first, as
 * frame objects and their code objects.  The open calls down to the
 * innermost frame still running stay; those above it ended unseen and end
 * now; the frames entered unseen open now.  `running`: th is the calling
 * thread, so no C call is open above its innermost frame (another thread
 * may be waiting inside one). */
void tracer_resync(tracer_thread *th, PyObject *const *frames, PyObject *const *codes, uint32_t n,
                   int running);

static inline void tracer_enter(tracer_thread *th, const void *key, const void *frame,
                                PyObject *what, PyObject *self_arg)
{
    uint32_t parent = th->depth ? th->stack[th->depth - 1].node : th->root;
    uint32_t node = sonde_profile_find_child(&th->owner->profile, parent, key);
    if (node == SONDE_NO_NODE &&
        (node = tracer_new_node(th, parent, key, what, self_arg)) == SONDE_NO_NODE)
        return;
    if (th->depth == th->cap && tracer_grow_stack(th) < 0)
        return;
    tracer_frame *f = &th->stack[th->depth++];
    f->key = key;
    f->frame = frame;
    f->node = node;
    f->child_ticks = 0;
    f->start = tracer_now(th->owner);
}

static inline void tracer_leave_at(tracer_thread *th, uint64_t now)
{
    if (th->depth == 0)
        return; /* a return from a call made before the tracer started */
    tracer_frame *f = &th->stack[--th->depth];
    /* A program's timer may go back: such a call took no time. */
    uint64_t elapsed = (int64_t)(now - f->start) > 0 ? now - f->start : 0;
    sonde_node *n = &th->owner->profile.nodes[f->node];
    n->calls++;
    n->total += elapsed;
    n->self += elapsed > f->child_ticks ? elapsed - f->child_ticks : 0;
    if (th->depth)
        th->stack[th->depth - 1].child_ticks += elapsed;
    if (th->owner->spans_on && elapsed >= TRACER_SPAN_MIN)
        tracer_log_span(th, f->node, f->start, now);
}

/* The return of the call of key. */
static inline void tracer_leave(tracer_thread *th, const void *key)
{
    if (th->depth && th->stack[th->depth - 1].key == key)
        tracer_leave_at(th, tracer_now(th->owner));
    else
        tracer_leave_other(th, key);
}

/* The C function's key and whether a callable is one cProfile records:
 * builtin functions and methods, and method descriptors called with a
 * self argument (self_arg non-NULL). */
static inline const void *tracer_cfunc_key(PyObject *callable, PyObject *self_arg)
{
    /* Most calls are to Python functions: answer those without the
     * subtype walk PyCFunction_Check does for a type that is not exact. */
    if (Py_IS_TYPE(callable, &PyFunction_Type) || Py_IS_TYPE(callable, &PyMethod_Type))
        return NULL;
    if (PyCFunction_Check(callable))
        return ((PyCFunctionObject *)callable)->m_ml;
    if (self_arg && Py_IS_TYPE(callable, &PyMethodDescr_Type))
        return ((PyMethodDescrObject *)callable)->d_method;
    return NULL;
}

/* cProfile's label for a C function object: "<built-in method
 * builtins.len>", "<method 'append' of 'list' objects>", ...  New
 * reference, or NULL with an exception set. */
PyObject *tracer_cfunc_label(PyObject *cfunc);

/* The enabled tracer, or NULL: whether a tracer records, in one place (at
 * most one does at a time).  Set by enable() before the hooks go in,
 * cleared by disable() before they come out.  Protected by the GIL. */
extern tracer *tracer_active;

/* The hooks, for tracer_active: install on every thread (0, or -1 with an
 * exception and nothing left installed) / remove (0, or -1 with an
 * exception). */
int hook_install(tracer *t);
int hook_remove(tracer *t);
/* Stops recording the calling thread only: its open calls end now. */
void hook_pause_current(tracer *t);
/* The calling thread's record while t records it, else NULL. */
tracer_thread *hook_current(tracer *t);

/* Closes the open calls of one thread at the current time. */
static inline void tracer_unwind(tracer_thread *th)
{
    uint64_t now = tracer_now(th->owner);
    while (th->depth)
        tracer_leave_at(th, now);
}

#endif
