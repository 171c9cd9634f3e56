/* sampler.c - the sampling loop and the aggregation of stacks; see sampler.h. */
#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "../core/clock.h"
#include "asyncio_tasks.h"
#include "proc/task.h"

/* The profile thread for a sampled thread of process pid, created on
 * first sight.  Thread states are told apart by address and process (user
 * addresses stay below 2^47, so the pid goes in the bits above); native
 * samples, which cover threads without one, by the kernel's thread id
 * (a run takes one kind or the other, never both). */
static int64_t thread_of(sonde_profile *p, sonde_u64map *index, const sonde_walker *w,
                         const sonde_thread_sample *s)
{
    uint64_t id = s->tstate ? s->tstate : s->native_id;
    uint64_t key = id ^ ((uint64_t)(uint32_t)w->proc.pid << 47);
    uint32_t known = sonde_u64map_get(index, key);
    if (known != SONDE_U64MAP_NONE)
        return known;
    char name[128];
    if (sonde_walker_thread_name(w, s, name, sizeof name) < 0)
        snprintf(name, sizeof name, "thread %llu", (unsigned long long)s->native_id);
    int64_t t = sonde_profile_add_thread(p, s->thread_id, s->native_id, name);
    if (t < 0 || !sonde_u64map_slot(index, key, (uint32_t)t))
        return -1;
    return t;
}

/* The child of node for a label frame ("process ...", "thread ..."). */
static uint32_t label_frame(sonde_profile *p, uint32_t node, const char *label)
{
    uint32_t f = sonde_profile_func(p, "~", 0, label, label, SONDE_FUNC_C);
    return f == SONDE_NO_FUNC ? SONDE_NO_NODE : sonde_profile_child_for(p, node, f, 0);
}

/* Adds the stack to the tree, weighing wt; its innermost node, or
 * SONDE_NO_NODE. */
static uint32_t add_stack(sonde_profile *p, uint32_t thread, const char *process_label,
                          const sonde_thread_sample *s, const sonde_sampler_opts *o, uint64_t wt)
{
    uint32_t node = p->threads[thread].root;
    p->nodes[node].total += wt;
    if (process_label) {
        if ((node = label_frame(p, node, process_label)) == SONDE_NO_NODE)
            return SONDE_NO_NODE;
        p->nodes[node].total += wt;
    }
    if (o->thread_roots) {
        char label[96];
        snprintf(label, sizeof label, "thread %s",
                 sonde_profile_str(p, p->threads[thread].name));
        if ((node = label_frame(p, node, label)) == SONDE_NO_NODE)
            return SONDE_NO_NODE;
        p->nodes[node].total += wt;
    }
    if (o->mode == SONDE_MODE_EXCEPTION && s->exc_func != SONDE_NO_FUNC) {
        if ((node = sonde_profile_child_for(p, node, s->exc_func, 0)) == SONDE_NO_NODE)
            return SONDE_NO_NODE;
        p->nodes[node].total += wt;
    }
    if (s->truncated) {
        if ((node = label_frame(p, node, SONDE_SAMPLER_TRUNCATED)) == SONDE_NO_NODE)
            return SONDE_NO_NODE;
        p->nodes[node].total += wt;
    }
    /* The collector runs inside the innermost Python frame, the one whose
     * allocation (or gc.collect()) started it; with native frames, the
     * collector's own C functions go on under <GC>. */
    uint32_t gc_under = 0;
    while (s->in_gc && gc_under + 1 < s->depth &&
           p->funcs[s->frames[gc_under].func].kind != SONDE_FUNC_PYTHON)
        gc_under++;
    for (uint32_t i = s->depth; i-- > 0;) {
        node = sonde_profile_child_for(p, node, s->frames[i].func, s->frames[i].line);
        if (node == SONDE_NO_NODE)
            return SONDE_NO_NODE;
        p->nodes[node].total += wt;
        if (s->in_gc && i == gc_under) {
            if ((node = label_frame(p, node, SONDE_SAMPLER_GC)) == SONDE_NO_NODE)
                return SONDE_NO_NODE;
            p->nodes[node].total += wt;
        }
    }
    p->nodes[node].self += wt;
    return node;
}

int sonde_sampler_keeps(const sonde_sampler_opts *o, const sonde_thread_sample *s)
{
    if (s->torn || s->depth == 0 || s->filtered)
        return 0;
    switch (o->mode) {
    case SONDE_MODE_CPU:
        return s->on_cpu != 0 && (!s->cpu_read || s->cpu_ns > 0);
    case SONDE_MODE_GIL:
        return s->holds_gil;
    case SONDE_MODE_EXCEPTION:
        return s->in_except;
    default:
        return 1;
    }
}

uint64_t sonde_sampler_weight(const sonde_sampler_opts *o, const sonde_thread_sample *s)
{
    if (o->mode != SONDE_MODE_CPU)
        return 1;
    return s->cpu_read ? s->cpu_ns : (uint64_t)(1e9 / o->rate); /* unknown: one period */
}

int sonde_sampler_add(sonde_profile *p, sonde_u64map *thread_index, const sonde_walker *w,
                      const char *process_label, const sonde_thread_sample *threads,
                      uint32_t n, const sonde_sampler_opts *o, uint64_t t_ns)
{
    for (uint32_t i = 0; i < n; i++) {
        const sonde_thread_sample *s = &threads[i];
        if (!sonde_sampler_keeps(o, s))
            continue;
        int64_t t = thread_of(p, thread_index, w, s);
        uint64_t weight = sonde_sampler_weight(o, s);
        uint32_t leaf = t < 0 ? SONDE_NO_NODE : add_stack(p, (uint32_t)t, process_label, s, o,
                                                          weight);
        /* The timeline keeps a CPU-weighed sample's ns (gecko's threadCPUDelta). */
        if (leaf == SONDE_NO_NODE ||
            sonde_profile_add_weighted_event(p, t_ns, (uint32_t)t, leaf,
                                             o->mode == SONDE_MODE_CPU ? weight : 0) < 0)
            return -1;
    }
    return 0;
}

/* Where in its period tick k samples, as a fraction: the golden-ratio
 * sequence frac(k * 0.618...).  It never locks onto a program's own
 * period (it is irrational), and it covers every phase more evenly than
 * random points would, so shares converge like 1/n rather than 1/sqrt(n). */
static double tick_phase(uint64_t k)
{
    const double golden = 0.6180339887498949;
    double x = (double)(k % 1000003u) * golden;
    return x - (double)(uint64_t)x;
}

/* Waits shorter than this are spun on the clock rather than slept: a
 * sleep costs the sampler more CPU than that (arming the timer and the
 * two context switches: 10-15 us measured on a 2-core VM, half of a
 * sample's cost at 50 kHz), and wakes later. */
#define SPIN_BELOW_NS 40000u

/* Until the monotonic clock reads at_ns (at once when it is past), or
 * until a stop. */
static void wait_until(uint64_t at_ns, volatile sig_atomic_t *stop, int stop_now)
{
    uint64_t now = sonde_clock_ns();
    if (stop_now || at_ns <= now)
        return;
    if (at_ns - now < SPIN_BELOW_NS) {
        while (!*stop && sonde_clock_ns() < at_ns)
            ;
        return;
    }
    struct timespec at = { (time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR && !*stop)
        ;
}

/* The native sampler's state of each process sampled (--native). */
typedef struct native_states {
    struct { int pid; void *state; } of[SONDE_FAMILY_MAX];
    uint32_t n;
} native_states;

/* The native state of process pid, opened on first sight; NULL with why
 * in counts->error. */
static void *native_state(native_states *ns, const sonde_sampler_opts *o, const sonde_walker *w,
                          sonde_sampler_counts *counts)
{
    for (uint32_t i = 0; i < ns->n; i++)
        if (ns->of[i].pid == w->proc.pid)
            return ns->of[i].state;
    if (ns->n == SONDE_FAMILY_MAX) { /* the oldest is a process that has ended */
        o->native->close(ns->of[0].state);
        memmove(ns->of, ns->of + 1, (ns->n - 1) * sizeof ns->of[0]);
        ns->n--;
    }
    void *state = o->native->open(w, o->native_all, o->rate, counts->error,
                                  sizeof counts->error);
    if (state) {
        ns->of[ns->n].pid = w->proc.pid;
        ns->of[ns->n++].state = state;
    }
    return state;
}

/* Forgets process pid's native state (it has ended). */
static void native_forget(native_states *ns, const sonde_sampler_opts *o, int pid)
{
    for (uint32_t i = 0; i < ns->n; i++)
        if (ns->of[i].pid == pid) {
            o->native->close(ns->of[i].state);
            ns->of[i] = ns->of[--ns->n];
            return;
        }
}

/* Why a snapshot stops sampling, beside the walker's errno values (-ESRCH
 * the process has gone, -EPERM or -EACCES sonde may not read it): below
 * every errno, so that none is taken for another; sonde_sampler_run
 * returns them as enum sonde_sampler_stop. */
enum { STOP_NO_MEMORY = -4097, STOP_FAILED = -4098, STOP_NO_MODE = -4099 };

/* How long one snapshot of one process may take: a thread list longer
 * than can be walked in that time (or cyclic: it is the target's memory)
 * is cut there, and counted. */
#define SNAPSHOT_MAX_NS 1000000000u

/* One batch of one member's threads: its Python stacks from *cursor on
 * (as sonde_walker_sample), or with native frames every thread's merged
 * stack at once (*cursor left 0).  As sonde_walker_sample, and -2 when
 * native frames cannot be read (why in counts->error). */
static int snapshot(sonde_family_member *m, native_states *ns, const sonde_sampler_opts *o,
                    uint64_t *cursor, sonde_thread_sample *threads, uint32_t *n,
                    sonde_sampler_counts *counts)
{
    sonde_walker *w = m->walker;
    int cpu = o->mode == SONDE_MODE_CPU;
    /* With native frames the native sampler tells idle threads, and each
     * stack's CPU is taken once it is read (its listing walks every
     * thread first). */
    w->skip_idle = w->cpu_time = cpu && !o->native;
    w->cpu_first_ns = (uint64_t)(1e9 / o->rate);
    w->read_exceptions = o->mode == SONDE_MODE_EXCEPTION;
    w->filter = o->threads;
    if (!o->native) {
        if (o->async && !*cursor)
            sonde_async_look(w, sonde_clock_ns());
        int got = sonde_walker_sample(w, cursor, threads, SONDE_WALK_BATCH, n);
        for (uint32_t i = 0; got == 0 && o->async && i < *n; i++)
            sonde_async_reroot(w, &threads[i]);
        if (got == 0 && cpu)
            sonde_walker_read_states(w, threads, *n);
        else if (got == 0)
            sonde_walker_decide_threads(w, threads, *n);
        return got;
    }
    *cursor = 0;
    void *state = native_state(ns, o, w, counts);
    if (!state) { /* a process that ended as it was first seen is gone, not a failure */
        char st = sonde_proc_task_state(w->proc.pid, 0);
        return st == 0 || st == 'Z' || st == 'X' ? -ESRCH : STOP_FAILED;
    }
    uint64_t idle_before = counts->idle;
    if (o->async)
        sonde_async_look(w, sonde_clock_ns());
    int got = o->native->sample(state, w, !cpu, threads, SONDE_WALK_BATCH, n, &counts->idle,
                                &counts->native);
    for (uint32_t i = 0; got == 0 && o->async && i < *n; i++)
        sonde_async_reroot(w, &threads[i]);
    counts->read += counts->idle - idle_before; /* idle: left unread, counted as count_batch does */
    if (got == 0 && cpu)
        sonde_walker_read_cpu(w, threads, *n);
    return got == -1 ? STOP_NO_MEMORY : got;
}

/* Counts what one batch of stacks held. */
static void count_batch(const sonde_sampler_opts *o, const sonde_thread_sample *threads,
                        uint32_t n, sonde_sampler_counts *counts)
{
    int cpu = o->mode == SONDE_MODE_CPU;
    for (uint32_t i = 0; i < n; i++) {
        const sonde_thread_sample *s = &threads[i];
        if (s->filtered) {
            counts->filtered++;
            continue;
        }
        counts->torn += s->torn;
        if (s->depth == 0 && s->on_cpu == 0 && cpu) {
            counts->read++; /* idle: the walker left its frames unread */
            counts->idle++;
            continue;
        }
        if (s->torn || s->depth == 0)
            continue;
        counts->read++;
        if (sonde_sampler_keeps(o, s)) {
            counts->kept++;
            counts->truncated += s->truncated;
            counts->cpu_unknown += cpu && !s->cpu_read;
            counts->cpu_ns += cpu ? sonde_sampler_weight(o, s) : 0;
            counts->gc += s->in_gc;
            counts->gc_weight += s->in_gc ? sonde_sampler_weight(o, s) : 0;
        } else if (cpu) {
            counts->idle++;
        } else if (o->mode == SONDE_MODE_GIL) {
            counts->not_gil++;
        } else {
            counts->not_except++;
        }
    }
}

/* --async-mode all: the threads of one snapshot, for their suspended tasks. */
#define TASK_THREADS_MAX 512
typedef struct snapshot_threads {
    uint32_t n;
    sonde_async_thread thread[TASK_THREADS_MAX];
    uint64_t thread_id[TASK_THREADS_MAX], native_id[TASK_THREADS_MAX],
        running_task[TASK_THREADS_MAX];
} snapshot_threads;

/* The threads of a batch that were read (--thread's filter lets their tasks through too). */
static void note_threads(snapshot_threads *seen, const sonde_thread_sample *threads, uint32_t n)
{
    for (uint32_t i = 0; i < n && seen->n < TASK_THREADS_MAX; i++) {
        if (threads[i].filtered || threads[i].undecided)
            continue;
        seen->thread[seen->n].tstate = threads[i].tstate;
        seen->thread[seen->n].loop_frame = threads[i].loop_frame;
        seen->thread_id[seen->n] = threads[i].thread_id;
        seen->native_id[seen->n] = threads[i].native_id;
        seen->running_task[seen->n++] = threads[i].running_task;
    }
}

/* --async-mode all: a sample of each suspended task's stack (asyncio_tasks.h) on the thread
 * whose list holds it, into p; a task a thread runs is in that thread's own sample, and one of
 * a thread that has ended (the interpreter's list) is left out.  0, or STOP_NO_MEMORY. */
static int add_suspended_tasks(sonde_family_member *m, sonde_profile *p, sonde_u64map *index,
                               const sonde_sampler_opts *o, const snapshot_threads *seen,
                               sonde_thread_sample *s, uint64_t t_ns, sonde_sampler_counts *counts)
{
    sonde_walker *w = m->walker;
    sonde_async_graph g;
    sonde_u64map at, owners; /* task -> its index in g; thread state -> its index in seen */
    if (!w->async_found)
        return 0; /* asyncio is not imported yet */
    if (sonde_async_read(w, seen->thread, seen->n, &g, counts->error, sizeof counts->error) < 0)
        return STOP_NO_MEMORY;
    sonde_u64map_init(&owners);
    sonde_u64map_init(&at);
    uint8_t *running = calloc((size_t)g.ntasks + 1, 1);
    int rc = !running || sonde_async_index(&g, &at) < 0 ? STOP_NO_MEMORY : 0;
    for (uint32_t i = 0; rc == 0 && i < seen->n; i++) {
        uint32_t k = sonde_u64map_get(&at, seen->running_task[i]);
        if (k != SONDE_U64MAP_NONE)
            running[k] = 1; /* its thread's sample has it */
        if (!sonde_u64map_slot(&owners, seen->thread[i].tstate, i))
            rc = STOP_NO_MEMORY;
    }
    for (uint32_t k = 0; rc == 0 && k < g.ntasks; k++) {
        uint32_t owner = g.tasks[k].tstate ? sonde_u64map_get(&owners, g.tasks[k].tstate)
                                           : SONDE_U64MAP_NONE;
        if (running[k] || owner == SONDE_U64MAP_NONE)
            continue;
        memset(s, 0, offsetof(sonde_thread_sample, frames));
        s->tstate = seen->thread[owner].tstate;
        s->thread_id = seen->thread_id[owner];
        s->native_id = seen->native_id[owner];
        s->on_cpu = -1;
        s->exc_func = SONDE_NO_FUNC;
        sonde_async_task_stack(w, &g, &at, k, s);
        if (sonde_sampler_add(p, index, w, o->subprocesses ? m->label : NULL, s, 1, o, t_ns) < 0)
            rc = STOP_NO_MEMORY;
        else
            counts->tasks++;
    }
    free(running);
    sonde_u64map_free(&owners);
    sonde_u64map_free(&at);
    sonde_async_free(&g);
    return rc;
}

/* One snapshot of one member into p, batch after batch until its thread
 * list ends or SNAPSHOT_MAX_NS has passed.  -ESRCH when the process has
 * gone; -EPERM or -EACCES when sonde may no longer read it; a STOP_
 * code (STOP_NO_MODE: nothing read, why in counts->error); else 0 (stop
 * set when on_tick asked to stop). */
static int sample_member(sonde_family_member *m, native_states *ns, sonde_profile *p,
                         sonde_u64map *index, const sonde_sampler_opts *o,
                         sonde_thread_sample *threads, uint64_t t_ns,
                         sonde_sampler_counts *counts, int *stop_now)
{
    uint64_t cursor = 0, started = sonde_clock_ns();
    char why[256];
    if (!sonde_sample_mode_supported(o->mode, &m->walker->layout, why, sizeof why)) {
        snprintf(counts->error, sizeof counts->error, "--mode %s: %s",
                 sonde_sample_mode_name(o->mode), why);
        return STOP_NO_MODE;
    }
    if (o->async && sonde_async_check(m->walker, counts->error, sizeof counts->error) < 0)
        return STOP_NO_MODE;
    snapshot_threads *seen = NULL;
    if (o->async_all && !(seen = calloc(1, sizeof *seen)))
        return STOP_NO_MEMORY;
    int rc = 0, whole = 0;
    do {
        uint32_t n;
        int got = snapshot(m, ns, o, &cursor, threads, &n, counts);
        if (got == -ESRCH || got == -EPERM || got == -EACCES || got <= STOP_NO_MEMORY) {
            rc = got;
            break;
        }
        if (got < 0)
            break; /* not initialised yet, or torn: the next tick will tell */
        count_batch(o, threads, n, counts);
        if (seen)
            note_threads(seen, threads, n);
        if (sonde_sampler_add(p, index, m->walker, o->subprocesses ? m->label : NULL, threads,
                              n, o, t_ns) < 0) {
            rc = STOP_NO_MEMORY;
            break;
        }
        if (o->on_tick && o->on_tick(o->tick_ctx, threads, n, cursor != 0)) {
            *stop_now = 1;
            break;
        }
        if (cursor && sonde_clock_ns() - started > SNAPSHOT_MAX_NS) {
            counts->cut++;
            if (o->on_tick)
                o->on_tick(o->tick_ctx, NULL, 0, 0);
            break;
        }
        whole = !cursor;
    } while (cursor);
    if (seen && whole && rc == 0)
        rc = add_suspended_tasks(m, p, index, o, seen, threads, t_ns, counts);
    free(seen);
    return rc;
}

/* Looks for the family's processes when it is time: every refresh_every
 * ns, and on every tick while it has none (waiting for a command to start
 * Python).  -ESRCH once the root has ended, else 0. */
static int look_for_processes(sonde_family *family, uint64_t t_ns, uint64_t *full_at)
{
    const uint64_t refresh_every = 200000000u; /* ns between full looks */
    int full = *full_at == 0 || t_ns - *full_at >= refresh_every;
    if (!full && family->count > 0)
        return 0;
    if (full)
        *full_at = t_ns ? t_ns : 1;
    return sonde_family_refresh(family, full);
}

/* Why sampling stops when sonde could not open /proc's files to see
 * whether pid still runs (err: -EMFILE, -ENFILE or -ENOMEM), into
 * counts->error: sonde's own shortage, which is not the process's end. */
static void explain_shortage(int err, int pid, sonde_sampler_counts *counts)
{
    struct rlimit limit = { 0 };
    getrlimit(RLIMIT_NOFILE, &limit);
    if (err == -EMFILE)
        snprintf(counts->error, sizeof counts->error,
                 "out of file descriptors (EMFILE: 'ulimit -n' is %llu) while "
                 "sampling process %d, which may still run: raise the limit (ulimit -n 1024) "
                 "and run again", (unsigned long long)limit.rlim_cur, pid);
    else
        snprintf(counts->error, sizeof counts->error,
                 "the system is out of %s (%s) while sonde samples process %d, which may "
                 "still run: free some and run again", err == -ENFILE ? "file descriptors"
                 : "memory", err == -ENFILE ? "ENFILE" : "ENOMEM", pid);
}

/* One snapshot of every member into p; a STOP_ code, else 0 (with
 * *stop_now set when the root ended or may no longer be read, or on_tick
 * asked to stop). */
static int sample_family(sonde_family *family, native_states *ns, sonde_profile *p,
                         sonde_u64map *index, const sonde_sampler_opts *o,
                         sonde_thread_sample *threads, uint64_t t_ns,
                         sonde_sampler_counts *counts, int *stop_now)
{
    for (uint32_t i = 0; i < family->count;) {
        sonde_family_member *m = &family->members[i];
        int got = sample_member(m, ns, p, index, o, threads, t_ns - counts->interval_ns, counts,
                                stop_now);
        if (got == -EPERM || got == -EACCES) {
            /* It made itself undumpable, or changed its user: what was
             * read stays, and is said; it is sampled no more. */
            if (!counts->denied++) {
                counts->denied_pid = m->pid;
                counts->denied_at = (double)t_ns * 1e-9;
            }
            if (m->pid == family->root) {
                *stop_now = 1;
                return 0;
            }
            if (o->native)
                native_forget(ns, o, m->pid);
            sonde_family_drop(family, i);
            continue;
        }
        if (got == -ESRCH && o->native)
            native_forget(ns, o, m->pid);
        if (got == -ESRCH && sonde_proc_alive(m->pid)) {
            /* Its memory could not be read, yet a thread runs: a thread
             * other than the main one is exec'ing (the next refresh
             * attaches to the new image), or the main thread alone ended. */
            i++;
            continue;
        }
        if (got == -ESRCH && m->pid == family->root) {
            counts->ended = 1;
            *stop_now = 1;
            return 0;
        }
        if (got == -ESRCH) {
            sonde_family_drop(family, i);
            continue;
        }
        if (got < 0)
            return got;
        i++;
    }
    return 0;
}

/* record --every at t_ns, past the end of the interval the profile holds:
 * the profile goes to on_interval (when the family has had a process), is
 * cleared, and the interval t_ns falls in begins.  0, or -1 when
 * on_interval asked to stop. */
static int next_interval(sonde_profile *p, sonde_u64map *index, const sonde_sampler_opts *o,
                         uint64_t t_ns, uint64_t every, sonde_sampler_counts *counts)
{
    if (counts->processes && o->on_interval(o->interval_ctx, p, counts, counts->interval_ns)) {
        counts->interval_failed = 1;
        return -1;
    }
    sonde_profile_clear_tree(p);
    sonde_u64map_free(index); /* it names the profile's threads */
    sonde_u64map_init(index);
    counts->interval_ns += (t_ns - counts->interval_ns) / every * every;
    return 0;
}

int sonde_sampler_run(sonde_family *family, sonde_profile *p, const sonde_sampler_opts *o,
                      volatile sig_atomic_t *stop, sonde_sampler_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    p->sample_rate = o->rate;
    p->seconds_per_tick = o->mode == SONDE_MODE_CPU ? 1e-9 : 1.0 / o->rate;
    p->pid = family->root;
    sonde_thread_sample *threads = malloc(SONDE_WALK_BATCH * sizeof *threads);
    if (!threads)
        return SONDE_SAMPLER_NO_MEMORY;
    sonde_u64map index;
    sonde_u64map_init(&index);
    native_states ns = { .n = 0 };
    /* Sleep exactly: the default 50 us of timer slack is half of a
     * 10 kHz period. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    const uint64_t period = (uint64_t)(1e9 / o->rate);
    const uint64_t start = sonde_clock_ns();
    const uint64_t end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
    uint64_t slot = start, full_at = 0;
    const uint64_t every = o->every > 0 ? (uint64_t)(o->every * 1e9) : 0;
    int rc = 0, stop_now = 0;
    while (!*stop && !stop_now && slot < end) {
        uint64_t t_ns = sonde_clock_ns() - start;
        if (counts->ticks && start + t_ns >= end)
            break; /* -d has passed while this tick slept: no sample after it */
        if (every && t_ns - counts->interval_ns >= every &&
            next_interval(p, &index, o, t_ns, every, counts) < 0)
            break;
        int looked = look_for_processes(family, t_ns, &full_at);
        if (looked == -ESRCH) {
            counts->ended = 1;
            break;
        }
        if (looked < 0) {
            explain_shortage(looked, family->root, counts);
            rc = STOP_FAILED;
            break;
        }
        counts->ticks++;
        uint64_t seen = counts->read + counts->torn;
        if ((rc = sample_family(family, &ns, p, &index, o, threads, t_ns, counts, &stop_now)) < 0)
            break;
        counts->blank += counts->read + counts->torn == seen;
        counts->processes = family->joined;
        slot += period;
        uint64_t t = sonde_clock_ns();
        if (t > slot) {
            uint64_t late = (t - slot) / period;
            counts->missed += late;
            slot += late * period;
        }
        wait_until(slot + (uint64_t)(tick_phase(counts->ticks) * (double)period), stop,
                   stop_now);
    }
    counts->seconds = (double)(sonde_clock_ns() - start) * 1e-9;
    counts->processes = family->joined;
    for (uint32_t i = 0; i < ns.n; i++)
        o->native->close(ns.of[i].state);
    sonde_u64map_free(&index);
    free(threads);
    return rc == STOP_NO_MEMORY ? SONDE_SAMPLER_NO_MEMORY : rc == STOP_FAILED ? SONDE_SAMPLER_FAILED
           : rc == STOP_NO_MODE ? SONDE_SAMPLER_NO_MODE : rc;
}
