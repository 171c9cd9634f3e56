/* walker.c - thread states, frames and code objects of another process;
 * see walker.h. */
#include "walker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/grow.h"
#include "asyncio_sets.h"
#include "python/attr.h"
#include "python/linetable.h"
#include "python/unicode.h"

_Static_assert(SONDE_WALK_MAX_DEPTH <= SONDE_PROC_SCATTER_MAX,
               "a stack's code objects are read in one scatter read");

#define MAX_LINETABLE (1u << 20)   /* bytes of a line table we are willing to read */
#define HEADER_MAX 512             /* bytes read at a thread state, frame or code object */
#define CHUNK_MAX (256u << 10)     /* bytes of a stack chunk copied at once */
#define OUTSIDE_MAX 128            /* frames outside the chunk remembered per thread */
#define OUTSIDE_SLOTS 64           /* threads remembered, by their state's address hashed */

_Static_assert(OUTSIDE_MAX + 2 <= SONDE_PROC_SCATTER_MAX, "a stack's first reads are one read");

/* The frames one walk of a thread read outside its chunk, by address, in
 * the order the walk met them. */
struct sonde_outside_frames {
    uint64_t tstate;   /* the thread's state; 0: a free slot */
    uint32_t n;
    uint64_t addr[OUTSIDE_MAX];
};

/* A resolved code object.  Its address alone does not identify it: a code
 * object can be freed and another created at the same place, so each use
 * checks the fingerprint (the pointers to its file name, name and line
 * table, and its first line) against what the frame's code object holds
 * now. */
struct sonde_code_info {
    uint64_t filename, name, linetable_obj;
    int32_t firstlineno;
    uint32_t func;
    uint8_t *linetable;
    uint32_t linetable_len;
    int runs_loop;   /* asyncio's BaseEventLoop.run_forever (asyncio_sets.h) */
};

static int read_ptr(const sonde_walker *w, uint64_t addr, uint64_t *out)
{
    return sonde_proc_read(&w->proc, addr, out, sizeof *out);
}

static uint64_t field_u64(const uint8_t *block, uint64_t off)
{
    uint64_t v;
    memcpy(&v, block + off, sizeof v);
    return v;
}

/* The end of the furthest of these offsets (each naming an 8-byte field),
 * ignoring absent ones: how much of a struct one read must cover (0 when
 * more than max). */
static size_t span_within(const uint64_t *offs, size_t n, uint64_t max)
{
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++)
        if (offs[i] != SONDE_PY_ABSENT && offs[i] + 8 > end)
            end = offs[i] + 8;
    return end <= max ? (size_t)end : 0;
}

static size_t span(const uint64_t *offs, size_t n)
{
    return span_within(offs, n, HEADER_MAX);
}

static int proc_reader(void *ctx, uint64_t addr, void *buf, size_t len)
{
    return sonde_proc_read(&((const sonde_walker *)ctx)->proc, addr, buf, len);
}

/* Reads a remote str into out (UTF-8, NUL-terminated). */
static int read_str(const sonde_walker *w, uint64_t addr, char *out, size_t outsize)
{
    return sonde_py_read_str(&w->layout, proc_reader, (void *)w, addr, out, outsize);
}

/* Reads a remote bytes object's contents (at most MAX_LINETABLE bytes). */
static int read_bytes(const sonde_walker *w, uint64_t addr, uint8_t **out, uint32_t *len)
{
    uint64_t size;
    if (sonde_proc_read(&w->proc, addr + w->layout.bytes_size, &size, sizeof size) < 0 ||
        size > MAX_LINETABLE)
        return -1;
    uint8_t *data = malloc(size ? size : 1);
    if (!data || (size && sonde_proc_read(&w->proc, addr + w->layout.bytes_sval, data, size) < 0)) {
        free(data);
        return -1;
    }
    *out = data;
    *len = (uint32_t)size;
    return 0;
}

/* Bytes of a code object to read for resolve_code. */
static size_t code_span(const sonde_py_layout *l)
{
    const uint64_t offs[] = { l->code_filename, l->code_name, l->code_qualname,
                              l->code_firstlineno, l->code_flags, l->code_linetable };
    return span(offs, sizeof offs / sizeof offs[0]);
}

/* co_flags of a generator's, a coroutine's or an async generator's code. */
#define GENERATOR_CODE_FLAGS (0x20 | 0x80 | 0x200)

/* Whether the outermost frame read, at frame block `block` with its code
 * at `code_block`, is a generator's or coroutine's: 3.11+ by the frame's
 * owner, <= 3.10 by its code's flags. */
static int generator_frame(const sonde_py_layout *l, const uint8_t *block,
                           const uint8_t *code_block)
{
    if (l->frame_owner_generator != SONDE_PY_ABSENT)
        return block[l->frame_owner] == l->frame_owner_generator;
    int32_t flags = 0;
    if (l->code_flags != SONDE_PY_ABSENT)
        memcpy(&flags, code_block + l->code_flags, sizeof flags);
    return (flags & GENERATOR_CODE_FLAGS) != 0;
}

static int same_code(const sonde_py_layout *l, const sonde_code_info *c, const uint8_t *block)
{
    int32_t firstlineno;
    memcpy(&firstlineno, block + l->code_firstlineno, sizeof firstlineno);
    return c->filename == field_u64(block, l->code_filename) &&
           c->name == field_u64(block, l->code_name) &&
           c->linetable_obj == field_u64(block, l->code_linetable) &&
           c->firstlineno == firstlineno;
}

/* The codes[] index of the code object at addr, whose first code_span()
 * bytes are in block: the cached one while its fingerprint still matches,
 * else resolved anew.  -1 when it cannot be read. */
static int64_t resolve_code(sonde_walker *w, uint64_t addr, const uint8_t *block)
{
    const sonde_py_layout *l = &w->layout;
    uint32_t known = sonde_u64map_get(&w->code_index, addr);
    if (known != SONDE_U64MAP_NONE && same_code(l, &w->codes[known], block))
        return known;
    if (read_str(w, field_u64(block, l->code_filename), w->code_file, sizeof w->code_file) < 0 ||
        read_str(w, field_u64(block, l->code_name), w->code_name, sizeof w->code_name) < 0)
        return -1;
    if (l->code_qualname == SONDE_PY_ABSENT ||
        read_str(w, field_u64(block, l->code_qualname), w->code_qualname,
                 sizeof w->code_qualname) < 0)
        snprintf(w->code_qualname, sizeof w->code_qualname, "%s", w->code_name);
    int32_t firstlineno;
    memcpy(&firstlineno, block + l->code_firstlineno, sizeof firstlineno);
    sonde_code_info info = {
        .filename = field_u64(block, l->code_filename),
        .name = field_u64(block, l->code_name),
        .linetable_obj = field_u64(block, l->code_linetable),
        .firstlineno = firstlineno,
    };
    if (read_bytes(w, info.linetable_obj, &info.linetable, &info.linetable_len) < 0)
        info.linetable = NULL;
    info.func = sonde_profile_func(w->profile, w->code_file, firstlineno, w->code_name,
                                   w->code_qualname, SONDE_FUNC_PYTHON);
    if (!w->async_found && strstr(w->code_file, "/asyncio/"))
        w->async_hint = 1; /* asyncio's own code runs: its module may be loaded now */
    size_t flen = strlen(w->code_file);
    info.runs_loop = strcmp(w->code_name, "run_forever") == 0 && flen >= 23 &&
                     strcmp(w->code_file + flen - 23, "/asyncio/base_events.py") == 0;
    if (info.func == SONDE_NO_FUNC)
        goto fail;
    sonde_code_info *codes = sonde_grow(w->codes, &w->codes_cap, (size_t)w->ncodes + 1,
                                        sizeof *codes, UINT32_MAX);
    if (!codes)
        goto fail;
    w->codes = codes;
    uint32_t *slot = sonde_u64map_slot(&w->code_index, addr, w->ncodes);
    if (!slot)
        goto fail;
    if (known != SONDE_U64MAP_NONE) {
        /* Another code object now lives where a freed one did: it takes a
         * new index, so that lines cached under the old one are never its. */
        free(w->codes[known].linetable);
        w->codes[known].linetable = NULL;
        *slot = w->ncodes;
    }
    w->codes[w->ncodes] = info;
    return w->ncodes++;
fail:
    free(info.linetable);
    return -1;
}

/* Lines kept in walker.lines before it is emptied and starts again: a
 * bound on its memory (16 bytes a line) however much code runs. */
#define LINES_CACHED_MAX (1u << 20)

/* The line of the instruction raw_instr points at (or counts, <= 3.10) in
 * codes[c], the code object at address code: from the line cache, else
 * decoded from its line table and kept.  Its first line when the table
 * does not say. */
static int32_t line_of(sonde_walker *w, uint32_t c, uint64_t code, uint64_t raw_instr)
{
    const sonde_code_info *info = &w->codes[c];
    uint32_t index;
    int line;
    if (!info->linetable || sonde_py_instr_index(&w->layout, raw_instr, code, &index) < 0)
        return info->firstlineno;
    uint64_t key = (uint64_t)c << 32 | index;
    uint32_t cached = sonde_u64map_get(&w->lines, key);
    if (cached != SONDE_U64MAP_NONE)
        return (int32_t)cached;
    if (sonde_py_line_for((enum sonde_py_line_format)w->layout.code_line_format, info->linetable,
                          info->linetable_len, info->firstlineno, index, &line) < 0)
        return info->firstlineno;
    if (w->lines.count >= LINES_CACHED_MAX) {
        sonde_u64map_free(&w->lines);
        sonde_u64map_free(&w->async_types);
        sonde_u64map_free(&w->async_set_types);
        sonde_u64map_init(&w->lines);
        sonde_u64map_init(&w->async_types);
        sonde_u64map_init(&w->async_set_types);
    }
    if ((uint32_t)line != SONDE_U64MAP_NONE)
        (void)sonde_u64map_slot(&w->lines, key, (uint32_t)line); /* out of memory: not kept */
    return line;
}

int sonde_walker_name_frame(sonde_walker *w, uint64_t code, uint64_t raw_instr,
                            sonde_frame_sample *out)
{
    size_t ncode = code_span(&w->layout);
    if (ncode == 0 || ncode > HEADER_MAX ||
        sonde_proc_read(&w->proc, code, w->code_blocks, ncode) < 0)
        return -1;
    int64_t c = resolve_code(w, code, w->code_blocks);
    if (c < 0)
        return -1;
    out->func = w->codes[c].func;
    out->line = line_of(w, (uint32_t)c, code, raw_instr);
    return 0;
}

/* Bytes of a frame the walk reads. */
static size_t frame_span(const sonde_py_layout *l)
{
    const uint64_t offs[] = { l->frame_previous, l->frame_code, l->frame_instr, l->frame_owner,
                              l->frame_is_entry };
    return span(offs, sizeof offs / sizeof offs[0]);
}

/* What a thread's walk starts from: the used part of its newest
 * data-stack chunk copied into w->chunk_buf (len 0 when there is none:
 * before 3.11, or unreadable), the frames its last walk read outside the
 * chunk read again into w->outside_blocks (outside->addr[0 .. nread)),
 * and the frames this walk reads outside the chunk (seen). */
typedef struct stack_copy {
    uint64_t base, len;
    const sonde_outside_frames *outside;
    uint32_t nread, next;   /* next: where the next look in outside starts */
    uint32_t nseen;
    uint64_t seen[OUTSIDE_MAX];
    int gc_read;            /* the collector's flag was read with the stack ... */
    int32_t collecting;     /* ... and said this */
} stack_copy;

static sonde_outside_frames *outside_slot(sonde_walker *w, uint64_t tstate)
{
    return &w->outside[(tstate * 0x9e3779b97f4a7c15ull) >> 58];
}

_Static_assert(OUTSIDE_SLOTS == 64, "outside_slot keeps 6 bits of the hash");

/* Reads in one scatter read what the walk of the thread whose state is
 * ts (its block) needs first: its first frame's address through the
 * cframe (3.11), its chunk, and the frames its last walk read outside
 * the chunk; into *frame its first frame.  With gc_flag (its address, or
 * 0), the collector's flag too, in the same read as the stack's chunk
 * (3.11+; before, the frames are read one by one after it): the Python
 * stack is the same just before, during and after a collection, and a
 * flag read apart from it (at the interpreter's read, a while before on a
 * busy machine) would be right about another moment.  0, or -1 when the
 * first frame cannot be read. */
static int read_stack(sonde_walker *w, uint64_t tstate, const uint8_t *ts, uint64_t gc_flag,
                      stack_copy *c, uint64_t *frame)
{
    const sonde_py_layout *l = &w->layout;
    sonde_proc_range r[3 + OUTSIDE_MAX];
    uint32_t n = 0, chunk_at = UINT32_MAX, frame_at = UINT32_MAX, flag_at = UINT32_MAX;
    c->base = c->len = 0;
    c->outside = NULL;
    c->nread = c->next = c->nseen = 0;
    c->gc_read = 0;
    uint64_t link = field_u64(ts, l->ts_frame), chunk = 0, top = 0;
    int cframe = l->ts_frame_link == SONDE_PY_LINK_CFRAME;
    *frame = cframe ? 0 : link;
    if (cframe && link) {
        frame_at = n;
        r[n++] = (sonde_proc_range){ link + l->cframe_current_frame, frame, sizeof *frame };
    }
    if (l->ts_datastack_chunk != SONDE_PY_ABSENT && l->ts_datastack_top != SONDE_PY_ABSENT) {
        chunk = field_u64(ts, l->ts_datastack_chunk);
        top = field_u64(ts, l->ts_datastack_top);
    }
    if (chunk && top > chunk && top - chunk <= CHUNK_MAX) {
        chunk_at = n;
        r[n++] = (sonde_proc_range){ chunk, w->chunk_buf, top - chunk };
    }
    /* after what the stack needs (a read stops at the first range that
     * fails), before the frames read ahead, which may have gone */
    if (gc_flag) {
        flag_at = n;
        r[n++] = (sonde_proc_range){ gc_flag, &c->collecting, sizeof c->collecting };
    }
    const sonde_outside_frames *o = outside_slot(w, tstate);
    size_t fn = frame_span(l);
    uint32_t first_outside = n;
    if (o->tstate == tstate && fn)
        for (uint32_t i = 0; i < o->n; i++)
            r[n++] = (sonde_proc_range){ o->addr[i], w->outside_blocks + (size_t)i * fn, fn };
    int got = n ? sonde_proc_read_ranges(&w->proc, r, n) : 0;
    if (got < 0)
        got = 0;
    c->gc_read = flag_at != UINT32_MAX && (uint32_t)got > flag_at;
    if (frame_at != UINT32_MAX && (uint32_t)got <= frame_at)
        return -1;
    if ((uint32_t)got > chunk_at) {
        c->base = chunk;
        c->len = top - chunk;
    }
    if ((uint32_t)got > first_outside) {
        c->outside = o;
        c->nread = (uint32_t)got - first_outside;
    }
    return 0;
}

/* Keeps the frames this walk of the thread at tstate read outside its
 * chunk, for its next walk to read with the chunk. */
static void remember_outside(sonde_walker *w, uint64_t tstate, const stack_copy *c)
{
    sonde_outside_frames *o = outside_slot(w, tstate);
    o->tstate = tstate;
    o->n = c->nseen;
    memcpy(o->addr, c->seen, c->nseen * sizeof c->seen[0]);
}

/* n (frame_span) bytes of the frame at addr: from the chunk copy when
 * inside it, else from the frames read ahead, else read now. */
static int read_frame(sonde_walker *w, stack_copy *c, uint64_t addr, uint8_t *block, size_t n)
{
    if (addr >= c->base && addr - c->base <= c->len && c->len - (addr - c->base) >= n) {
        memcpy(block, w->chunk_buf + (addr - c->base), n);
        return 0;
    }
    if (c->nseen < OUTSIDE_MAX)
        c->seen[c->nseen++] = addr;
    for (uint32_t k = 0; k < c->nread; k++) {
        uint32_t i = (c->next + k) % c->nread; /* walks meet them in the same order */
        if (c->outside->addr[i] == addr) {
            memcpy(block, w->outside_blocks + (size_t)i * n, n);
            c->next = i + 1;
            return 0;
        }
    }
    return sonde_proc_read(&w->proc, addr, block, n);
}

/* Slots of distinct_codes' table: a power of two, at least twice
 * SONDE_WALK_MAX_DEPTH, so that it is never more than half full. */
#define DISTINCT_SLOTS (2 * SONDE_WALK_MAX_DEPTH)

/* The n code addresses of a stack without repeats, in the order first
 * met, into distinct; which[i] is codes[i]'s place there.  Returns how
 * many are distinct.  (A recursive function is read once a sample.) */
static uint32_t distinct_codes(const uint64_t *codes, uint32_t n, uint64_t *distinct,
                               uint32_t *which)
{
    uint16_t slot[DISTINCT_SLOTS]; /* place in distinct + 1; 0: empty */
    memset(slot, 0, sizeof slot);
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)((codes[i] >> 4) * 0x9E3779B97F4A7C15ull >> 40) % DISTINCT_SLOTS;
        while (slot[h] && distinct[slot[h] - 1] != codes[i])
            h = (h + 1) % DISTINCT_SLOTS;
        if (!slot[h]) {
            distinct[count] = codes[i];
            slot[h] = (uint16_t)++count;
        }
        which[i] = slot[h] - 1u;
    }
    return count;
}

/* Frames read per stack, shim frames included, before the chain is taken
 * for a cycle: 3.12+ push at most one shim per Python frame. */
#define MAX_VISITED (2 * SONDE_WALK_MAX_DEPTH + 2)

/* Up to 3.13, record --async: when frame is the coroutine frame of a task an event loop runs
 * (walker.async_current), s runs that task, and its innermost depth frames are the task's. */
static void match_current(sonde_walker *w, uint64_t frame, uint32_t depth, sonde_thread_sample *s)
{
    for (uint32_t k = 0; k < w->async_ncurrent && !s->task_depth; k++)
        if (frame == w->async_current[k].frame) {
            s->running_task = w->async_current[k].task;
            s->task_depth = depth;
        }
}

/* Follows the frame chain from frame into s, innermost first, up to
 * SONDE_WALK_MAX_DEPTH Python frames (s->truncated when one more lies
 * beyond), then resolves every frame's code object from one scatter read.
 * A chain that loops (only a torn read makes one) is found by Brent's
 * method: the frame at each power-of-two step is kept, and meeting it
 * again is a loop.  A chain that ends at a generator's frame is torn too:
 * a running generator's frame links to what resumed it, and the link is
 * cleared when it yields, so the walk read it after the yield.  0, or -1
 * when torn. */
static int walk_frames(sonde_walker *w, stack_copy *chunk, uint64_t frame,
                       uint64_t task_frame, sonde_thread_sample *s)
{
    const sonde_py_layout *l = &w->layout;
    size_t n = frame_span(l), ncode = code_span(l);
    uint64_t codes[SONDE_WALK_MAX_DEPTH], raws[SONDE_WALK_MAX_DEPTH], addrs[SONDE_WALK_MAX_DEPTH],
        outer = 0;
    uint8_t block[HEADER_MAX], outer_block[HEADER_MAX];
    uint32_t depth = 0, power = 1, steps = 0;
    uint64_t kept = 0; /* Brent's: the frame a loop would come back to */
    if (n == 0 || ncode == 0)
        return -1;
    for (uint32_t visited = 0; frame; visited++) {
        if (frame == kept || visited == MAX_VISITED || read_frame(w, chunk, frame, block, n) < 0)
            return -1;
        if (++steps == power) {
            kept = frame;
            power *= 2;
            steps = 0;
        }
        uint64_t previous = field_u64(block, l->frame_previous);
        uint64_t code = field_u64(block, l->frame_code) & ~l->frame_code_tag_bits;
        if (!code)
            return -1; /* a frame being set up */
        int shim = l->frame_owner != SONDE_PY_ABSENT && l->frame_owner_cstack != SONDE_PY_ABSENT &&
                   block[l->frame_owner] >= l->frame_owner_cstack;
        if (!shim && depth == SONDE_WALK_MAX_DEPTH) {
            s->truncated = 1; /* a Python frame beyond the cap: stop here */
            outer = 0;
            break;
        }
        if (shim && depth > 0)
            s->entry[depth - 1] = 1; /* 3.12+: the frame just inside a shim starts its eval call */
        if (!shim) {
            outer = frame;
            memcpy(outer_block, block, n);
            /* <= 3.10 every frame is its own eval call; 3.11 marks the first (is_entry). */
            s->entry[depth] = l->frame_is_entry != SONDE_PY_ABSENT ? block[l->frame_is_entry] != 0
                              : l->frame_owner_cstack == SONDE_PY_ABSENT;
            codes[depth] = code;
            addrs[depth] = frame;
            raws[depth] = 0;
            memcpy(&raws[depth], block + l->frame_instr,
                   l->frame_instr_size <= 8 ? l->frame_instr_size : 8);
            depth++;
            if (frame == task_frame)
                s->task_depth = depth;
            else if (w->async_ncurrent)
                match_current(w, frame, depth, s);
        }
        frame = previous;
    }
    s->outer_frame = outer;
    if (depth > 0 && !s->truncated)
        s->entry[depth - 1] = 1; /* the outermost frame starts the outermost eval call */
    if (depth == 0)
        return 0;
    /* Each code object once, however often it recurs on the stack. */
    uint64_t distinct[SONDE_WALK_MAX_DEPTH];
    uint32_t which[SONDE_WALK_MAX_DEPTH], ndistinct = distinct_codes(codes, depth, distinct, which);
    if (sonde_proc_read_many(&w->proc, distinct, ndistinct, ncode, w->code_blocks) !=
        (int)ndistinct)
        return -1;
    if (outer &&
        generator_frame(l, outer_block, w->code_blocks + (size_t)which[depth - 1] * ncode))
        return -1;
    uint32_t resolved[SONDE_WALK_MAX_DEPTH];
    for (uint32_t u = 0; u < ndistinct; u++) {
        int64_t c = resolve_code(w, distinct[u], w->code_blocks + (size_t)u * ncode);
        if (c < 0)
            return -1;
        resolved[u] = (uint32_t)c;
    }
    for (uint32_t i = 0; i < depth; i++) {
        uint32_t c = resolved[which[i]];
        sonde_frame_sample *f = &s->frames[s->depth++];
        f->func = w->codes[c].func;
        f->line = line_of(w, c, codes[i], raws[i]);
        if (w->codes[c].runs_loop && !s->loop_frame)
            s->loop_frame = addrs[i];
    }
    /* Up to 3.13: the first event loop met tells where the tasks are; and a loop that started a
     * task after the running ones were read (before this snapshot) runs it in this stack. */
    if (s->loop_frame && w->async_wanted && !l->task_lists && !s->task_depth &&
        (w->async_found || sonde_async_sets_find(w, s->loop_frame) == 0)) {
        sonde_async_sets_current(w);
        for (uint32_t i = 0; i < depth && !s->task_depth; i++)
            match_current(w, addrs[i], i + 1, s);
    }
    return 0;
}

/* What the walk of one interpreter's threads needs of it: the thread
 * state holding its GIL at this snapshot (0: none, or unknown), and where
 * its collector's flag is (0: the layout has none), read with the
 * holder's stack (collection runs on the thread holding the GIL). */
typedef struct interp_now {
    uint64_t holder;
    uint64_t gc_flag;
} interp_now;

/* Where interpreter interp's collector flag is (3.8 has one for the
 * process, in _PyRuntime), or 0 where the layout has none. */
static uint64_t gc_flag_at(const sonde_walker *w, uint64_t interp)
{
    const sonde_py_layout *l = &w->layout;
    if (l->interp_gc_collecting != SONDE_PY_ABSENT)
        return interp + l->interp_gc_collecting;
    if (l->rt_gc_collecting != SONDE_PY_ABSENT)
        return w->runtime.addr + l->rt_gc_collecting;
    return 0;
}

/* The thread state holding interpreter interp's GIL, or 0; the GIL
 * struct's address into *gil_at (3.12+, where each interpreter names its
 * own). */
static uint64_t gil_holder(sonde_walker *w, uint64_t interp, uint64_t *gil_at)
{
    const sonde_py_layout *l = &w->layout;
    uint64_t holder = 0;
    if (l->rt_gilstate_tstate_current != SONDE_PY_ABSENT) {
        if (read_ptr(w, w->runtime.addr + l->rt_gilstate_tstate_current, &holder) < 0)
            return 0;
        return holder;
    }
    uint64_t gil;
    int32_t locked;
    *gil_at = 0;
    if (l->interp_ceval_gil == SONDE_PY_ABSENT || read_ptr(w, interp + l->interp_ceval_gil, &gil) < 0)
        return 0;
    *gil_at = gil;
    if (!gil || sonde_proc_read(&w->proc, gil + l->gil_locked, &locked, sizeof locked) < 0 ||
        locked <= 0 || read_ptr(w, gil + l->gil_last_holder, &holder) < 0)
        return 0;
    return holder;
}

static interp_now interp_state_now(sonde_walker *w, uint64_t interp, uint64_t *gil_at)
{
    return (interp_now){ gil_holder(w, interp, gil_at), gc_flag_at(w, interp) };
}

/* <= 3.10 keep only pthread_self(): the TID lies inside glibc's struct
 * pthread.  Finds where, from the main thread, whose TID is the pid. */
static void find_pthread_tid_offset(sonde_walker *w, const uint64_t *pthreads, uint32_t n)
{
    for (uint32_t i = 0; i < n && w->pthread_tid_offset < 0; i++) {
        int32_t words[512];
        if (sonde_proc_read(&w->proc, pthreads[i], words, sizeof words) < 0)
            continue;
        for (uint32_t k = 0; k < 512; k++)
            if (words[k] == w->proc.pid) {
                w->pthread_tid_offset = (int64_t)k * 4;
                break;
            }
    }
}

/* Whether a thread state's read holds the task it runs (3.14+, once the _asyncio module's
 * offsets are known: record --async). */
static int reads_running_task(const sonde_walker *w)
{
    return w->async_found && w->layout.task_lists &&
           w->async_off[SONDE_ASYNC_THREAD_TASK] + 8 <= SONDE_WALK_STATE_MAX;
}

/* How much of a thread state the walker reads. */
static size_t tstate_span(const sonde_walker *w)
{
    const sonde_py_layout *l = &w->layout;
    const uint64_t offs[] = { l->ts_next, l->ts_frame, l->ts_thread_id, l->ts_native_thread_id,
                              l->ts_datastack_chunk, l->ts_datastack_top, l->ts_exc_info,
                              reads_running_task(w) ? w->async_off[SONDE_ASYNC_THREAD_TASK]
                                                    : SONDE_PY_ABSENT };
    return span_within(offs, sizeof offs / sizeof offs[0], SONDE_WALK_STATE_MAX);
}

/* threads_head in one scatter read, from where the last snapshot found
 * the interpreter (w->interp), its GIL (w->gil) and its first thread
 * state (w->head), whose block it reads into w->head_state too, and the
 * interpreter after it (w->head_next).  0, or -1 when one of them has
 * moved (or a read failed): nothing is kept. */
static int threads_head_again(sonde_walker *w, uint64_t *ts, interp_now *now)
{
    const sonde_py_layout *l = &w->layout;
    size_t n = tstate_span(w);
    int via_gil = l->rt_gilstate_tstate_current == SONDE_PY_ABSENT &&
                  l->interp_ceval_gil != SONDE_PY_ABSENT;
    if (!w->interp || !w->head || n == 0 || (via_gil && !w->gil))
        return -1;
    uint64_t interp = 0, head = 0, gil = 0, last = 0;
    int32_t locked = 0;
    sonde_proc_range r[7];
    uint32_t k = 0;
    r[k++] = (sonde_proc_range){ w->runtime.addr + l->rt_interpreters_head, &interp, 8 };
    r[k++] = (sonde_proc_range){ w->interp + l->interp_threads_head, &head, 8 };
    r[k++] = (sonde_proc_range){ w->interp + l->interp_next, &w->head_next, 8 };
    if (l->rt_gilstate_tstate_current != SONDE_PY_ABSENT)
        r[k++] = (sonde_proc_range){ w->runtime.addr + l->rt_gilstate_tstate_current, &last, 8 };
    if (via_gil) {
        r[k++] = (sonde_proc_range){ w->interp + l->interp_ceval_gil, &gil, 8 };
        r[k++] = (sonde_proc_range){ w->gil + l->gil_locked, &locked, sizeof locked };
        r[k++] = (sonde_proc_range){ w->gil + l->gil_last_holder, &last, 8 };
    }
    r[k++] = (sonde_proc_range){ w->head, w->head_state, n };
    if (sonde_proc_read_ranges(&w->proc, r, k) != (int)k || interp != w->interp ||
        head != w->head || (via_gil && gil != w->gil))
        return -1;
    *ts = head;
    now->holder = via_gil && locked <= 0 ? 0 : last;
    now->gc_flag = gc_flag_at(w, w->interp);
    w->head_fresh = 1;
    return 0;
}

/* The interpreter's first thread state into *ts, and its GIL holder and
 * collector flag's address into *now.  0, -EAGAIN (not initialised yet, or
 * finalised), or another negative errno. */
static int threads_head(sonde_walker *w, uint64_t *ts, interp_now *now)
{
    const sonde_py_layout *l = &w->layout;
    w->head_fresh = 0;
    if (threads_head_again(w, ts, now) == 0)
        return 0;
    uint64_t interp;
    w->interp = w->head = 0;
    int rc = read_ptr(w, w->runtime.addr + l->rt_interpreters_head, &interp);
    if (rc == 0 && !interp)
        return -EAGAIN;
    if (rc == 0)
        rc = read_ptr(w, interp + l->interp_threads_head, ts);
    if (rc == 0)
        rc = read_ptr(w, interp + l->interp_next, &w->head_next);
    if (rc == 0) {
        *now = interp_state_now(w, interp, &w->gil);
        w->interp = interp;
        w->head = *ts;
    }
    return rc;
}

/* The thread's /proc files, its stat file opened on first use; NULL
 * when it cannot be opened (the thread has ended). */
static struct sonde_stat_fd *task_files(sonde_walker *w, uint64_t tid)
{
    for (uint32_t i = 0; i < w->nstat_fds; i++)
        if (w->stat_fds[i].tid == tid)
            return &w->stat_fds[i];
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%llu/stat", w->proc.pid, (unsigned long long)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (w->nstat_fds == SONDE_WALK_BATCH) {
        /* Full: forget the oldest thread, most likely one that has ended. */
        close(w->stat_fds[0].fd);
        if (w->stat_fds[0].sched_fd >= 0)
            close(w->stat_fds[0].sched_fd);
        memmove(w->stat_fds, w->stat_fds + 1, (w->nstat_fds - 1) * sizeof w->stat_fds[0]);
        w->nstat_fds--;
    }
    struct sonde_stat_fd *e = &w->stat_fds[w->nstat_fds++];
    *e = (struct sonde_stat_fd){ .tid = tid, .fd = fd, .sched_fd = -1 };
    return e;
}

/* The fields of the thread's stat file after its name (see task.h), read
 * into buf; NULL when it cannot be read. */
static const char *stat_fields(const struct sonde_stat_fd *e, char *buf, size_t size)
{
    ssize_t got = e ? pread(e->fd, buf, size - 1, 0) : -1;
    if (got <= 0)
        return NULL;
    buf[got] = '\0';
    /* "tid (comm) S ...": the state follows the last ')'. */
    char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] ? paren + 2 : NULL;
}

/* 1 when thread tid is running (or waiting for a CPU), 0 when it
 * sleeps or is stopped, -1 when its state cannot be read. */
static int thread_on_cpu(sonde_walker *w, uint64_t tid)
{
    char buf[512];
    const char *f = stat_fields(task_files(w, tid), buf, sizeof buf);
    return f ? f[0] == 'R' : -1;
}

/* The thread's CPU time in ns so far: schedstat's first field (on-CPU
 * time, exact), else utime + stime from stat (clock ticks).  0, or -1
 * when neither can be read. */
static int thread_cpu_ns(sonde_walker *w, struct sonde_stat_fd *e, uint64_t *ns)
{
    char buf[512], path[96];
    if (e->sched_fd == -1) {
        snprintf(path, sizeof path, "/proc/%d/task/%llu/schedstat", w->proc.pid,
                 (unsigned long long)e->tid);
        e->sched_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (e->sched_fd < 0)
            e->sched_fd = -2;
    }
    ssize_t got = e->sched_fd >= 0 ? pread(e->sched_fd, buf, sizeof buf - 1, 0) : -1;
    unsigned long long v, utime, stime;
    if (got > 0) {
        buf[got] = '\0';
        if (sscanf(buf, "%llu", &v) == 1) {
            *ns = v;
            return 0;
        }
    }
    const char *f = stat_fields(e, buf, sizeof buf);
    long hz = sysconf(_SC_CLK_TCK);
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!f || hz <= 0 ||
        sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return -1;
    *ns = (utime + stime) * (1000000000ull / (unsigned long long)hz);
    return 0;
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* With cpu_time: whether thread tid is to be read, and the CPU this
 * sample weighs into *cpu (see sonde_walker.cpu_time).  1 running with
 * CPU not yet weighed (some of it taken), 0 not, -1 unknown.
 *
 * The kernel moves a running thread's figure only at its scheduler tick
 * (often every 4 ms), in steps.  Given whole to the sample that first
 * saw each step, the thread would be sampled at the tick's rate and in
 * step with it (a program whose phases lasted whole ticks came out 5
 * points off); so each sample of a running thread takes at most the time
 * since its previous one from what the steps brought, and a busy
 * thread's samples each weigh their interval, as in wall mode. */
static int take_cpu(sonde_walker *w, uint64_t tid, uint64_t *cpu)
{
    struct sonde_stat_fd *e = task_files(w, tid);
    uint64_t now, at = monotonic_ns();
    *cpu = 0;
    if (!e || thread_cpu_ns(w, e, &now) < 0)
        return -1;
    if (!e->cpu_seen) {
        e->cpu_seen = 1;
        e->cpu_ns = now > w->cpu_first_ns ? now - w->cpu_first_ns : 0;
        e->taken_at = at > w->cpu_first_ns ? at - w->cpu_first_ns : 0;
    }
    if (now > e->cpu_ns) {
        e->cpu_credit += now - e->cpu_ns;
        e->cpu_ns = now;
    }
    if (!e->cpu_credit)
        return 0;
    char buf[512];
    const char *f = stat_fields(e, buf, sizeof buf);
    if (!f)
        return -1;
    if (f[0] != 'R')
        return 0; /* its time goes to the next sample that sees it run */
    uint64_t since = at > e->taken_at ? at - e->taken_at : 0;
    *cpu = e->cpu_credit < since ? e->cpu_credit : since;
    if (!*cpu)
        return 0;
    e->cpu_credit -= *cpu;
    e->taken_at = at;
    return 1;
}

/* The thread's state (and with cpu_time its CPU) into s, from its kernel
 * id. */
static void read_state(sonde_walker *w, sonde_thread_sample *s)
{
    if (w->cpu_time) {
        s->on_cpu = take_cpu(w, s->native_id, &s->cpu_ns);
        s->cpu_read = s->on_cpu >= 0;
    } else {
        s->on_cpu = thread_on_cpu(w, s->native_id);
    }
}

/* Exception items followed outwards, and bytes of a type's name read,
 * before giving up: the target's memory, untrusted. */
#define EXC_ITEMS_MAX 16
#define EXC_NAME_MAX 120   /* a multiple of 8 */
#define EXC_NONE (SONDE_U64MAP_NONE - 1)   /* in exc_types: NoneType, nothing handled */

/* The function standing for the exception type whose tp_name is at
 * name_addr ("<except NAME>"), resolved once; EXC_NONE for NoneType,
 * SONDE_NO_FUNC when it cannot be read. */
static uint32_t exception_func(sonde_walker *w, uint64_t type, uint64_t name_addr)
{
    uint64_t key = type ^ (name_addr * 0x9e3779b97f4a7c15ull);
    uint32_t known = sonde_u64map_get(&w->exc_types, key);
    if (known != SONDE_U64MAP_NONE)
        return known;
    char name[EXC_NAME_MAX];
    size_t n = 0;
    int ended = 0;
    /* A C string: read in small steps, so as not to run past its mapping. */
    while (name_addr && n < EXC_NAME_MAX && !ended) {
        if (sonde_proc_read(&w->proc, name_addr + n, name + n, 8) < 0)
            return SONDE_NO_FUNC;
        ended = memchr(name + n, '\0', 8) != NULL;
        n += 8;
    }
    if (!ended)
        return SONDE_NO_FUNC;
    uint32_t func = EXC_NONE;
    if (strcmp(name, "NoneType") != 0) {
        snprintf(w->exc_name, sizeof w->exc_name, "<except %s>", name);
        func = sonde_profile_func(w->profile, "~", 0, w->exc_name, w->exc_name, SONDE_FUNC_C);
        if (func == SONDE_NO_FUNC)
            return func;
    }
    sonde_u64map_slot(&w->exc_types, key, func); /* out of memory: resolved again next time */
    return func;
}

/* The exception the thread (its state block ts) handles, as
 * sys.exc_info() finds it -- the innermost item holding one, not None --
 * into s->in_except and s->exc_func. */
static void read_exception(sonde_walker *w, const uint8_t *ts, sonde_thread_sample *s)
{
    const sonde_py_layout *l = &w->layout;
    if (l->ts_exc_info == SONDE_PY_ABSENT || l->type_name == SONDE_PY_ABSENT ||
        l->exc_item_value >= 64 || l->exc_item_previous >= 64)
        return;
    uint64_t item = field_u64(ts, l->ts_exc_info);
    size_t size = (l->exc_item_value > l->exc_item_previous ? l->exc_item_value
                                                             : l->exc_item_previous) + 8;
    uint8_t block[72];
    for (int i = 0; item && i < EXC_ITEMS_MAX; i++) {
        if (sonde_proc_read(&w->proc, item, block, size) < 0)
            return;
        uint64_t value = field_u64(block, l->exc_item_value), type = 0, name = 0;
        item = field_u64(block, l->exc_item_previous);
        if (!value)
            continue;
        if (read_ptr(w, value + l->ob_type, &type) < 0 || !type ||
            read_ptr(w, type + l->type_name, &name) < 0)
            return;
        uint32_t func = exception_func(w, type, name);
        if (func == EXC_NONE)
            continue;
        s->in_except = 1;
        s->exc_func = func;
        return;
    }
}
/* What the first try at a walk learnt of the thread (first_look). */
typedef struct seen_first {
    int filtered, undecided, on_cpu, cpu_read;
    uint64_t cpu_ns;
} seen_first;

/* A later try at the same walk: what first_look learnt stays. */
static void again(sonde_thread_sample *s, const seen_first *first)
{
    s->filtered = first->filtered;
    s->undecided = first->undecided;
    s->on_cpu = first->on_cpu;
    s->cpu_read = first->cpu_read;
    s->cpu_ns = first->cpu_ns;
}

/* The thread filter's key of a thread (thread_filter.h): with its kernel
 * id where the thread state keeps one (3.11+), known before its frames. */
static uint64_t filter_key(const sonde_walker *w, const sonde_thread_sample *s)
{
    int has_tid = w->layout.ts_native_thread_id != SONDE_PY_ABSENT;
    return sonde_thread_filter_key(s->tstate, s->thread_id, has_tid ? s->native_id : 0);
}

/* What a walk learns of a thread before its frames, once per walk (its
 * CPU is taken once): whether the filter keeps it, and whether it is
 * idle, from its kernel id (known here from 3.11). */
static void first_look(sonde_walker *w, sonde_thread_sample *s, seen_first *first)
{
    if (w->filter) {
        uint64_t key = filter_key(w, s);
        int keep = sonde_thread_filter_known(w->filter, key);
        if (keep < 0 && s->native_id)
            keep = sonde_thread_filter_decide(w->filter, w->proc.pid, key, s->native_id, NULL, 0);
        s->filtered = keep == 0;
        s->undecided = keep < 0;
    }
    s->on_cpu = -1;
    if (!s->filtered && (w->skip_idle || w->cpu_time) && s->native_id)
        read_state(w, s);
    *first = (seen_first){ s->filtered, s->undecided, s->on_cpu, s->cpu_read, s->cpu_ns };
}

/* Whether the thread at ts, holding the GIL while its interpreter's
 * collector flag (at flag) read `collecting`, is the one collecting: the
 * first thread seen holding the GIL during a collection, until the flag
 * is seen clear.  A finalizer or callback the collector runs may let go
 * of the GIL (I/O, a sleep) while the flag stays set: the thread that
 * takes it then is not collecting. */
static int collector(sonde_walker *w, uint64_t flag, uint64_t ts, int32_t collecting)
{
    if (!collecting) {
        if (w->gc_flag == flag)
            w->gc_flag = w->gc_tstate = 0;
        return 0;
    }
    if (w->gc_flag != flag) {
        w->gc_flag = flag;
        w->gc_tstate = ts;
    }
    return w->gc_tstate == ts;
}

/* record --async: the asyncio task the thread at ts runs (its state read into block holds it,
 * where the read covers it), into s, and the address of its coroutine's frame (where the
 * task's part of the stack ends); 0 when it runs none. */
static uint64_t running_task_frame(sonde_walker *w, uint64_t ts, const uint8_t *block,
                                   sonde_thread_sample *s)
{
    uint64_t coro = 0, at = w->async_off[SONDE_ASYNC_THREAD_TASK];
    s->running_task = 0;
    if (reads_running_task(w))
        s->running_task = field_u64(block, at);
    else if (w->async_found && w->layout.task_lists && /* a thread state larger than read */
             sonde_proc_read(&w->proc, ts + at, &s->running_task, 8) < 0)
        s->running_task = 0;
    if (!s->running_task ||
        sonde_proc_read(&w->proc, s->running_task + w->async_off[SONDE_ASYNC_TASK_CORO], &coro,
                        8) < 0 ||
        !coro)
        return 0;
    return coro + w->layout.gen_iframe;
}

/* --async: whether the thread at ts runs a task now that it did not run (or ran another) when
 * its stack was read: the event loop resumed one in between. */
static int task_started(sonde_walker *w, uint64_t ts, const sonde_thread_sample *s)
{
    uint64_t now;
    return w->layout.task_lists &&
           sonde_proc_read(&w->proc, ts + w->async_off[SONDE_ASYNC_THREAD_TASK], &now, 8) == 0 &&
           now && now != s->running_task;
}

/* Reads of one thread's stack before it is left torn: a running thread
 * tears a read by moving on (a generator yields, a call returns) between
 * the walk's reads, and the next read is most often whole. */
#define WALK_TRIES 3

/* Walks the thread whose state is at ts into s (frames, ids, whether it
 * holds the GIL and collects garbage: now); *next is the state after it
 * in the list.  0
 * (the frames may be torn, after WALK_TRIES reads: s->torn), or a
 * negative errno when the state itself cannot be read. */
static int walk_thread(sonde_walker *w, uint64_t ts, interp_now now, sonde_thread_sample *s,
                       uint64_t *next)
{
    const sonde_py_layout *l = &w->layout;
    size_t n = tstate_span(w);
    uint8_t block[SONDE_WALK_STATE_MAX];
    stack_copy chunk;
    seen_first first = { .on_cpu = -1 };   /* what the first try learnt of the thread */
    for (int tries = 0; tries < WALK_TRIES; tries++) {
        int rc = n == 0 ? -EINVAL : 0;
        if (rc == 0 && w->head_fresh && ts == w->head)
            memcpy(block, w->head_state, n); /* read with the interpreter, this snapshot */
        else if (rc == 0)
            rc = sonde_proc_read(&w->proc, ts, block, n);
        w->head_fresh = 0;
        if (rc < 0)
            return rc;
        memset(s, 0, offsetof(sonde_thread_sample, frames));
        s->tstate = ts;
        s->thread_id = field_u64(block, l->ts_thread_id);
        if (l->ts_native_thread_id != SONDE_PY_ABSENT)
            s->native_id = field_u64(block, l->ts_native_thread_id);
        s->holds_gil = ts == now.holder;
        s->exc_func = SONDE_NO_FUNC;
        if (tries == 0)
            first_look(w, s, &first);
        else
            again(s, &first);
        if (s->filtered || s->on_cpu == 0)
            break; /* not wanted: its frames are not read */
        if (w->read_exceptions)
            read_exception(w, block, s);
        uint64_t frame, task_frame = running_task_frame(w, ts, block, s);
        s->torn = read_stack(w, ts, block, s->holds_gil ? now.gc_flag : 0, &chunk, &frame) < 0;
        s->in_gc = chunk.gc_read && collector(w, now.gc_flag, ts, chunk.collecting);
        if (!s->torn) {
            s->torn = walk_frames(w, &chunk, frame, task_frame, s) < 0;
            remember_outside(w, ts, &chunk);
        }
        if (!s->torn && w->async_found && s->task_depth == 0 && task_started(w, ts, s))
            s->torn = 1; /* a task was resumed between the two reads: read again */
        if (!s->torn)
            break;
    }
    *next = field_u64(block, l->ts_next);
    return 0;
}

/* The next interpreter after interp with a thread (its id, first thread
 * and its state into *id, *ts and *now), within the snapshot's bound
 * on interpreters.  1, or 0 when there is none to walk. */
static int next_interp(sonde_walker *w, uint64_t *interp, int64_t *id, uint64_t *ts,
                       interp_now *now)
{
    const sonde_py_layout *l = &w->layout;
    uint64_t at = *interp, next = 0, gil;
    *ts = 0;
    while (!*ts) {
        if (at == w->interp)
            next = w->head_next; /* read with the first interpreter */
        else if (read_ptr(w, at + l->interp_next, &next) < 0)
            return 0;
        if (!next || next == at || ++w->interps_walked >= SONDE_WALK_MAX_INTERPS ||
            read_ptr(w, next + l->interp_threads_head, ts) < 0 ||
            read_ptr(w, next + l->interp_id, (uint64_t *)id) < 0) {
            *ts = 0;
            return 0;
        }
        at = next;
    }
    *interp = at;
    *now = interp_state_now(w, at, &gil);
    return 1;
}

/* The id of interpreter interp (the main one's is 0; it is the last in
 * the list); -1 when it cannot be read. */
static int64_t interp_id_of(sonde_walker *w, uint64_t interp)
{
    uint64_t id;
    if (interp == w->interp && !w->head_next)
        return 0;
    return read_ptr(w, interp + w->layout.interp_id, &id) < 0 ? -1 : (int64_t)id;
}

int sonde_walker_sample(sonde_walker *w, uint64_t *cursor, sonde_thread_sample *out, uint32_t max,
                        uint32_t *count)
{
    const sonde_py_layout *l = &w->layout;
    *count = 0;
    uint64_t ts, gil;
    interp_now now;
    int rc = threads_head(w, &ts, &now);
    if (rc < 0)
        return rc;
    uint64_t interp = w->interp;
    int64_t id;
    if (*cursor) {
        ts = *cursor;
        interp = w->cursor_interp;
        id = w->cursor_interp_id;
        if (interp != w->interp)
            now = interp_state_now(w, interp, &gil);
    } else {
        w->interps_walked = 1;
        id = interp_id_of(w, interp);
        if (!ts) /* an interpreter without threads yet (one being made) */
            next_interp(w, &interp, &id, &ts, &now);
    }
    *cursor = 0;
    uint64_t pthreads[SONDE_WALK_BATCH];
    if (max > SONDE_WALK_BATCH)
        max = SONDE_WALK_BATCH;
    while (ts && *count < max) {
        uint64_t next;
        if ((rc = walk_thread(w, ts, now, &out[*count], &next)) < 0)
            return rc == -ESRCH ? rc : 0; /* a torn list: keep what was read */
        out[*count].interp_id = id;
        pthreads[*count] = out[*count].thread_id;
        (*count)++;
        ts = next == ts ? 0 : next;
        if (!ts && !next_interp(w, &interp, &id, &ts, &now))
            break;
    }
    w->cursor_interp = interp;
    w->cursor_interp_id = id;
    *cursor = ts;
    if (l->ts_native_thread_id == SONDE_PY_ABSENT) {
        if (w->pthread_tid_offset < 0)
            find_pthread_tid_offset(w, pthreads, *count);
        for (uint32_t i = 0; i < *count && w->pthread_tid_offset >= 0; i++) {
            int32_t tid;
            if (sonde_proc_read(&w->proc, pthreads[i] + (uint64_t)w->pthread_tid_offset, &tid,
                                sizeof tid) == 0 && tid > 0)
                out[i].native_id = (uint64_t)tid;
        }
    }
    return 0;
}

int sonde_walker_sample_thread(sonde_walker *w, uint64_t tstate, sonde_thread_sample *out)
{
    uint64_t head, next;
    interp_now now;
    int rc = threads_head(w, &head, &now);
    return rc < 0 ? rc : walk_thread(w, tstate, now, out, &next);
}

static int python_thread_name(const sonde_walker *w, const sonde_thread_sample *s, char *out,
                             size_t outlen)
{
    if (s->native_id && s->native_id == (uint64_t)w->proc.pid) {
        snprintf(out, outlen, "MainThread");
        return 0;
    }
    if (s->depth == 0 || s->truncated || !s->outer_frame)
        return -1;
    /* A threading.Thread runs under Thread._bootstrap(self): its first
     * local is the Thread object, whose _name is the thread's name.  (The
     * outermost Python frame: a stack merged with native frames has
     * native ones outside it.) */
    uint32_t outer = s->depth - 1;
    while (outer > 0 && w->profile->funcs[s->frames[outer].func].kind != SONDE_FUNC_PYTHON)
        outer--;
    const sonde_func *f = &w->profile->funcs[s->frames[outer].func];
    const char *file = sonde_profile_str(w->profile, f->file);
    size_t n = strlen(file);
    uint64_t self, name;
    if (strcmp(sonde_profile_str(w->profile, f->name), "_bootstrap") != 0 || n < 12 ||
        strcmp(file + n - 12, "threading.py") != 0 ||
        sonde_proc_read(&w->proc, s->outer_frame + w->layout.frame_localsplus, &self,
                        sizeof self) < 0 ||
        sonde_py_attr(&w->layout, proc_reader, (void *)w, self, "_name", &name) < 0)
        return -1;
    return read_str(w, name, out, outlen);
}

int sonde_walker_thread_name(const sonde_walker *w, const sonde_thread_sample *s, char *out,
                             size_t outlen)
{
    int named = python_thread_name(w, s, out, outlen) == 0;
    if (s->interp_id <= 0 || !outlen) /* the main interpreter, or an id not read */
        return named ? 0 : -1;
    size_t n = named ? strlen(out) : 0;
    snprintf(out + n, outlen - n, "%sinterpreter %lld%s", named ? " (" : "",
             (long long)s->interp_id, named ? ")" : "");
    return 0;
}

/* Decides a thread the filter waited for, now that its kernel id and
 * its frames (its Python name) are known; one it leaves out loses its
 * frames.  Only a whole stack tells for good that a thread has no
 * Python name: one read torn, cut, or before its first frame is left out
 * this time and decided again at the next. */
static void decide_late(sonde_walker *w, sonde_thread_sample *s)
{
    char name[128];
    int named = python_thread_name(w, s, name, sizeof name) == 0; /* no interpreter label */
    int whole = s->depth > 0 && !s->torn && !s->truncated && s->outer_frame;
    uint64_t key = filter_key(w, s);
    s->undecided = 0;
    s->filtered = sonde_thread_filter_decide(w->filter, w->proc.pid, key, s->native_id,
                                             named ? name : NULL, whole) != 1;
    if (s->filtered)
        s->depth = 0;
}

void sonde_walker_decide_threads(sonde_walker *w, sonde_thread_sample *out, uint32_t n)
{
    for (uint32_t i = 0; i < n && w->filter; i++)
        if (out[i].undecided)
            decide_late(w, &out[i]);
}

void sonde_walker_read_states(sonde_walker *w, sonde_thread_sample *out, uint32_t n)
{
    sonde_walker_decide_threads(w, out, n);
    for (uint32_t i = 0; i < n; i++) {
        sonde_thread_sample *s = &out[i];
        if (s->native_id && s->on_cpu < 0 && !s->filtered)
            read_state(w, s);
    }
}

int sonde_walker_thread_cpu(sonde_walker *w, uint64_t tid, uint64_t *ns)
{
    struct sonde_stat_fd *e = tid ? task_files(w, tid) : NULL;
    return e ? thread_cpu_ns(w, e, ns) : -1;
}

void sonde_walker_read_cpu(sonde_walker *w, sonde_thread_sample *out, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        sonde_thread_sample *s = &out[i];
        uint64_t cpu;
        if (!s->native_id || s->cpu_read)
            continue;
        int running = take_cpu(w, s->native_id, &cpu);
        s->cpu_read = running >= 0;
        s->cpu_ns = cpu;
        if (running == 0)
            s->on_cpu = 0;
    }
}

int sonde_walker_init(sonde_walker *w, sonde_profile *profile)
{
    memset(w, 0, sizeof *w);
    w->profile = profile;
    w->pthread_tid_offset = -1;
    sonde_u64map_init(&w->code_index);
    sonde_u64map_init(&w->lines);
    sonde_u64map_init(&w->async_types);
    sonde_u64map_init(&w->async_set_types);
    sonde_u64map_init(&w->exc_types);
    w->chunk_buf = malloc(CHUNK_MAX);
    w->code_blocks = malloc((size_t)SONDE_WALK_MAX_DEPTH * HEADER_MAX);
    w->outside = calloc(OUTSIDE_SLOTS, sizeof *w->outside);
    w->outside_blocks = malloc((size_t)OUTSIDE_MAX * HEADER_MAX);
    return w->chunk_buf && w->code_blocks && w->outside && w->outside_blocks ? 0 : -ENOMEM;
}

int sonde_walker_open(sonde_walker *w, int pid, sonde_profile *profile, char *err, size_t errlen)
{
    if (sonde_walker_init(w, profile) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = sonde_proc_open(&w->proc, pid, err, errlen);
    if (rc == 0)
        rc = sonde_runtime_find(&w->proc, &w->runtime, err, errlen);
    if (rc < 0)
        return rc;
    if (w->runtime.minor >= 13) {
        uint8_t raw[SONDE_PY_DEBUG_OFFSETS_READ];
        rc = sonde_proc_read(&w->proc, w->runtime.addr, raw, sizeof raw);
        if (rc < 0) {
            sonde_proc_explain(pid, rc, err, errlen);
            return rc;
        }
        if (sonde_py_layout_from_debug_offsets(raw, sizeof raw, &w->layout, err, errlen) < 0)
            return -ENOTSUP;
        return 0;
    }
    const sonde_py_layout *l = sonde_py_layout_for(w->runtime.major, w->runtime.minor);
    if (!l) {
        snprintf(err, errlen, "Python %d.%d is not supported (sonde reads " SONDE_PY_RANGE ")",
                 w->runtime.major, w->runtime.minor);
        return -ENOTSUP;
    }
    w->layout = *l;
    return 0;
}

void sonde_walker_close(sonde_walker *w)
{
    for (uint32_t i = 0; i < w->nstat_fds; i++) {
        close(w->stat_fds[i].fd);
        if (w->stat_fds[i].sched_fd >= 0)
            close(w->stat_fds[i].sched_fd);
    }
    sonde_u64map_free(&w->exc_types);
    for (uint32_t i = 0; i < w->ncodes; i++)
        free(w->codes[i].linetable);
    free(w->codes);
    free(w->chunk_buf);
    free(w->code_blocks);
    free(w->outside);
    free(w->outside_blocks);
    sonde_u64map_free(&w->code_index);
    sonde_u64map_free(&w->lines);
    sonde_u64map_free(&w->async_types);
    sonde_u64map_free(&w->async_set_types);
    free(w->async_met);
    memset(w, 0, sizeof *w);
}
