/* asyncio_tasks.c - the asyncio task graph of another process; see asyncio_tasks.h. */
#include "asyncio_tasks.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/grow.h"
#include "../core/pyversions.h"
#include "asyncio_sets.h"
#include "proc/elf.h"
#include "proc/maps.h"
#include "python/attr.h"
#include "python/unicode.h"

/* A task object read whole is at most this large (3.14's is about 200 bytes). */
#define TASK_READ_MAX 1024
/* Structs the offsets are checked against: nothing of interest is larger. */
#define STRUCT_MAX ((uint64_t)1 << 20)

/* How often record --async looks for the _asyncio module until the program imports it (a
 * read of its memory map). */
#define ASYNC_LOOK_EVERY_NS 250000000u
/* Tasks awaiting tasks, followed from a running one before its stack is cut there. */
#define ASYNC_AWAITERS_MAX 64

#define TPFLAGS_LONG_SUBCLASS (1ul << 24)
#define TPFLAGS_UNICODE_SUBCLASS (1ul << 28)

typedef struct reader {
    sonde_walker *w;
    sonde_async_graph *g;
    size_t tasks_cap, frames_cap, waiters_cap;
} reader;

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int read_ptr(const sonde_walker *w, uint64_t addr, uint64_t *out)
{
    return sonde_proc_read(&w->proc, addr, out, sizeof *out);
}

static int proc_reader(void *ctx, uint64_t addr, void *buf, size_t len)
{
    return sonde_proc_read(&((sonde_walker *)ctx)->proc, addr, buf, len);
}

/* The offsets from file path, mapped at m, into w: 0, or -1 when it has no .AsyncioDebug
 * section or the section cannot be read from the process. */
static int offsets_in(sonde_walker *w, const char *path, const sonde_map *m)
{
    sonde_elf elf;
    if (sonde_elf_open(&elf, path) < 0)
        return -1;
    uint64_t base, at, size;
    int rc = sonde_elf_load_base(&elf, &base) == 0 &&
                     sonde_elf_section(&elf, ".AsyncioDebug", &at, &size) == 0 &&
                     size >= sizeof w->async_off
                 ? 0
                 : -1;
    sonde_elf_close(&elf);
    if (rc == 0)
        rc = sonde_proc_read(&w->proc, at + (m->start - base), w->async_off, sizeof w->async_off);
    return rc < 0 ? -1 : 0;
}

/* Every offset inside its struct, each struct of a sane size. */
static int offsets_valid(const uint64_t *o)
{
    static const struct {
        int field, size;
        uint64_t width;
    } inside[] = {
        { SONDE_ASYNC_TASK_NAME, SONDE_ASYNC_TASK_SIZE, 8 },
        { SONDE_ASYNC_TASK_AWAITED_BY, SONDE_ASYNC_TASK_SIZE, 8 },
        { SONDE_ASYNC_TASK_IS_TASK, SONDE_ASYNC_TASK_SIZE, 1 },
        { SONDE_ASYNC_TASK_AWAITED_BY_IS_SET, SONDE_ASYNC_TASK_SIZE, 1 },
        { SONDE_ASYNC_TASK_CORO, SONDE_ASYNC_TASK_SIZE, 8 },
        { SONDE_ASYNC_TASK_NODE, SONDE_ASYNC_TASK_SIZE, 16 },
        { SONDE_ASYNC_INTERP_TASKS_HEAD, SONDE_ASYNC_INTERP_SIZE, 16 },
        { SONDE_ASYNC_THREAD_TASK, SONDE_ASYNC_THREAD_SIZE, 8 },
        { SONDE_ASYNC_THREAD_TASKS_HEAD, SONDE_ASYNC_THREAD_SIZE, 16 },
    };
    if (o[SONDE_ASYNC_TASK_SIZE] > TASK_READ_MAX || o[SONDE_ASYNC_INTERP_SIZE] > STRUCT_MAX ||
        o[SONDE_ASYNC_THREAD_SIZE] > STRUCT_MAX)
        return 0;
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++)
        if (o[inside[i].field] > o[inside[i].size] ||
            o[inside[i].size] - o[inside[i].field] < inside[i].width)
            return 0;
    return 1;
}

/* Finds the _asyncio module's offsets, into w (async_found): in the file holding _PyRuntime (a
 * build with _asyncio built in), else in a mapped _asyncio*.so.  0, or -1 when asyncio is not
 * loaded. */
static int find_offsets(sonde_walker *w)
{
    int pid = w->proc.pid;
    sonde_maps maps;
    if (sonde_maps_read(pid, &maps) < 0)
        return -1;
    int rc = -1;
    for (int pass = 0; pass < 2 && rc < 0; pass++) {
        for (size_t i = 0; i < maps.count && rc < 0; i++) {
            const sonde_map *m = &maps.v[i];
            const char *base = strrchr(m->path, '/');
            base = base ? base + 1 : m->path;
            int wanted = pass == 0 ? strcmp(m->path, w->runtime.path) == 0
                                   : strncmp(base, "_asyncio", 8) == 0;
            char path[PATH_MAX + 64];
            if (m->offset != 0 || !wanted || sonde_maps_file(pid, m, path, sizeof path) < 0)
                continue;
            rc = offsets_in(w, path, m) == 0 && offsets_valid(w->async_off) ? 0 : -1;
        }
    }
    sonde_maps_free(&maps);
    w->async_found = rc == 0;
    return rc;
}

/* What a type is to the task graph, kept per type in walker.async_types. */
enum type_kind { AWAITS_INTO = 1, OTHER, STR, INT };

/* The kind of the type object at type: read once (its flags and name), then kept. */
static enum type_kind type_kind(sonde_walker *w, uint64_t type)
{
    uint32_t known = sonde_u64map_get(&w->async_types, type);
    if (known != SONDE_U64MAP_NONE)
        return (enum type_kind)known;
    uint64_t flags, name_at;
    char name[16] = "";
    if (read_ptr(w, type + w->layout.type_flags, &flags) < 0 ||
        read_ptr(w, type + w->layout.type_name, &name_at) < 0 ||
        sonde_proc_read(&w->proc, name_at, name, sizeof name - 1) < 0)
        return OTHER; /* unreadable: not kept */
    name[sizeof name - 1] = '\0';
    enum type_kind kind = flags & TPFLAGS_UNICODE_SUBCLASS ? STR
                          : flags & TPFLAGS_LONG_SUBCLASS  ? INT
                          : strcmp(name, "coroutine") == 0 || strcmp(name, "generator") == 0
                              ? AWAITS_INTO
                              : OTHER;
    if (w->async_types.count < 4096)
        (void)sonde_u64map_slot(&w->async_types, type, kind); /* else: not kept */
    return kind;
}

/* The kind of the object at obj's type, or OTHER when it cannot be read. */
static enum type_kind kind_of(sonde_walker *w, uint64_t obj)
{
    uint64_t type;
    return read_ptr(w, obj + w->layout.ob_type, &type) < 0 ? OTHER : type_kind(w, type);
}

/* Bytes read at a task's name object at once: its header and, for a short name, its text. */
#define NAME_READ 96

/* A task's name: a str, or the number of an unnamed task ("Task-N", as get_name() makes it
 * from the int kept until then).  Mostly one read. */
static void task_name(sonde_walker *w, uint64_t name, char *out, size_t outlen)
{
    const sonde_py_layout *l = &w->layout;
    uint8_t obj[NAME_READ];
    uint64_t type;
    snprintf(out, outlen, "?");
    if (!name || sonde_proc_read(&w->proc, name, obj, sizeof obj) < 0 ||
        l->ob_type + 8 > sizeof obj)
        return;
    memcpy(&type, obj + l->ob_type, 8);
    enum type_kind kind = type_kind(w, type);
    sonde_py_str_plan plan;
    if (kind == STR && sonde_py_str_plan_for(l, obj, sizeof obj, &plan) == 0 &&
        plan.data_offset + plan.nbytes <= sizeof obj) {
        if (sonde_py_str_decode(plan.kind, obj + plan.data_offset, plan.nbytes, out, outlen) < 0)
            snprintf(out, outlen, "?");
        return;
    }
    if (kind == STR) {
        if (sonde_py_read_str(l, proc_reader, (void *)w, name, out, outlen) < 0)
            snprintf(out, outlen, "?");
        return;
    }
    uint64_t tag;
    uint32_t digits[2] = { 0, 0 };
    /* 3.12 and 3.13 (which keep an int there too) publish no offsets: lv_tag at 16, digits at
     * 24, as 3.14's. */
    uint64_t tag_at = l->task_lists ? l->long_tag : 16,
             digit_at = l->task_lists ? l->long_digit : 24;
    if (kind != INT || tag_at + 8 > sizeof obj || digit_at + sizeof digits > sizeof obj)
        return;
    memcpy(&tag, obj + tag_at, 8);
    memcpy(digits, obj + digit_at, sizeof digits);
    uint64_t ndigits = tag >> 3; /* lv_tag: digits << 3 | sign (0 positive, 1 zero, 2 negative) */
    if ((tag & 3) == 2 || ndigits > 2)
        return;
    if (ndigits < 2)
        digits[1] = 0;
    if (ndigits < 1)
        digits[0] = 0;
    snprintf(out, outlen, "Task-%llu",
             (unsigned long long)digits[0] | (unsigned long long)digits[1] << 30);
}

/* 3.14+: the frame of coroutine coro (its code object, with its tag bits cleared, and
 * instruction) and, while it is suspended awaiting, the object on top of its stack (else 0).
 * 0, or -1 when it cannot be read. */
static int coro_in_lists(sonde_walker *w, uint64_t coro, uint64_t *code, uint64_t *instr,
                         uint64_t *awaited)
{
    const sonde_py_layout *l = &w->layout;
    const uint64_t tags = ~l->frame_code_tag_bits;
    /* The state and the frame's fields in one read: from the lower of the two to the end of
     * the last field. */
    uint64_t from = l->gen_frame_state < l->gen_iframe ? l->gen_frame_state : l->gen_iframe,
             span = l->gen_frame_state + 1 - from, sp;
    const uint64_t fields[] = { l->frame_code, l->frame_instr, l->frame_stackpointer };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (l->gen_iframe + fields[i] + 8 - from > span)
            span = l->gen_iframe + fields[i] + 8 - from;
    uint8_t block[512];
    if (span > sizeof block || sonde_proc_read(&w->proc, coro + from, block, span) < 0)
        return -1;
    const uint8_t *frame = block + (l->gen_iframe - from);
    uint8_t state = block[l->gen_frame_state - from];
    memcpy(code, frame + l->frame_code, 8);
    memcpy(instr, frame + l->frame_instr, 8);
    memcpy(&sp, frame + l->frame_stackpointer, 8);
    *code &= tags;
    if ((state == (uint8_t)l->gen_awaiting_state || state == (uint8_t)l->gen_awaiting_state_2) &&
        sp > 8 * l->gen_awaited_slot && read_ptr(w, sp - 8 * l->gen_awaited_slot, awaited) == 0)
        *awaited &= tags;
    else
        *awaited = 0;
    return 0;
}

/* The coroutine chain from coro down through what each coroutine awaits, into out[0 .. max),
 * innermost first: how many frames.  *cut is set when it was longer, or a coroutine of it
 * could not be read. */
static uint32_t chain_frames(sonde_walker *w, uint64_t coro, sonde_frame_sample *out,
                             uint32_t max, int *cut)
{
    uint32_t n = 0;
    for (; coro; n++) {
        uint64_t code, instr, awaited;
        int rc = n == max || n == SONDE_ASYNC_MAX_CHAIN ? -1
                 : w->layout.task_lists ? coro_in_lists(w, coro, &code, &instr, &awaited)
                                        : sonde_async_sets_coro(w, coro, &code, &instr, &awaited);
        if (rc < 0 || sonde_walker_name_frame(w, code, instr, &out[n]) < 0) {
            *cut = 1;
            break;
        }
        coro = awaited && kind_of(w, awaited) == AWAITS_INTO ? awaited : 0;
    }
    /* Read outermost first: turned innermost first, as stacks are shown. */
    for (uint32_t i = 0, j = n; i + 1 < j; i++, j--) {
        sonde_frame_sample keep = out[i];
        out[i] = out[j - 1];
        out[j - 1] = keep;
    }
    return n;
}

/* Task t's coroutine chain into the graph's frames.  0, or -1 on out of memory. */
static int read_chain(reader *r, sonde_async_task *t, uint64_t coro)
{
    sonde_async_graph *g = r->g;
    sonde_frame_sample *grown = sonde_grow(g->frames, &r->frames_cap,
                                           (size_t)g->nframes + SONDE_ASYNC_MAX_CHAIN,
                                           sizeof *grown, UINT32_MAX);
    if (!grown)
        return -1;
    g->frames = grown;
    t->first_frame = g->nframes;
    t->nframes = chain_frames(r->w, coro, g->frames + g->nframes, SONDE_ASYNC_MAX_CHAIN,
                              &t->chain_cut);
    g->nframes += t->nframes;
    return 0;
}

static int push_waiter(reader *r, uint64_t waiter)
{
    sonde_async_graph *g = r->g;
    uint64_t *grown = sonde_grow(g->waiters, &r->waiters_cap, (size_t)g->nwaiters + 1,
                                 sizeof *grown, UINT32_MAX);
    if (!grown)
        return -1;
    g->waiters = grown;
    g->waiters[g->nwaiters++] = waiter;
    return 0;
}

/* What a task object holds that the graph needs, copied as its list is walked. */
typedef struct task_fields {
    uint64_t addr, name, coro, awaited_by;
    int awaited_by_is_set;
} task_fields;

/* The objects awaiting a task, from its awaited_by (one object, or with
 * is_set a set of them), into out (room for max, at most
 * SONDE_ASYNC_MAX_WAITERS): how many.  0 for none, and for a set that
 * cannot be read or has more slots than max. */
static uint32_t awaiters_of(sonde_walker *w, uint64_t by, int is_set, uint64_t *out,
                            uint32_t max)
{
    const sonde_py_layout *l = &w->layout;
    if (!by)
        return 0;
    if (!is_set) {
        out[0] = by;
        return 1;
    }
    uint64_t table, mask, entries[2 * SONDE_ASYNC_MAX_WAITERS]; /* {key, hash} each */
    if (read_ptr(w, by + l->set_table, &table) < 0 || read_ptr(w, by + l->set_mask, &mask) < 0 ||
        mask >= max || sonde_proc_read(&w->proc, table, entries, (mask + 1) * 16) < 0)
        return 0;
    uint32_t n = 0;
    for (uint64_t i = 0; i <= mask; i++)
        if (entries[2 * i]) /* a deleted entry's dummy key matches no task */
            out[n++] = entries[2 * i];
    return n;
}

/* The objects awaiting task t.  0, or -1 on out of memory. */
static int read_waiters(reader *r, sonde_async_task *t, const task_fields *f)
{
    uint64_t by[SONDE_ASYNC_MAX_WAITERS];
    t->first_waiter = r->g->nwaiters;
    t->nwaiters = awaiters_of(r->w, f->awaited_by, f->awaited_by_is_set, by,
                              SONDE_ASYNC_MAX_WAITERS);
    for (uint32_t i = 0; i < t->nwaiters; i++)
        if (push_waiter(r, by[i]) < 0)
            return -1;
    return 0;
}

/* The tasks on the list whose head is at `head` (in a thread state, or the interpreter's: then
 * tstate is 0).  The list is walked first, each task copied as it is met, and only then are
 * names, chains and awaiters read: tasks end and start while the list is walked, and the
 * shorter the walk, the likelier it is whole.  0, or -1 on out of memory. */
static int read_list(reader *r, uint64_t head, uint64_t tstate)
{
    sonde_async_graph *g = r->g;
    uint64_t node;
    if (read_ptr(r->w, head, &node) < 0) {
        g->lists_cut = 1;
        return 0;
    }
    task_fields *met = NULL;
    size_t nmet = 0, met_cap = 0;
    uint8_t task[TASK_READ_MAX];
    while (node != head) {
        uint64_t addr = node - r->w->async_off[SONDE_ASYNC_TASK_NODE];
        if (!node || g->ntasks + nmet >= SONDE_ASYNC_MAX_TASKS ||
            sonde_proc_read(&r->w->proc, addr, task, r->w->async_off[SONDE_ASYNC_TASK_SIZE]) < 0) {
            g->lists_cut = 1;
            break;
        }
        task_fields *grown = sonde_grow(met, &met_cap, nmet + 1, sizeof *grown, UINT32_MAX);
        if (!grown) {
            free(met);
            return -1;
        }
        met = grown;
        task_fields *f = &met[nmet++];
        f->addr = addr;
        memcpy(&node, task + r->w->async_off[SONDE_ASYNC_TASK_NODE], 8);
        memcpy(&f->name, task + r->w->async_off[SONDE_ASYNC_TASK_NAME], 8);
        memcpy(&f->coro, task + r->w->async_off[SONDE_ASYNC_TASK_CORO], 8);
        memcpy(&f->awaited_by, task + r->w->async_off[SONDE_ASYNC_TASK_AWAITED_BY], 8);
        f->awaited_by_is_set = task[r->w->async_off[SONDE_ASYNC_TASK_AWAITED_BY_IS_SET]] != 0;
    }
    int rc = 0;
    for (size_t i = 0; i < nmet && rc == 0; i++) {
        sonde_async_task *grown = sonde_grow(g->tasks, &r->tasks_cap, (size_t)g->ntasks + 1,
                                             sizeof *grown, UINT32_MAX);
        if (!grown) {
            rc = -1;
            break;
        }
        g->tasks = grown;
        sonde_async_task *t = &g->tasks[g->ntasks++];
        *t = (sonde_async_task){ .addr = met[i].addr, .tstate = tstate };
        task_name(r->w, met[i].name, t->name, sizeof t->name);
        rc = read_chain(r, t, met[i].coro) < 0 || read_waiters(r, t, &met[i]) < 0 ? -1 : 0;
    }
    free(met);
    return rc;
}

int sonde_async_check(const sonde_walker *w, char *err, size_t errlen)
{
    if (w->layout.task_lists || sonde_async_sets_kept(w))
        return 0;
    return fail(err, errlen,
                "--async: process %d runs a Python whose asyncio tasks sonde cannot find from "
                "outside (it reads those of Python " SONDE_PY_RANGE ")", w->proc.pid);
}

/* Adds the task met to the graph, on the thread tstate, its name and chain read.  0, or -1
 * on out of memory. */
static int add_set_task(reader *r, const sonde_async_set_task *met, uint64_t tstate)
{
    sonde_async_graph *g = r->g;
    sonde_async_task *grown = sonde_grow(g->tasks, &r->tasks_cap, (size_t)g->ntasks + 1,
                                         sizeof *grown, UINT32_MAX);
    if (!grown)
        return -1;
    g->tasks = grown;
    sonde_async_task *t = &g->tasks[g->ntasks++];
    *t = (sonde_async_task){ .addr = met->addr, .tstate = tstate };
    task_name(r->w, met->name, t->name, sizeof t->name);
    return read_chain(r, t, met->coro);
}

/* Who awaits whom, from each task's _fut_waiter turned round: a task waiting on task T, or on
 * a gather of T, awaits T.  Each task's awaiters are put together in g.waiters, in the order
 * met.  0, or -1 on out of memory. */
static int sets_waiters(reader *r, const sonde_async_set_task *met, const sonde_u64map *at)
{
    sonde_async_graph *g = r->g;
    typedef struct pair {
        uint32_t awaited, by; /* indices in g.tasks */
    } pair;
    pair *pairs = NULL;
    size_t npairs = 0, cap = 0;
    uint32_t *next = calloc((size_t)g->ntasks + 1, sizeof *next);
    int rc = next ? 0 : -1;
    for (uint32_t a = 0; a < g->ntasks && rc == 0; a++) {
        uint64_t on[64];
        uint32_t n = 1;
        if (sonde_u64map_get(at, met[a].fut_waiter) != SONDE_U64MAP_NONE)
            on[0] = met[a].fut_waiter;
        else
            n = sonde_async_sets_gathered(r->w, met[a].fut_waiter, on, 64);
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            uint32_t k = sonde_u64map_get(at, on[i]);
            if (k == SONDE_U64MAP_NONE)
                continue; /* not a task read: a future, or one that ended */
            pair *grown = sonde_grow(pairs, &cap, npairs + 1, sizeof *grown, UINT32_MAX);
            if (!grown) {
                rc = -1;
                break;
            }
            pairs = grown;
            pairs[npairs++] = (pair){ k, a };
            g->tasks[k].nwaiters++;
        }
    }
    /* Counted by the task awaited: each one's room, then filled in the order met. */
    uint64_t *grown = rc == 0 ? sonde_grow(g->waiters, &r->waiters_cap,
                                           (size_t)g->nwaiters + npairs + 1, sizeof *grown,
                                           UINT32_MAX)
                              : NULL;
    if (rc == 0 && grown) {
        g->waiters = grown;
        for (uint32_t k = 0; k < g->ntasks; k++) {
            g->tasks[k].first_waiter = g->nwaiters;
            next[k] = g->nwaiters;
            g->nwaiters += g->tasks[k].nwaiters;
        }
        for (size_t i = 0; i < npairs; i++)
            g->waiters[next[pairs[i].awaited]++] = met[pairs[i].by].addr;
    } else {
        rc = -1;
    }
    free(pairs);
    free(next);
    return rc;
}

/* Up to 3.13: every task of asyncio.tasks' sets, each on the thread whose loop runs it (0: no
 * thread's), with its awaiters.  0, or -1 on out of memory. */
static int read_sets(reader *r, const sonde_async_thread *threads, uint32_t n)
{
    sonde_walker *w = r->w;
    sonde_async_graph *g = r->g;
    for (uint32_t i = 0; i < n && !w->async_found; i++)
        (void)sonde_async_sets_find(w, threads[i].loop_frame);
    if (!w->async_found) {
        g->no_loop = 1;
        return 0;
    }
    sonde_async_set_task *met = malloc(SONDE_ASYNC_MAX_TASKS * sizeof *met);
    uint64_t *loops = malloc((n ? n : 1) * sizeof *loops);
    sonde_u64map at;
    sonde_u64map_init(&at);
    int rc = met && loops ? 0 : -1;
    uint32_t nmet = rc == 0 ? sonde_async_sets_tasks(w, met, SONDE_ASYNC_MAX_TASKS,
                                                     &g->lists_cut)
                            : 0;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        loops[i] = sonde_async_sets_loop(w, threads[i].loop_frame);
    for (uint32_t k = 0; k < nmet && rc == 0; k++) {
        uint64_t tstate = 0;
        for (uint32_t i = 0; i < n && !tstate; i++)
            if (loops[i] && loops[i] == met[k].loop)
                tstate = threads[i].tstate;
        if (add_set_task(r, &met[k], tstate) < 0 || !sonde_u64map_slot(&at, met[k].addr, k))
            rc = -1;
    }
    if (rc == 0)
        rc = sets_waiters(r, met, &at);
    sonde_u64map_free(&at);
    free(met);
    free(loops);
    return rc;
}

int sonde_async_read(sonde_walker *w, const sonde_async_thread *threads, uint32_t n,
                     sonde_async_graph *g, char *err, size_t errlen)
{
    *g = (sonde_async_graph){ 0 };
    reader r = { .w = w, .g = g };
    int pid = w->proc.pid;
    if (sonde_async_check(w, err, errlen) < 0)
        return -1;
    if (!w->layout.task_lists) {
        if (read_sets(&r, threads, n) < 0)
            goto oom;
        return 0;
    }
    if (!w->async_found && find_offsets(w) < 0) {
        g->not_imported = 1;
        return 0;
    }
    for (uint32_t i = 0; i < n; i++)
        if (read_list(&r, threads[i].tstate + w->async_off[SONDE_ASYNC_THREAD_TASKS_HEAD],
                      threads[i].tstate) < 0)
            goto oom;
    if (w->interp && read_list(&r, w->interp + w->async_off[SONDE_ASYNC_INTERP_TASKS_HEAD], 0) < 0)
        goto oom;
    return 0;
oom:
    sonde_async_free(g);
    return fail(err, errlen, "--async: out of memory reading the tasks of process %d", pid);
}

void sonde_async_free(sonde_async_graph *g)
{
    free(g->tasks);
    free(g->frames);
    free(g->waiters);
    *g = (sonde_async_graph){ 0 };
}

int64_t sonde_async_find(const sonde_async_graph *g, uint64_t addr)
{
    for (uint32_t i = 0; i < g->ntasks; i++)
        if (g->tasks[i].addr == addr)
            return i;
    return -1;
}

void sonde_async_look(sonde_walker *w, uint64_t now_ns)
{
    w->async_wanted = 1;
    if (!w->layout.task_lists) { /* up to 3.13: each loop's running task, every snapshot (the
                                    walk finds the sets) */
        sonde_async_sets_current(w);
        return;
    }
    if (w->async_found ||
        (!w->async_hint && w->async_looked_ns &&
         now_ns - w->async_looked_ns < ASYNC_LOOK_EVERY_NS))
        return;
    w->async_looked_ns = now_ns;
    w->async_hint = 0;
    (void)find_offsets(w); /* not imported yet: looked for again later */
}

/* The "<task NAME>" function of the task named name. */
static uint32_t named_task_func(sonde_walker *w, const char *name)
{
    char label[sizeof ((sonde_async_task *)0)->name + 8];
    snprintf(label, sizeof label, "<task %s>", name);
    return sonde_profile_func(w->profile, "~", 0, label, label, SONDE_FUNC_C);
}

/* The "<task NAME>" function of the task read whole into block. */
static uint32_t task_func(sonde_walker *w, const uint8_t *block)
{
    uint64_t name_at;
    char name[120];
    memcpy(&name_at, block + w->async_off[SONDE_ASYNC_TASK_NAME], 8);
    task_name(w, name_at, name, sizeof name);
    return named_task_func(w, name);
}

/* The first task awaiting the task read into block (its awaited_by: one object, or a set of
 * them; futures are passed over), read into block in its place.  Its address, or 0. */
static uint64_t first_waiter(sonde_walker *w, uint8_t *block, uint64_t size)
{
    uint64_t by, candidates[16];
    memcpy(&by, block + w->async_off[SONDE_ASYNC_TASK_AWAITED_BY], 8);
    uint32_t n = awaiters_of(w, by, block[w->async_off[SONDE_ASYNC_TASK_AWAITED_BY_IS_SET]],
                             candidates, 16);
    for (uint32_t i = 0; i < n; i++)
        if (sonde_proc_read(&w->proc, candidates[i], block, size) == 0 &&
            block[w->async_off[SONDE_ASYNC_TASK_IS_TASK]])
            return candidates[i];
    return 0;
}

static void reroot_from_sets(sonde_walker *w, sonde_thread_sample *s);

void sonde_async_reroot(sonde_walker *w, sonde_thread_sample *s)
{
    if (!w->layout.task_lists) {
        if (s->running_task && s->task_depth)
            reroot_from_sets(w, s);
        return;
    }
    uint64_t task = s->running_task, size = w->async_off[SONDE_ASYNC_TASK_SIZE];
    uint8_t block[TASK_READ_MAX];
    if (!task || s->task_depth == 0 || size > sizeof block ||
        sonde_proc_read(&w->proc, task, block, size) < 0)
        return;
    uint32_t depth = s->task_depth;
    for (uint32_t level = 0; depth < SONDE_WALK_MAX_DEPTH && level < ASYNC_AWAITERS_MAX; level++) {
        uint32_t func = task_func(w, block);
        if (func == SONDE_NO_FUNC)
            break;
        s->frames[depth] = (sonde_frame_sample){ .func = func, .line = 0 };
        s->entry[depth++] = 0;
        uint64_t coro;
        int cut = 0;
        if (!(task = first_waiter(w, block, size)))
            break;
        memcpy(&coro, block + w->async_off[SONDE_ASYNC_TASK_CORO], 8);
        uint32_t n = chain_frames(w, coro, s->frames + depth, SONDE_WALK_MAX_DEPTH - depth, &cut);
        memset(s->entry + depth, 0, n);
        depth += n;
    }
    s->depth = depth;
    s->truncated = 0; /* the frames beyond the task (the event loop's) are left out */
}

int sonde_async_index(const sonde_async_graph *g, sonde_u64map *at)
{
    sonde_u64map_init(at);
    for (uint32_t k = 0; k < g->ntasks; k++) {
        uint32_t *slot = sonde_u64map_slot(at, g->tasks[k].addr, k);
        if (!slot) {
            sonde_u64map_free(at);
            return -1;
        }
    }
    return 0;
}

/* Task k's stack into s's frames from depth on: its coroutine chain, its "<task NAME>", then
 * the chain and name of the task awaiting it, and so on.  The depth reached. */
static uint32_t stack_from(sonde_walker *w, const sonde_async_graph *g, const sonde_u64map *at,
                           uint32_t k, sonde_thread_sample *s, uint32_t depth)
{
    for (uint32_t level = 0; level < ASYNC_AWAITERS_MAX && depth < SONDE_WALK_MAX_DEPTH; level++) {
        const sonde_async_task *t = &g->tasks[k];
        uint32_t n = t->nframes < SONDE_WALK_MAX_DEPTH - depth ? t->nframes
                                                                : SONDE_WALK_MAX_DEPTH - depth;
        memcpy(s->frames + depth, g->frames + t->first_frame, n * sizeof *s->frames);
        memset(s->entry + depth, 0, n);
        depth += n;
        uint32_t func = named_task_func(w, t->name);
        if (func == SONDE_NO_FUNC || depth == SONDE_WALK_MAX_DEPTH)
            break;
        s->entry[depth] = 0;
        s->frames[depth++] = (sonde_frame_sample){ .func = func, .line = 0 };
        uint32_t next = SONDE_U64MAP_NONE; /* the first awaiting object that is a task */
        for (uint32_t i = 0; i < t->nwaiters && next == SONDE_U64MAP_NONE; i++)
            next = sonde_u64map_get(at, g->waiters[t->first_waiter + i]);
        if (next == SONDE_U64MAP_NONE)
            break;
        k = next;
    }
    return depth;
}

void sonde_async_task_stack(sonde_walker *w, const sonde_async_graph *g, const sonde_u64map *at,
                            uint32_t k, sonde_thread_sample *s)
{
    s->depth = stack_from(w, g, at, k, s, 0);
    s->truncated = 0;
}

/* How long record --async uses one read of every task (up to 3.13): reading them all at each
 * sample costs a read or three a task, and a server keeps thousands. */
#define SETS_KEPT_NS 100000000ull

/* Every task into w->async_met, read now.  0, or -1 on out of memory (none kept). */
static int read_met(sonde_walker *w)
{
    if (!w->async_met && !(w->async_met = malloc(SONDE_ASYNC_MAX_TASKS * sizeof *w->async_met)))
        return -1;
    int cut = 0;
    w->async_nmet = sonde_async_sets_tasks(w, w->async_met, SONDE_ASYNC_MAX_TASKS, &cut);
    w->async_met_ns = sonde_clock_ns();
    return 0;
}

/* The task awaiting the task at addr among the tasks kept (waiting on it, or on a gather of
 * it), into *found (NULL when none is): 0; or -1 when the one found waits on something else
 * now (what was kept is out of date). */
static int set_awaiter(sonde_walker *w, uint64_t addr, const sonde_async_set_task **out)
{
    const sonde_async_set_task *met = w->async_met, *found = NULL;
    uint32_t n = w->async_nmet;
    for (uint32_t i = 0; i < n && !found; i++)
        if (met[i].fut_waiter == addr)
            found = &met[i];
    uint64_t children[64];
    for (uint32_t i = 0; i < n && !found; i++) {
        uint32_t k = sonde_async_sets_gathered(w, met[i].fut_waiter, children, 64);
        while (k-- > 0 && !found)
            if (children[k] == addr)
                found = &met[i];
    }
    uint64_t now = 0;
    *out = found;
    if (found && (sonde_proc_read(&w->proc, found->addr + sonde_async_sets_waiter_offset(w),
                                  &now, 8) < 0 || now != found->fut_waiter)) {
        *out = NULL;
        return -1;
    }
    return 0;
}

/* The task kept at addr, or NULL. */
static const sonde_async_set_task *kept_task(const sonde_walker *w, uint64_t addr)
{
    for (uint32_t i = 0; i < w->async_nmet; i++)
        if (w->async_met[i].addr == addr)
            return &w->async_met[i];
    return NULL;
}

/* record --async up to 3.13: s's running task (found by its coroutine's frame in the stack)
 * goes on through the tasks awaiting it.  Every task is read at most every SETS_KEPT_NS, and
 * again at once when the running task is not among those kept, or an awaiter kept waits on
 * something else now (a task that began awaiting since may be missed until the next read);
 * of the tasks' names and chains, only those on the way are read. */
static void reroot_from_sets(sonde_walker *w, sonde_thread_sample *s)
{
    int fresh = !w->async_met || sonde_clock_ns() - w->async_met_ns >= SETS_KEPT_NS;
    if (fresh && read_met(w) < 0)
        return;
    const sonde_async_set_task *t = kept_task(w, s->running_task);
    if (!t && !fresh) {
        fresh = 1;
        if (read_met(w) < 0)
            return;
        t = kept_task(w, s->running_task);
    }
    uint32_t depth = s->task_depth;
    for (uint32_t level = 0; t && level < ASYNC_AWAITERS_MAX; level++) {
        sonde_async_set_task task = *t; /* a read below may replace what is kept */
        if (level > 0) { /* an awaiting task: its chain */
            int cut = 0;
            uint32_t k = chain_frames(w, task.coro, s->frames + depth,
                                      SONDE_WALK_MAX_DEPTH - depth, &cut);
            memset(s->entry + depth, 0, k);
            depth += k;
        }
        char name[sizeof ((sonde_async_task *)0)->name];
        task_name(w, task.name, name, sizeof name);
        uint32_t func = named_task_func(w, name);
        if (func == SONDE_NO_FUNC || depth == SONDE_WALK_MAX_DEPTH)
            break;
        s->entry[depth] = 0;
        s->frames[depth++] = (sonde_frame_sample){ .func = func, .line = 0 };
        if (set_awaiter(w, task.addr, &t) < 0 && !fresh) {
            fresh = 1; /* what was kept is out of date: every task is read again */
            if (read_met(w) < 0 || set_awaiter(w, task.addr, &t) < 0)
                t = NULL;
        }
    }
    if (depth > s->task_depth) {
        s->depth = depth;
        s->truncated = 0; /* the frames beyond the task (the event loop's) are left out */
    }
}
