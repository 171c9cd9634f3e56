/* lines_state.h - the line tracer's state and its hot path, shared by the
 * Python type (lines.c) and the two event sources (lines_monitoring.c from
 * 3.12, lines_legacy.c up to 3.11).  See lines.h for what is counted; in
 * memory mode (sonde mem) each line also gathers the figures of
 * mem_state.h.
 *
 * Protected by the GIL: every callback, and the one active tracer. */
#ifndef SONDE_LINES_STATE_H
#define SONDE_LINES_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>

#include "../../core/clock.h"
#include "../../core/u64map.h"
#include "../mem/mem_state.h"

/* A line's memory figures (memory mode), callees included. */
typedef struct line_mem {
    uint64_t alloc, freed;       /* bytes allocated / released while it ran */
    uint64_t net;                /* of those allocated, bytes alive at the end */
    uint64_t reserved;           /* of those, mapped and never touched at the end */
    uint64_t peak_heap;          /* the most heap bytes seen while it ran */
    uint64_t rss_max;            /* the most RSS at its end */
    int64_t rss_increment;       /* RSS at its end less RSS at its start, summed */
    uint32_t stamp;              /* the results walk that last counted it */
    uint32_t seen;               /* from the stack: the sample that last counted it */
} line_mem;

/* A traced code object.  One nested in a traced function (a lambda, a
 * comprehension or generator expression: their lines are that function's
 * lines) counts its hits in the function's hits array, which it shares,
 * over the function's range of lines; its time is already on the line
 * that ran it, so its own ticks and figures are not reported, and memory
 * mode leaves it out of stacks and spans. */
typedef struct line_code {
    PyObject *code;          /* strong reference */
    int first, nlines;       /* lines first .. first + nlines - 1 */
    int nested;              /* hits are the enclosing function's */
    uint64_t *hits, *ticks;
    int ninstr;              /* code units, when instructions are counted too, else 0 */
    uint64_t *ihits, *iticks;/* per code unit (an instruction's offset / 2) */
    int32_t *unit_lines;     /* 3.12+: the line of each code unit (0: none) */
    int nunits;
    line_mem *mem;           /* per line, in memory mode */
    uint32_t func;           /* memory mode: its function in the stacks profile */
    uint32_t index;          /* in the tracer's codes[] */
    uint32_t active;         /* memory mode: open activations, all threads */
    int64_t last_span;       /* memory mode: its latest timeline span, or -1 */
} line_code;

typedef struct line_frame {
    line_code *lc;
    const void *frame;       /* the activation (<= 3.11: its frame object) */
    int line;                /* the open line, or -1 */
    uint64_t start;          /* ticks when it opened */
    int instr;               /* the open instruction (code unit), or -1 */
    uint64_t istart;
    /* memory mode: the thread's totals and RSS when the line opened, the
     * most heap seen since, and the allocating stack's node (0: not known) */
    uint64_t alloc0, freed0, rss0, peak;
    uint32_t node;
} line_frame;

typedef struct line_thread {
    line_frame *stack;
    uint32_t depth, cap;
    uint64_t alloc_total, freed_total; /* memory mode: bytes (weights) so far */
    struct line_thread *next;
} line_thread;

typedef struct lines_tracer {
    PyObject_HEAD
    line_code **codes;       /* each allocated alone: open frames point at them */
    uint32_t ncodes, cap;
    sonde_u64map by_code;    /* code object address -> codes[] index */
    line_thread *threads;
    int failed;              /* sticky: out of memory while tracing */
    sonde_clock_mark start, end;
    mem_data *mem;           /* memory mode, else NULL */
    int line_events;         /* the event source is installed (always, unless a
                                memory mode reads stacks instead) */
} lines_tracer;

extern lines_tracer *lines_active;      /* the enabled tracer, or NULL: whether one is */
extern uint64_t lines_generation;       /* bumped at each enable and disable */
extern _Thread_local line_thread *lines_tls_thread __attribute__((tls_model("initial-exec")));
extern _Thread_local uint64_t lines_tls_generation __attribute__((tls_model("initial-exec")));

/* The calling thread's record, created for the active tracer (NULL on
 * out of memory, which marks the tracer failed). */
line_thread *lines_attach(lines_tracer *t);

static inline line_thread *lines_current(lines_tracer *t)
{
    return lines_tls_generation == lines_generation ? lines_tls_thread : lines_attach(t);
}

static inline line_code *lines_lookup(lines_tracer *t, const void *code)
{
    uint32_t i = sonde_u64map_get(&t->by_code, (uint64_t)(uintptr_t)code);
    return i == SONDE_U64MAP_NONE ? NULL : t->codes[i];
}

/* Memory mode: a line opens and closes with the thread's totals. */
static inline void mem_line_open(mem_data *m, line_thread *th, line_frame *f, uint64_t rss)
{
    f->alloc0 = th->alloc_total;
    f->freed0 = th->freed_total;
    f->rss0 = rss;
    f->peak = mem_heap(m);
    f->node = 0;
}

static inline void mem_line_close(mem_data *m, line_thread *th, line_frame *f, uint64_t rss)
{
    line_mem *lm = &f->lc->mem[f->line - f->lc->first];
    uint64_t heap = mem_heap(m), peak = f->peak > heap ? f->peak : heap;
    lm->alloc += th->alloc_total - f->alloc0;
    lm->freed += th->freed_total - f->freed0;
    lm->rss_max = rss > lm->rss_max ? rss : lm->rss_max;
    lm->rss_increment += (int64_t)rss - (int64_t)f->rss0;
    lm->peak_heap = peak > lm->peak_heap ? peak : lm->peak_heap;
}

static inline void lines_enter(lines_tracer *t, line_code *lc, const void *frame)
{
    line_thread *th = lines_current(t);
    if (!th)
        return;
    if (th->depth == th->cap) {
        uint32_t cap = th->cap ? th->cap * 2 : 64;
        mem_tls_busy++; /* a reallocation the hooks must not look into */
        line_frame *s = realloc(th->stack, cap * sizeof *s);
        mem_tls_busy--;
        if (!s) {
            t->failed = 1;
            return;
        }
        th->stack = s;
        th->cap = cap;
    }
    line_frame *f = &th->stack[th->depth];
    *f = (line_frame){ lc, frame, -1, 0, -1, 0, 0, 0, 0, 0, 0 };
    if (t->mem) {
        f->peak = mem_heap(t->mem);
        if (!lc->nested && lc->active++ == 0)
            mem_span_mark(t->mem, lc->index, &lc->last_span, sonde_clock_ns(), 0);
    }
    th->depth++;
}

/* Ends frame f, the top of th's stack, at `now`. */
static inline void lines_close(lines_tracer *t, line_thread *th, line_frame *f, uint64_t now)
{
    if (f->line >= 0)
        f->lc->ticks[f->line - f->lc->first] += now - f->start;
    if (f->instr >= 0)
        f->lc->iticks[f->instr] += now - f->istart;
    if (!t->mem)
        return;
    if (f->line >= 0)
        mem_line_close(t->mem, th, f, mem_rss(t->mem));
    if (f > th->stack && f[-1].peak < f->peak)
        f[-1].peak = f->peak;
    if (!f->lc->nested && --f->lc->active == 0)
        mem_span_mark(t->mem, f->lc->index, &f->lc->last_span, sonde_clock_ns(), 1);
}

/* The frame on top of this thread's stack when it runs code, else NULL. */
static inline line_frame *lines_top_of(line_thread *th, const void *frame, const void *code)
{
    if (!th || th->depth == 0)
        return NULL;
    line_frame *f = &th->stack[th->depth - 1];
    return f->frame == frame && (const void *)f->lc->code == code ? f : NULL;
}

static inline void lines_on_instruction(lines_tracer *t, const void *frame, const void *code, long unit)
{
    line_frame *f = lines_top_of(lines_current(t), frame, code);
    if (!f || f->lc->ninstr == 0)
        return;
    uint64_t now = sonde_clock_ticks();
    if (f->instr >= 0)
        f->lc->iticks[f->instr] += now - f->istart;
    f->instr = unit >= 0 && unit < f->lc->ninstr ? (int)unit : -1;
    if (f->instr >= 0) {
        f->lc->ihits[f->instr]++;
        f->istart = sonde_clock_ticks();
    }
}

static inline void lines_on_line(lines_tracer *t, const void *frame, const void *code, int line)
{
    line_thread *th = lines_current(t);
    line_frame *f = lines_top_of(th, frame, code);
    if (!f)
        return;
    int in_range = line >= f->lc->first && line < f->lc->first + f->lc->nlines;
    if (t->mem) {
        /* Memory mode keeps no time: bytes and RSS instead. */
        uint64_t rss = mem_rss(t->mem);
        if (f->line >= 0)
            mem_line_close(t->mem, th, f, rss);
        f->line = in_range ? line : -1;
        if (in_range) {
            f->lc->hits[line - f->lc->first]++;
            mem_line_open(t->mem, th, f, rss);
        }
        return;
    }
    uint64_t now = sonde_clock_ticks();
    if (f->line >= 0)
        f->lc->ticks[f->line - f->lc->first] += now - f->start;
    if (!in_range) {
        f->line = -1;
        return;
    }
    f->lc->hits[line - f->lc->first]++;
    f->line = line;
    f->start = sonde_clock_ticks();
}

static inline void lines_leave(lines_tracer *t, const void *frame)
{
    line_thread *th = lines_current(t);
    if (!th || th->depth == 0 || th->stack[th->depth - 1].frame != frame)
        return;
    lines_close(t, th, &th->stack[th->depth - 1], sonde_clock_ticks());
    th->depth--;
}

/* Memory mode (mem_results.c): registers a traced code object's function
 * in the stacks profile (SONDE_NO_FUNC on out of memory), and the
 * figures as Python objects (see the LineTracer.memory docstring). */
uint32_t mem_add_function(mem_data *m, PyCodeObject *code);
PyObject *mem_results(lines_tracer *t, PyObject *unused);

/* The event source: installs it for t / removes it / switches its events
 * on for one more code object.  0, or -1 with an exception. */
int lines_install(lines_tracer *t);
int lines_uninstall(lines_tracer *t);
int lines_watch(const line_code *lc);

#endif
