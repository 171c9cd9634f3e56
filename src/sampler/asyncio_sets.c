/* asyncio_sets.c - the asyncio tasks of Pythons up to 3.13, from the sets of asyncio.tasks;
 * see asyncio_sets.h. */
#include "asyncio_sets.h"

#include <stdlib.h>
#include <string.h>

#include "python/attr.h"

/* How each version lays out what is read here (Modules/_asynciomodule.c's TaskObj,
 * Include/cpython/genobject.h and the frame), measured on each. */
enum coro_frame {
    FRAME_STACKTOP = 1, /* gi_frame: a PyFrameObject *; its PyObject **f_stacktop above the
                           value stack while suspended (NULL while it runs): 3.8, 3.9 */
    FRAME_STACKDEPTH,   /* gi_frame as above; PyObject **f_valuestack and int f_stackdepth:
                           3.10 */
    IFRAME_STACKTOP,    /* the _PyInterpreterFrame inside the coroutine; its int stacktop
                           counts the slots of localsplus in use: 3.11-3.13 */
};

typedef struct sets_layout {
    uint64_t fut_waiter, coro, name;  /* in TaskObj */
    enum coro_frame kind;
    uint64_t gen_frame;     /* the frame pointer (FRAME_*) or the frame itself (IFRAME_*) */
    uint64_t gen_state;     /* IFRAME_*: int8_t gi_frame_state */
    uint8_t suspended;      /* ... its value (as a byte) while suspended in an await */
    uint64_t top;           /* f_stacktop, f_stackdepth or stacktop, in the frame */
    uint64_t valuestack;    /* FRAME_STACKDEPTH: f_valuestack */
    uint64_t globals;       /* f_globals, in the frame */
    const char *all_set;    /* the WeakSet of (scheduled) tasks in asyncio.tasks */
} sets_layout;

static const sets_layout sets_38 = { 104, 112, 120, FRAME_STACKTOP, 16, 0, 0, 72, 0, 48,
                                     "_all_tasks" };
static const sets_layout sets_39 = { 144, 152, 160, FRAME_STACKTOP, 16, 0, 0, 72, 0, 48,
                                     "_all_tasks" };
static const sets_layout sets_310 = { 152, 160, 168, FRAME_STACKDEPTH, 16, 0, 0, 80, 64, 48,
                                      "_all_tasks" };
/* gi_frame_state -1: FRAME_SUSPENDED (3.11, 3.12), FRAME_SUSPENDED_YIELD_FROM (3.13). */
static const sets_layout sets_311 = { 128, 136, 144, IFRAME_STACKTOP, 80, 75, 0xff, 64, 0, 8,
                                      "_all_tasks" };
static const sets_layout sets_312 = { 128, 136, 144, IFRAME_STACKTOP, 72, 67, 0xff, 64, 0, 24,
                                      "_scheduled_tasks" };
static const sets_layout sets_313 = { 112, 120, 128, IFRAME_STACKTOP, 72, 67, 0xff, 64, 0, 24,
                                      "_scheduled_tasks" };

#define TYPE_BASE 256         /* PyTypeObject *tp_base, on every version read here */
#define WEAKREF_OBJECT 16     /* PyObject *wr_object in PyWeakReference */
#define LIST_SIZE 16          /* Py_ssize_t ob_size in PyListObject ... */
#define LIST_ITEMS 24         /* ... and PyObject **ob_item */
#define MODULE_DICT 16        /* PyObject *md_dict in PyModuleObject */
#define SET_MASK 32           /* Py_ssize_t mask in PySetObject (entries - 1) ... */
#define SET_TABLE 40          /* ... and setentry *table, entries of {key, hash} */
#define BASES_MAX 8           /* tp_base links followed to find _asyncio.Task */
#define SET_SLOTS_MAX 32768   /* entries of a set's table read */
#define GATHERED_MAX 4096     /* children of one gather read */

static const sets_layout *sets_of(const sonde_walker *w)
{
    if (w->layout.major != 3)
        return NULL;
    switch (w->layout.minor) {
    case 8: return &sets_38;
    case 9: return &sets_39;
    case 10: return &sets_310;
    case 11: return &sets_311;
    case 12: return &sets_312;
    case 13: return &sets_313;
    }
    return NULL;
}

static int read_ptr(const sonde_walker *w, uint64_t addr, uint64_t *out)
{
    return sonde_proc_read(&w->proc, addr, out, sizeof *out);
}

static int proc_reader(void *ctx, uint64_t addr, void *buf, size_t len)
{
    return sonde_proc_read(&((sonde_walker *)ctx)->proc, addr, buf, len);
}

int sonde_async_sets_kept(const sonde_walker *w)
{
    return sets_of(w) != NULL;
}

uint64_t sonde_async_sets_waiter_offset(const sonde_walker *w)
{
    const sets_layout *s = sets_of(w);
    return s ? s->fut_waiter : 0;
}

/* What a type is here, kept per type in walker.async_set_types. */
enum set_type { TASK = 1, GATHERING, OTHER };

/* The kind of the object at obj: a Task (_asyncio.Task or a class made from it), a gather's
 * future, or other (also when unreadable). */
static enum set_type kind_of(sonde_walker *w, uint64_t obj)
{
    uint64_t type, at;
    if (!obj || read_ptr(w, obj + w->layout.ob_type, &type) < 0 || !type)
        return OTHER;
    uint32_t known = sonde_u64map_get(&w->async_set_types, type);
    if (known != SONDE_U64MAP_NONE)
        return (enum set_type)known;
    enum set_type kind = OTHER;
    uint64_t t = type;
    for (int level = 0; level < BASES_MAX && t && kind == OTHER; level++) {
        char name[24] = "";
        if (read_ptr(w, t + w->layout.type_name, &at) < 0 ||
            sonde_proc_read(&w->proc, at, name, sizeof name - 1) < 0)
            return OTHER; /* unreadable: not kept */
        if (strcmp(name, "_asyncio.Task") == 0)
            kind = TASK;
        else if (level == 0 && strcmp(name, "_GatheringFuture") == 0)
            kind = GATHERING;
        else if (read_ptr(w, t + TYPE_BASE, &t) < 0)
            return OTHER;
    }
    if (w->async_set_types.count < 4096)
        (void)sonde_u64map_slot(&w->async_set_types, type, kind); /* else: not kept */
    return kind;
}

int sonde_async_sets_find(sonde_walker *w, uint64_t loop_frame)
{
    const sets_layout *s = sets_of(w);
    const sonde_py_layout *l = &w->layout;
    uint64_t frame = loop_frame, globals, module, dict, all;
    if (!s || !loop_frame || read_ptr(w, frame + s->globals, &globals) < 0 ||
        sonde_py_dict_get(l, proc_reader, w, globals, "tasks", &module) < 0 ||
        read_ptr(w, module + MODULE_DICT, &dict) < 0 ||
        sonde_py_dict_get(l, proc_reader, w, dict, s->all_set, &all) < 0 ||
        sonde_py_attr(l, proc_reader, w, all, "data", &w->async_sets[0]) < 0 ||
        sonde_py_dict_get(l, proc_reader, w, dict, "_current_tasks", &w->async_sets[2]) < 0)
        return -1;
    if (sonde_py_dict_get(l, proc_reader, w, dict, "_eager_tasks", &w->async_sets[1]) < 0)
        w->async_sets[1] = 0; /* before 3.12 */
    w->async_found = 1;
    return 0;
}

uint64_t sonde_async_sets_loop(const sonde_walker *w, uint64_t loop_frame)
{
    uint64_t loop;
    return loop_frame && read_ptr(w, loop_frame + w->layout.frame_localsplus, &loop) == 0 ? loop
                                                                                         : 0;
}

/* The frame of coroutine coro as a thread's stack holds it, or 0. */
static uint64_t frame_of(const sonde_walker *w, const sets_layout *s, uint64_t coro)
{
    uint64_t frame = 0;
    if (s->kind == IFRAME_STACKTOP)
        return coro + s->gen_frame;
    return read_ptr(w, coro + s->gen_frame, &frame) < 0 ? 0 : frame;
}

void sonde_async_sets_current(sonde_walker *w)
{
    const sets_layout *s = sets_of(w);
    uint64_t loops[SONDE_ASYNC_CURRENT_MAX], tasks[SONDE_ASYNC_CURRENT_MAX];
    w->async_ncurrent = 0;
    if (!s || !w->async_found)
        return;
    uint32_t n = sonde_py_dict_items(&w->layout, proc_reader, w, w->async_sets[2], loops, tasks,
                                     SONDE_ASYNC_CURRENT_MAX);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t coro;
        if (read_ptr(w, tasks[i] + s->coro, &coro) < 0 || !coro)
            continue;
        w->async_current[w->async_ncurrent].task = tasks[i];
        w->async_current[w->async_ncurrent].frame = frame_of(w, s, coro);
        w->async_ncurrent += w->async_current[w->async_ncurrent].frame != 0;
    }
}

/* The keys of the set object at set into out (room for max): how many; *cut when it could
 * not be read whole. */
static uint32_t set_keys(sonde_walker *w, uint64_t set, uint64_t *out, uint32_t max, int *cut)
{
    uint64_t table, mask;
    if (!set)
        return 0;
    if (read_ptr(w, set + SET_TABLE, &table) < 0 || read_ptr(w, set + SET_MASK, &mask) < 0 ||
        mask >= SET_SLOTS_MAX) {
        *cut = 1;
        return 0;
    }
    uint64_t *entries = malloc((mask + 1) * 16); /* {key, hash} each */
    uint32_t n = 0;
    if (!entries || sonde_proc_read(&w->proc, table, entries, (mask + 1) * 16) < 0) {
        free(entries);
        *cut = 1;
        return 0;
    }
    for (uint64_t i = 0; i <= mask; i++) {
        if (!entries[2 * i])
            continue;
        if (n == max) {
            *cut = 1;
            break;
        }
        out[n++] = entries[2 * i]; /* a deleted entry's dummy is not a task: left out later */
    }
    free(entries);
    return n;
}

/* The task at addr into t, when it is one.  1, or 0. */
static int read_task(sonde_walker *w, const sets_layout *s, uint64_t addr, sonde_async_set_task *t)
{
    uint8_t block[256];
    uint64_t size = s->name + 8;
    if (kind_of(w, addr) != TASK || size > sizeof block ||
        sonde_proc_read(&w->proc, addr, block, size) < 0)
        return 0;
    t->addr = addr;
    memcpy(&t->loop, block + 16, 8); /* fut_loop, the first field after the header */
    memcpy(&t->fut_waiter, block + s->fut_waiter, 8);
    memcpy(&t->coro, block + s->coro, 8);
    memcpy(&t->name, block + s->name, 8);
    return 1;
}

uint32_t sonde_async_sets_tasks(sonde_walker *w, sonde_async_set_task *out, uint32_t max,
                                int *cut)
{
    const sets_layout *s = sets_of(w);
    if (!s || !w->async_found || !max)
        return 0;
    uint64_t *keys = malloc((size_t)max * sizeof *keys);
    if (!keys) {
        *cut = 1;
        return 0;
    }
    uint32_t n = 0;
    /* The WeakSet's data holds weak references to its tasks; the eager set holds tasks. */
    uint32_t nrefs = set_keys(w, w->async_sets[0], keys, max, cut);
    for (uint32_t i = 0; i < nrefs && n < max; i++) {
        uint64_t task;
        if (read_ptr(w, keys[i] + WEAKREF_OBJECT, &task) == 0)
            n += read_task(w, s, task, &out[n]);
    }
    uint32_t neager = set_keys(w, w->async_sets[1], keys, max - n, cut);
    for (uint32_t i = 0; i < neager && n < max; i++)
        n += read_task(w, s, keys[i], &out[n]);
    free(keys);
    return n;
}

uint32_t sonde_async_sets_gathered(sonde_walker *w, uint64_t fut, uint64_t *out, uint32_t max)
{
    uint64_t list, size, items;
    if (kind_of(w, fut) != GATHERING ||
        sonde_py_attr(&w->layout, proc_reader, w, fut, "_children", &list) < 0 ||
        read_ptr(w, list + LIST_SIZE, &size) < 0 || read_ptr(w, list + LIST_ITEMS, &items) < 0 ||
        size > GATHERED_MAX)
        return 0;
    uint32_t n = size < max ? (uint32_t)size : max;
    return n && sonde_proc_read(&w->proc, items, out, n * sizeof *out) < 0 ? 0 : n;
}

int sonde_async_sets_coro(sonde_walker *w, uint64_t coro, uint64_t *code, uint64_t *instr,
                          uint64_t *awaited)
{
    const sets_layout *s = sets_of(w);
    const sonde_py_layout *l = &w->layout;
    uint64_t frame = s ? frame_of(w, s, coro) : 0, top = 0;
    uint8_t block[512];
    *awaited = *instr = 0;
    if (!frame)
        return -1;
    uint64_t span = l->frame_localsplus > s->top + 8 ? l->frame_localsplus : s->top + 8;
    if (span > sizeof block || l->frame_code + 8 > span ||
        l->frame_instr + l->frame_instr_size > span || sonde_proc_read(&w->proc, frame, block,
                                                                        span) < 0)
        return -1;
    memcpy(code, block + l->frame_code, 8);
    memcpy(instr, block + l->frame_instr, l->frame_instr_size <= 8 ? l->frame_instr_size : 8);
    if (s->kind == FRAME_STACKTOP) {
        memcpy(&top, block + s->top, 8); /* NULL while it runs */
    } else if (s->kind == FRAME_STACKDEPTH) {
        int32_t depth;
        memcpy(&depth, block + s->top, 4);
        memcpy(&top, block + s->valuestack, 8);
        top = depth > 0 && depth < 4096 && top ? top + 8 * (uint64_t)depth : 0;
    } else {
        int32_t used;
        uint8_t state;
        memcpy(&used, block + s->top, 4);
        if (sonde_proc_read(&w->proc, coro + s->gen_state, &state, 1) < 0)
            return 0;
        top = state == s->suspended && used > 0 && used < 1 << 20
                  ? frame + l->frame_localsplus + 8 * (uint64_t)used
                  : 0;
    }
    if (top > 8 && read_ptr(w, top - 8, awaited) < 0)
        *awaited = 0;
    return 0;
}
