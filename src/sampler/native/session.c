/* session.c - one process's threads captured, unwound, named and merged; see session.h. */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/clock.h"
#include "../../core/grow.h"
#include "../proc/task.h"
#include "libdw_dl.h"
#include "merge.h"
#include "perf.h"
#include "ptrace.h"
#include "symbols.h"
#include "unwind.h"

#define MAX_NAMED (4u << 20)   /* distinct addresses named per process */
#define PERF_STACK (32u * 1024)   /* bytes of stack each perf sample copies */
#define PERF_PAGES 128u           /* data pages of each thread's perf ring: 16 samples */

typedef struct stream {        /* the perf samples of one thread that runs no Python */
    int tid;
    int seen;                  /* listed in /proc at this tick */
    sonde_native_perf perf;
} stream;

typedef struct named {         /* what one address (as a pc or a return address) is */
    uint32_t func;             /* in the walker's profile */
    int32_t line;              /* its source line, 0 when unknown */
    uint8_t kind;              /* enum sonde_merge_kind */
    uint8_t unmapped;          /* in no mapped object */
    uint8_t inlined;           /* the functions inlined at the address: the entries
                                  just before this one, outermost first */
} named;

/* A thread that runs Python, as the walk before the stops saw it. */
typedef struct python_thread {
    uint64_t native_id, tstate, thread_id;
    int64_t interp_id;
} python_thread;

/* How long the walk of the thread list before the stops may take, and the
 * listing of /proc/PID/task: both are cut there (and counted). */
#define LIST_MAX_NS 1000000000u

/* Threads sampled by perf at once (each holds a ring of PERF_PAGES and a
 * descriptor); threads past them are stopped with ptrace instead. */
#define PERF_STREAMS_MAX 256

typedef struct session {
    int pid;
    int keep_interp;
    sonde_native_objects objects;
    sonde_native_stack st;                      /* data: SONDE_NATIVE_STACK_MAX bytes */
    sonde_native_frame frames[SONDE_NATIVE_MAX_DEPTH];
    uint8_t kinds[SONDE_NATIVE_MAX_DEPTH];
    uint32_t which[SONDE_NATIVE_MAX_DEPTH];     /* frames[i]'s named[] index */
    sonde_merge_out merged[SONDE_WALK_MAX_DEPTH];
    sonde_u64map index;                         /* pc << 1 | return address -> named[] */
    named *named;
    size_t named_cap;
    uint32_t nnamed;
    sonde_native_symbol sym;                    /* one address's name while it is made */
    sonde_native_symbol lined;                  /* ... and with its file and line */
    sonde_thread_sample *batch;                 /* one batch of the walker's threads */
    python_thread *pythons;                     /* every thread that runs Python, this tick */
    size_t pythons_cap;
    sonde_u64map python_of;                     /* native id -> pythons[], this tick */
    int *tids;                                  /* every thread of the process, this tick */
    size_t tids_cap;
    sonde_thread_sample during;                 /* the thread being read, during its stop */
    sonde_thread_sample *current;               /* the thread being read, or NULL */
    sonde_walker *walker;                       /* for held(): the walker of this tick */
    int current_tid;
    const python_thread *current_python;        /* its walk before the stop; NULL: no Python */
    uint64_t period_ns;                         /* perf: one sample per this much CPU time */
    int perf;                                   /* 1: threads without Python go by perf */
    stream *streams;
    uint32_t nstreams;
    size_t streams_cap;
    sonde_u64map traced;                        /* threads another tracer holds: counted once */
} session;

/* The lines that explain a refused ptrace stop, and what to do. */
static void explain_refused(int pid, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "cannot stop the threads of process %d to read their native stacks (ptrace was "
             "refused: another tracer such as gdb or strace is attached, kernel.yama."
             "ptrace_scope forbids it, or a container lacks CAP_SYS_PTRACE): detach the other "
             "tracer, run sonde as root or with 'sysctl kernel.yama.ptrace_scope=0', or add "
             "--cap-add SYS_PTRACE",
             pid);
}

static void session_close(void *state)
{
    session *s = state;
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nstreams; i++)
        sonde_native_perf_close(&s->streams[i].perf);
    free(s->streams);
    sonde_native_objects_free(&s->objects);
    sonde_u64map_free(&s->index);
    free(s->named);
    free(s->st.data);
    free(s->batch);
    free(s->pythons);
    free(s->tids);
    sonde_u64map_free(&s->python_of);
    sonde_u64map_free(&s->traced);
    free(s);
}

static void *session_open(const sonde_walker *w, int keep_interp, double rate, char *err,
                          size_t errlen)
{
    session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->pid = w->proc.pid;
    s->keep_interp = keep_interp;
    sonde_u64map_init(&s->index);
    s->st.data = malloc(SONDE_NATIVE_STACK_MAX);
    s->st.cap = SONDE_NATIVE_STACK_MAX;
    sonde_u64map_init(&s->python_of);
    sonde_u64map_init(&s->traced);
    s->batch = malloc(SONDE_WALK_BATCH * sizeof *s->batch);
    int rc = s->st.data && s->batch ? sonde_native_objects_init(&s->objects, s->pid) : -ENOMEM;
    if (rc < 0) {
        snprintf(err, errlen, "cannot read the memory map of process %d: %s", s->pid,
                 strerror(-rc));
        free(s->st.data);
        free(s->batch);
        sonde_u64map_free(&s->index);
        free(s);
        return NULL;
    }
    /* One capture of the main thread first: a refusal is said once, here.
     * While another thread exec's, the main thread is a zombie, which
     * ptrace refuses too: a refusal is believed when three tries 2 ms
     * apart agree and the main thread is no zombie (the caller takes a
     * zombie for a process that is exec'ing or has ended). */
    for (int tries = 0; tries < 3; tries++) {
        rc = sonde_native_ptrace_capture(s->pid, s->pid, &s->st, NULL, NULL, NULL);
        if (rc != -EPERM || tries == 2)
            break;
        nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 2000000 }, NULL);
    }
    if (rc == -EPERM) {
        if (sonde_proc_task_state(s->pid, 0) == 'Z')
            snprintf(err, errlen, "process %d is exec'ing or has ended", s->pid);
        else
            explain_refused(s->pid, err, errlen);
        session_close(s);
        return NULL;
    }
    sonde_libdw_say_missing(stderr);
    /* Threads that run no Python need no consistent Python frames: where
     * perf_event_open is allowed, the kernel samples them, never stopped. */
    if (rate > 0) {
        sonde_native_perf probe;
        s->period_ns = (uint64_t)(1e9 / rate);
        s->perf = sonde_native_perf_open(&probe, s->pid, s->period_ns, PERF_STACK, 1) == 0;
        if (s->perf)
            sonde_native_perf_close(&probe);
    }
    return s;
}

/* Every thread of the process into s->tids[0 .. *n), as /proc lists
 * them, for at most LIST_MAX_NS (then *cut is set).  -ESRCH when there is
 * none; -1 on out of memory. */
static int list_threads(session *s, uint64_t started, uint32_t *n, int *cut)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", s->pid);
    DIR *d = opendir(path);
    *n = 0;
    if (!d)
        return -ESRCH;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || tid <= 0)
            continue;
        int *grown = sonde_grow(s->tids, &s->tids_cap, (size_t)*n + 1, sizeof *s->tids, INT32_MAX);
        if (!grown) {
            closedir(d);
            return -1;
        }
        s->tids = grown;
        s->tids[(*n)++] = (int)tid;
        if ((*n & 255) == 0 && sonde_clock_ns() - started > LIST_MAX_NS) {
            *cut = 1;
            break;
        }
    }
    closedir(d);
    return *n ? 0 : -ESRCH;
}

/* Which threads run Python: the walker's whole thread list, batch after
 * batch, into s->pythons and s->python_of, for at most LIST_MAX_NS (then
 * *cut is set).  -ESRCH when the process has gone, -1 on out of memory. */
static int list_pythons(session *s, sonde_walker *w, uint64_t started, uint32_t *npython,
                        int *cut)
{
    sonde_u64map_free(&s->python_of);
    sonde_u64map_init(&s->python_of);
    *npython = 0;
    uint64_t cursor = 0;
    do {
        uint32_t nb = 0;
        int rc = sonde_walker_sample(w, &cursor, s->batch, SONDE_WALK_BATCH, &nb);
        if (rc == -ESRCH)
            return rc;
        if (rc < 0)
            return 0; /* not initialised yet: no thread runs Python */
        sonde_walker_decide_threads(w, s->batch, nb);
        for (uint32_t i = 0; i < nb; i++) {
            python_thread *grown = sonde_grow(s->pythons, &s->pythons_cap, (size_t)*npython + 1,
                                              sizeof *s->pythons, UINT32_MAX - 1);
            uint32_t *slot = grown ? sonde_u64map_slot(&s->python_of, s->batch[i].native_id,
                                                       *npython) : NULL;
            if (!slot)
                return -1;
            s->pythons = grown;
            /* A kernel id several thread states give keeps the main
             * interpreter's: a subinterpreter's may carry the id of the
             * thread that made it, not of the one running it (before 3.13). */
            if (*slot != *npython && s->batch[i].interp_id == 0 &&
                s->pythons[*slot].interp_id != 0)
                *slot = *npython;
            s->pythons[(*npython)++] = (python_thread){ s->batch[i].native_id,
                                                        s->batch[i].tstate,
                                                        s->batch[i].thread_id,
                                                        s->batch[i].interp_id };
        }
        if (cursor && sonde_clock_ns() - started > LIST_MAX_NS)
            *cut = 1;
    } while (cursor && !*cut);
    return 0;
}

/* While the thread is stopped: its Python frames of this very moment. */
static void held(void *ctx)
{
    session *s = ctx;
    s->current = NULL;
    /* The thread state is read again: a thread ending meanwhile may have
     * left it to be reused, so it must still be this thread's. */
    if (sonde_walker_sample_thread(s->walker, s->current_python->tstate, &s->during) < 0 ||
        s->during.thread_id != s->current_python->thread_id)
        return;
    s->during.native_id = (uint64_t)s->current_tid;
    s->during.interp_id = s->current_python->interp_id;
    s->current = &s->during;
}

/* Gives native function func its object's mapping and the address addr
 * (pprof's Mapping and Location address), when it has none yet.  0, or
 * -1 on out of memory. */
static int place(session *s, sonde_profile *p, const sonde_native_object *ob, uint32_t func,
                 uint64_t addr)
{
    if (p->funcs[func].mapping)
        return 0;
    const sonde_native_range *r = sonde_native_objects_range(&s->objects, addr);
    unsigned char id[64];
    char hex[2 * sizeof id + 1] = "";
    size_t n = sonde_elf_build_id(&ob->f->elf, id, sizeof id);
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    uint32_t m = r ? sonde_profile_mapping(p, ob->path, hex, r->start, r->end, r->offset) : 0;
    if (r && !m)
        return -1;
    p->funcs[func].mapping = m;
    p->funcs[func].address = addr;
    return 0;
}

/* The functions inlined where sym is, named[] entries of nm's kind put
 * before the one nm will be (nm->inlined of them).  0, or -1 on out of
 * memory. */
static int add_inlined(session *s, sonde_profile *p, const sonde_native_object *ob,
                       const sonde_native_symbol *sym, named *nm)
{
    if (sym->ninlined <= 0)
        return 0;
    named *grown = sonde_grow(s->named, &s->named_cap, (size_t)s->nnamed + sym->ninlined + 1,
                              sizeof *s->named, MAX_NAMED);
    if (!grown)
        return -1;
    s->named = grown;
    for (int i = 0; i < sym->ninlined; i++) {
        const sonde_native_inlined *in = &sym->inlined[i];
        uint32_t func = sonde_profile_func(p, in->file[0] ? in->file : ob->path, 0, in->name,
                                           in->name, SONDE_FUNC_NATIVE);
        if (func == SONDE_NO_FUNC)
            return -1;
        s->named[s->nnamed++] = (named){ .func = func, .line = in->line, .kind = nm->kind };
    }
    nm->inlined = (uint8_t)sym->ninlined;
    return 0;
}

/* The named[] index of frame i's address, named on first sight.
 * SONDE_U64MAP_NONE on out of memory. */
static uint32_t name_of(session *s, sonde_walker *w, const sonde_native_frame *f, int i)
{
    int ra = i > 0; /* a return address: the call before it is what ran */
    uint64_t key = f->pc << 1 | (uint64_t)ra;
    uint32_t known = sonde_u64map_get(&s->index, key);
    if (known != SONDE_U64MAP_NONE)
        return known;
    named *grown = sonde_grow(s->named, &s->named_cap, (size_t)s->nnamed + 1, sizeof *s->named,
                              MAX_NAMED);
    if (!grown)
        return SONDE_U64MAP_NONE;
    s->named = grown;
    named nm = { .func = SONDE_NO_FUNC };
    sonde_native_object *ob = sonde_native_objects_find(&s->objects, f->pc - (uint64_t)ra);
    sonde_native_symbol *sym = &s->sym;
    int rc = ob ? sonde_native_symbolize(ob, s->pid, f->pc, ra, 0, sym) : 0;
    if (rc == -ENOMEM)
        return SONDE_U64MAP_NONE;
    if (ob && rc < 0) {
        /* Its file changed on disk while sonde held it (guard.h): named by
         * the object and the address alone. */
        char label[sizeof sym->name];
        snprintf(label, sizeof label, "%s+0x%" PRIx64, ob->name, f->pc - ob->bias);
        nm.func = sonde_profile_func(w->profile, ob->path, 0, label, label, SONDE_FUNC_NATIVE);
        nm.kind = SONDE_MERGE_NATIVE;
    } else if (!ob) {
        char label[48];
        snprintf(label, sizeof label, "0x%" PRIx64, f->pc);
        nm.func = sonde_profile_func(w->profile, "[unmapped]", 0, label, label,
                                     SONDE_FUNC_NATIVE);
        nm.kind = SONDE_MERGE_NATIVE;
        nm.unmapped = 1;
    } else {
        /* The interpreter: the file holding _PyRuntime, and a python
         * program that links it from libpython (its main and _start). */
        int interp = strcmp(ob->path, w->runtime.path) == 0 || strncmp(ob->name, "python", 6) == 0;
        nm.kind = (uint8_t)sonde_merge_kind_of(sym->has_symbol ? sym->name : NULL, interp);
        /* Lines only for frames that can be shown (the interpreter's
         * lines are large and read for nothing otherwise). */
        if (nm.kind == SONDE_MERGE_NATIVE || nm.kind == SONDE_MERGE_INTERP || s->keep_interp) {
            rc = sonde_native_symbolize(ob, s->pid, f->pc, ra, 1, &s->lined);
            if (rc == -ENOMEM)
                return SONDE_U64MAP_NONE;
            if (rc == 0)   /* else its file changed meanwhile: the name without a line */
                sym = &s->lined;
        }
        const char *file = sym->file[0] ? sym->file : ob->path;
        nm.func = sonde_profile_func(w->profile, file, 0, sym->name, sym->name,
                                     SONDE_FUNC_NATIVE);
        nm.line = sym->line;
        if (nm.func != SONDE_NO_FUNC && place(s, w->profile, ob, nm.func, f->pc - (uint64_t)ra) < 0)
            return SONDE_U64MAP_NONE;
        if (nm.func != SONDE_NO_FUNC && add_inlined(s, w->profile, ob, sym, &nm) < 0)
            return SONDE_U64MAP_NONE;
    }
    if (nm.func == SONDE_NO_FUNC)
        return SONDE_U64MAP_NONE;
    uint32_t *slot = sonde_u64map_slot(&s->index, key, s->nnamed);
    if (!slot)
        return SONDE_U64MAP_NONE;
    s->named[s->nnamed] = nm;
    return s->nnamed++;
}

/* The capture in s->st of thread tid, unwound, named and merged with its
 * Python frames py (NULL: none) into out.  1 when out holds a stack (torn
 * when its Python frames could not be read whole), 0 when empty, -1 on
 * out of memory. */
static int merge_into(session *s, sonde_walker *w, int tid, const sonde_thread_sample *py,
                      int on_cpu, sonde_thread_sample *out, sonde_native_tally *t)
{
    memset(out, 0, offsetof(sonde_thread_sample, frames));
    out->native_id = (uint64_t)tid;
    out->on_cpu = on_cpu;
    if (py && py->torn) {
        out->torn = 1;
        return 1;
    }
    uint32_t nn = 0;
    sonde_native_counts counts = { 0 };
    int end = sonde_native_unwind(&s->objects, &s->st, s->frames, SONDE_NATIVE_MAX_DEPTH, &nn,
                                  &counts);
    t->ends[end]++;
    t->maps_reads += counts.refreshes;
    for (uint32_t i = 0; i < nn; i++) {
        uint32_t k = name_of(s, w, &s->frames[i], (int)i);
        if (k == SONDE_U64MAP_NONE)
            return -1;
        s->which[i] = k;
        s->kinds[i] = s->named[k].kind;
        t->unmapped += s->named[k].unmapped;
    }
    static const uint8_t no_entries[1]; /* read-only */
    uint32_t n = 0;
    int result = sonde_merge(s->kinds, nn, py ? py->entry : no_entries, py ? py->depth : 0,
                             end == SONDE_NATIVE_COMPLETE, s->keep_interp, s->merged,
                             SONDE_WALK_MAX_DEPTH, &n);
    t->merges[result]++;
    if (py) {
        out->thread_id = py->thread_id;
        out->interp_id = py->interp_id;
        out->holds_gil = py->holds_gil;
        out->in_gc = py->in_gc;
        out->outer_frame = py->outer_frame;
        out->loop_frame = py->loop_frame; /* where dump --async finds 3.13's tasks */
    }
    /* Each native frame comes after the functions inlined in it, innermost
     * first. */
    uint32_t d = 0, i = 0;
    for (; i < n && d < SONDE_WALK_MAX_DEPTH; i++) {
        const sonde_merge_out *m = &s->merged[i];
        if (m->python) {
            out->frames[d++] = py->frames[m->index];
            if (py->task_depth && m->index + 1 == py->task_depth) {
                out->running_task = py->running_task; /* --async: the task's part ends here */
                out->task_depth = d;
            }
            continue;
        }
        uint32_t k = s->which[m->index], inlined = s->named[k].inlined;
        for (uint32_t j = 1; j <= inlined + 1 && d < SONDE_WALK_MAX_DEPTH; j++) {
            const named *nm = &s->named[j <= inlined ? k - j : k]; /* k - 1: the innermost */
            out->frames[d++] = (sonde_frame_sample){ .func = nm->func, .line = nm->line };
        }
    }
    out->truncated = d == SONDE_WALK_MAX_DEPTH || (py && py->truncated);
    out->depth = d;
    return d > 0;
}

/* Thread tid's stack into out, from a ptrace stop; python (NULL when it
 * runs no Python): its walk before the stop, whose thread's Python frames
 * are read again during the stop, its alone.  As merge_into, and 0 when the
 * thread could not be captured (counted). */
static int read_thread(session *s, sonde_walker *w, int tid, const python_thread *python,
                       char state, sonde_thread_sample *out, sonde_native_tally *t)
{
    uint64_t stopped = 0;
    s->walker = w;
    s->current_tid = tid;
    s->current_python = python;
    s->current = NULL;
    int rc = sonde_native_ptrace_capture(s->pid, tid, &s->st, python ? held : NULL, s,
                                         &stopped);
    t->stopped_ns += stopped;
    t->stops++;
    if (stopped > t->stopped_max_ns)
        t->stopped_max_ns = stopped;
    if (rc == -EPERM && sonde_proc_task_tracer(s->pid, tid) > 0) {
        /* refused: another tracer (strace -p, gdb) holds it; counted once */
        if (sonde_u64map_get(&s->traced, (uint64_t)tid) == SONDE_U64MAP_NONE &&
            sonde_u64map_slot(&s->traced, (uint64_t)tid, 1))
            t->traced++;
        return 0;
    }
    if (rc < 0) {
        t->gone++; /* ended, or (refused after the first capture) counted as gone */
        return 0;
    }
    t->captured++;
    return merge_into(s, w, tid, s->current, state == 'R', out, t);
}

/* The perf stream of thread tid, opened on first sight; NULL when perf
 * cannot sample it (the thread is then stopped with ptrace instead). */
static stream *stream_of(session *s, int tid)
{
    for (uint32_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].tid == tid)
            return &s->streams[i];
    stream *grown = sonde_grow(s->streams, &s->streams_cap, (size_t)s->nstreams + 1,
                               sizeof *s->streams, PERF_STREAMS_MAX);
    if (!grown)
        return NULL;
    s->streams = grown;
    stream *st = &s->streams[s->nstreams];
    if (sonde_native_perf_open(&st->perf, tid, s->period_ns, PERF_STACK, PERF_PAGES) < 0)
        return NULL;
    st->tid = tid;
    s->nstreams++;
    return st;
}

/* Every sample the kernel took of st's thread since the last tick, into
 * out[*n ..) up to max (the rest counted as lost).  -1 on out of memory,
 * else 0. */
static int drain(session *s, sonde_walker *w, stream *st, sonde_thread_sample *out,
                 uint32_t max, uint32_t *n, sonde_native_tally *t)
{
    uint64_t at;
    int got;
    while ((got = sonde_native_perf_next(&st->perf, &s->st, &at)) == 1) {
        t->captured++;
        t->perf_samples++;
        if (*n == max) {
            t->lost++;
            continue;
        }
        int kept = merge_into(s, w, st->tid, NULL, 1, &out[*n], t);
        if (kept < 0)
            return -1;
        *n += (uint32_t)kept;
    }
    if (got < 0)
        t->lost++; /* a record that made no sense: the rest of the ring is skipped */
    t->lost += st->perf.lost;
    st->perf.lost = 0;
    return 0;
}

/* Closes the streams of threads that were not listed this tick (ended). */
static void close_ended(session *s)
{
    for (uint32_t i = 0; i < s->nstreams;) {
        if (s->streams[i].seen) {
            s->streams[i++].seen = 0;
            continue;
        }
        sonde_native_perf_close(&s->streams[i].perf);
        s->streams[i] = s->streams[--s->nstreams];
    }
}

/* 1 when the walker's thread filter (--thread) keeps thread tid (its
 * Python thread state, or NULL): only those are ever stopped.  A Python
 * thread the walk left undecided (its name not read yet) waits. */
static int wanted(const session *s, sonde_walker *w, int tid, const python_thread *python)
{
    if (!w->filter)
        return 1;
    /* The key the walk decided it under (walker.c's filter_key). */
    int has_tid = w->layout.ts_native_thread_id != SONDE_PY_ABSENT;
    uint64_t key = python ? sonde_thread_filter_key(python->tstate, python->thread_id,
                                                    has_tid ? python->native_id : 0)
                          : sonde_thread_filter_key(0, 0, (uint64_t)tid);
    return sonde_thread_filter_decide(w->filter, s->pid, key, (uint64_t)tid, NULL,
                                      python == NULL) == 1;
}

static int session_sample(void *state, sonde_walker *w, int idle, sonde_thread_sample *out,
                          uint32_t max, uint32_t *n, uint64_t *idle_count, sonde_native_tally *t)
{
    session *s = state;
    uint32_t ntids, npython;
    int cut = 0;
    *n = 0;
    /* Which threads run Python (no stop): only theirs are walked again
     * while they are stopped. */
    const uint64_t started = sonde_clock_ns();
    int rc = list_pythons(s, w, started, &npython, &cut);
    if (rc == 0)
        rc = list_threads(s, started, &ntids, &cut);
    if (rc < 0)
        return rc;
    t->cut += (uint64_t)cut;
    for (uint32_t i = 0; i < ntids; i++) {
        int tid = s->tids[i];
        char st = sonde_proc_task_state(s->pid, tid);
        uint32_t k = sonde_u64map_get(&s->python_of, (uint64_t)tid);
        const python_thread *python = k == SONDE_U64MAP_NONE ? NULL : &s->pythons[k];
        if (!wanted(s, w, tid, python))
            continue;
        /* A thread without Python: the kernel's samples of its CPU time
         * (it is stopped only when idle ones are kept and it is idle). */
        stream *perf = s->perf && !python && st ? stream_of(s, tid) : NULL;
        if (perf) {
            perf->seen = 1;
            if (drain(s, w, perf, out, max, n, t) < 0)
                return -1;
            if (st == 'R')
                continue;
        }
        if (st == 0) {
            t->gone++;
            continue;
        }
        if (!idle && st != 'R') {
            (*idle_count)++;
            continue;
        }
        if (*n == max) {
            t->over++; /* out is full: this thread is not stopped at all */
            continue;
        }
        int got = read_thread(s, w, tid, python, st, &out[*n], t);
        if (got < 0)
            return -1;
        *n += (uint32_t)got;
    }
    close_ended(s);
    return 0;
}

/* Appends ", N what" to the line when n is not 0. */
static void part(FILE *f, int *first, uint64_t n, const char *what)
{
    if (!n)
        return;
    fprintf(f, "%s%llu %s", *first ? "" : ", ", (unsigned long long)n, what);
    *first = 0;
}

static void session_summary(FILE *f, const sonde_native_tally *t)
{
    fprintf(f, "sonde: native: %llu thread stacks captured: %llu by ptrace stops (%.1f us on "
            "average, %.1f us at most), %llu by perf_event_open (no stop)",
            (unsigned long long)t->captured, (unsigned long long)t->stops,
            t->stops ? (double)t->stopped_ns / (double)t->stops / 1e3 : 0.0,
            (double)t->stopped_max_ns / 1e3, (unsigned long long)t->perf_samples);
    if (t->gone)
        fprintf(f, ", %llu threads gone mid-sample", (unsigned long long)t->gone);
    if (t->traced)
        fprintf(f, ", %llu thread%s not read: held by another tracer (strace, gdb)",
                (unsigned long long)t->traced, t->traced == 1 ? "" : "s");
    if (t->lost)
        fprintf(f, ", %llu perf samples lost (the ring was full)", (unsigned long long)t->lost);
    if (t->over)
        fprintf(f, ", %llu stacks of running threads not read (over the %d one snapshot holds)",
                (unsigned long long)t->over, SONDE_WALK_BATCH);
    if (t->cut)
        fprintf(f, ", %llu snapshots cut after 1 s of listing threads", (unsigned long long)t->cut);
    fprintf(f, "\nsonde: native: unwinds: ");
    int first = 1;
    part(f, &first, t->ends[SONDE_NATIVE_COMPLETE], "complete");
    part(f, &first, t->ends[SONDE_NATIVE_DEPTH], "deeper than 512 frames");
    part(f, &first, t->ends[SONDE_NATIVE_OUT_OF_COPY], "cut at the stack copy's end");
    part(f, &first, t->ends[SONDE_NATIVE_NO_UNWIND_INFO], "stopped at code without unwind info");
    part(f, &first, t->ends[SONDE_NATIVE_BAD_FRAME], "stopped at a frame that goes nowhere");
    fprintf(f, "%s; merges with Python frames: ", first ? "none" : "");
    first = 1;
    part(f, &first, t->merges[SONDE_MERGE_EXACT], "exact");
    part(f, &first, t->merges[SONDE_MERGE_TOLERATED], "with an eval frame entering a call");
    part(f, &first, t->merges[SONDE_MERGE_PARTIAL], "of incomplete unwinds");
    part(f, &first, t->merges[SONDE_MERGE_AMBIGUOUS],
         "ambiguous (kept whole under the Python stack)");
    fprintf(f, "%s", first ? "none" : "");
    if (t->unmapped)
        fprintf(f, "; %llu frames in no mapped object (unmapped, or JIT code)",
                (unsigned long long)t->unmapped);
    if (t->maps_reads)
        fprintf(f, "; the maps read again %llu time%s for an address in no known object",
                (unsigned long long)t->maps_reads, t->maps_reads == 1 ? "" : "s");
    const sonde_native_files_counts *fc = &sonde_native_files_count;
    if (fc->shared)   /* several processes: what they shared */
        fprintf(f, "; %llu object files opened, %llu times one shared with a process that "
                "mapped it before, %llu symbol tables loaded", (unsigned long long)fc->opened,
                (unsigned long long)fc->shared, (unsigned long long)fc->symbols);
    fprintf(f, "\n");
}

/* Read-only: the command's main() hands it to the commands. */
const sonde_native_ops sonde_native_sampler = {
    .open = session_open,
    .close = session_close,
    .sample = session_sample,
    .summary = session_summary,
};
