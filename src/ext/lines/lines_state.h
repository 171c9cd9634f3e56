/* lines_state.h - the line tracer's state and its hot path, shared by the
 * Python type (lines.c) and the two event sources (lines_monitoring.c from
 * 3.12, lines_legacy.c up to 3.11).  See lines.h for what is counted; in
 * memory mode (sonde mem) the memory profiler is told of each activation
 * and line (../mem/memory.h), and keeps its own figures.
 *
 * Several tracers may be enabled at once (line_profiler lets several
 * LineProfiler objects count the same calls): each event goes to every
 * enabled tracer, which counts it only for the code registered with it.
 * A memory-mode tracer is only ever enabled alone.
 *
 * Protected by the GIL: every callback, and the enabled tracers. */
#ifndef SONDE_LINES_STATE_H
#define SONDE_LINES_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>

#include "../../core/clock.h"
#include "../../core/grow.h"
#include "../../core/u64map.h"
#include "../mem/memory.h"

/* A traced code object.  One nested in a traced function (a lambda, a
 * comprehension or generator expression: their lines are that function's
 * lines) counts in the function's hits and iters arrays, which it shares,
 * over the function's range of lines; its time is already on the line
 * that ran it, so its own ticks are not reported.
 *
 * A line's hits are the times it began in its own function, as
 * line_profiler counts them; its iters, the times a line event repeated
 * the line its activation was already on (the next pass of a loop on one
 * line: a comprehension's items).  The line event that starts a nested
 * activation (a comprehension, lambda or generator expression called or
 * resumed from the line) is neither: the line already counted its hit.
 * So a list comprehension of 4 items counts 1 hit and 4 iters on every
 * version, run inlined (3.12+) or in its own code object. */
typedef struct line_code {
    PyObject *code;          /* strong reference */
    int first, nlines;       /* lines first .. first + nlines - 1 */
    int nested;              /* hits and iters are the enclosing function's */
    uint64_t *hits, *iters, *ticks;
    int ninstr;              /* code units, when instructions are counted too, else 0 */
    uint64_t *ihits, *iticks;/* per code unit (an instruction's offset / 2) */
    int32_t *unit_lines;     /* 3.12+: the line of each code unit (0: none) */
    int nunits;
    PyObject *name;          /* as the document shows it (strong reference) */
    uint32_t site;           /* memory mode: its site (MEM_NESTED when nested) */
} line_code;

typedef struct line_frame {
    line_code *lc;
    const void *frame;       /* the activation (<= 3.11: its frame object) */
    int line;                /* the open line, or -1 */
    int begun;               /* a line event has come in this activation */
    uint64_t start;          /* ticks when it opened */
    int instr;               /* the open instruction (code unit), or -1 */
    uint64_t istart;
} line_frame;

/* One thread's open frames, for one tracer: made the first time the
 * thread runs traced code, kept (and found again) until the tracer goes. */
typedef struct line_thread {
    line_frame *stack;
    uint32_t depth;
    size_t cap;
    uintptr_t owner;         /* the thread's key (lines_thread_key) */
    struct line_thread *next;
} line_thread;

typedef struct lines_tracer {
    PyObject_HEAD
    line_code **codes;       /* each allocated alone: open frames point at them */
    uint32_t ncodes;
    size_t cap;
    sonde_u64map by_code;    /* code object address -> codes[] index */
    line_thread *threads;
    int failed;              /* sticky: out of memory while tracing */
    sonde_clock_mark start, end;
    mem_data *mem;           /* memory mode, else NULL */
    PyObject *floor;         /* memory mode: the code held as mem->floor, or NULL */
    int line_events;         /* the event source is installed (always, unless a
                                memory mode reads stacks instead) */
    int slot;                /* while enabled: its number among the enabled (0 to
                                LINES_MAX_ON - 1; its cache entry in each thread:
                                lines_tls), else -1 */
    uint64_t serial;         /* this process's number for it, never reused */
} lines_tracer;

/* At most this many tracers are enabled at once. */
#define LINES_MAX_ON 32

/* The enabled tracers: lines_on[0 .. lines_non - 1].  GIL. */
extern lines_tracer *lines_on[LINES_MAX_ON];
extern int lines_non;

/* The memory profiler of the enabled memory-mode tracer, or NULL. */
static inline mem_data *lines_mem(void)
{
    return lines_non == 1 ? lines_on[0]->mem : NULL;
}

/* Thread-local: each thread's record for the tracer of a slot, valid while
 * its serial is that tracer's.  Slots share LINES_TLS_CACHED entries (slot
 * modulo their number): initial-exec TLS comes from the few hundred bytes
 * glibc keeps for libraries loaded at run time, and a fifth tracer enabled
 * at once only looks its record up more often. */
#define LINES_TLS_CACHED 4
typedef struct lines_cached {
    uint64_t serial;
    line_thread *th;
} lines_cached;
extern _Thread_local lines_cached lines_tls[LINES_TLS_CACHED]
    __attribute__((tls_model("initial-exec")));

/* The calling thread's record for an enabled tracer, found or made (NULL
 * on out of memory, which marks the tracer failed). */
line_thread *lines_attach(lines_tracer *t);

static inline line_thread *lines_current(lines_tracer *t)
{
    const lines_cached *c = &lines_tls[t->slot % LINES_TLS_CACHED];
    return c->serial == t->serial ? c->th : lines_attach(t);
}

static inline line_code *lines_lookup(lines_tracer *t, const void *code)
{
    uint32_t i = sonde_u64map_get(&t->by_code, (uint64_t)(uintptr_t)code);
    return i < t->ncodes ? t->codes[i] : NULL; /* NONE, or a registration undone */
}

static inline void lines_enter(lines_tracer *t, line_code *lc, const void *frame)
{
    line_thread *th = lines_current(t);
    if (!th)
        return;
    if (th->depth == th->cap) {
        if (t->mem)
            mem_busy_begin(); /* a reallocation the hooks must not look into */
        line_frame *s = sonde_grow(th->stack, &th->cap, (size_t)th->depth + 1, sizeof *s,
                                   UINT32_MAX);
        if (t->mem)
            mem_busy_end();
        if (!s) {
            t->failed = 1;
            return;
        }
        th->stack = s;
    }
    if (t->mem && mem_frame_enter(t->mem, lc->site) < 0) {
        t->failed = 1;
        return;
    }
    th->stack[th->depth++] = (line_frame){ .lc = lc, .frame = frame, .line = -1, .instr = -1 };
}

/* Ends frame f at `now`: its open line and instruction get their time
 * (memory mode keeps no time). */
static inline void lines_close(line_frame *f, uint64_t now)
{
    if (f->line >= 0)
        f->lc->ticks[f->line - f->lc->first] += now - f->start;
    if (f->instr >= 0)
        f->lc->iticks[f->instr] += now - f->istart;
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
    int begun = f->begun;
    f->begun = 1;
    if (t->mem) {
        /* Memory mode keeps no time: bytes and RSS instead. */
        f->line = in_range ? line : -1;
        if (in_range)
            f->lc->hits[line - f->lc->first]++;
        mem_line(t->mem, f->line);
        return;
    }
    uint64_t now = sonde_clock_ticks();
    if (f->line >= 0)
        f->lc->ticks[f->line - f->lc->first] += now - f->start;
    if (!in_range) {
        f->line = -1;
        return;
    }
    if (f->line == line)
        f->lc->iters[line - f->lc->first]++;
    else if (begun || !f->lc->nested)
        f->lc->hits[line - f->lc->first]++;
    f->line = line;
    f->start = sonde_clock_ticks();
}

static inline void lines_leave(lines_tracer *t, const void *frame)
{
    line_thread *th = lines_current(t);
    if (!th || th->depth == 0 || th->stack[th->depth - 1].frame != frame)
        return;
    if (t->mem)
        mem_frame_leave(t->mem);
    else
        lines_close(&th->stack[th->depth - 1], sonde_clock_ticks());
    th->depth--;
}

/* The lines document (document.c): bytes, or NULL with an exception. */
PyObject *lines_document(lines_tracer *t, PyObject *source_of, PyObject *instructions_of);

/* The event source, shared by the enabled tracers: installs it for the
 * first (lines_on[0], with its code) / removes it after the last; switches
 * a code object's events to what the enabled tracers ask of it (none where
 * none traces it).  0, or -1 with an exception. */
int lines_install(void);
int lines_uninstall(const lines_tracer *last);
int lines_watch(PyObject *code);

#endif
