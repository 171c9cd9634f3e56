/* gecko.c - a sampled profile in the Firefox Profiler's Gecko profile
 * format (-f gecko); gecko.h says how sonde's model maps onto it.
 *
 * Each thread is written in one walk of its tree: its stack table as the
 * walk goes (a node's stack comes after its parent's, as the Profiler
 * requires), collecting the frames and location strings the stacks name;
 * then those tables, its samples from the timeline, and its GC markers.
 * Memory: a few words per node, and per thread its frames and strings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/u64map.h"
#include "format.h"
#include "gecko.h"
#include "json_about.h"

/* meta.categories, and a frame's category by what its function is. */
enum { CAT_OTHER, CAT_PYTHON, CAT_NATIVE, CAT_GC };
static const char categories[] =
    "[{\"name\": \"Other\", \"color\": \"grey\", \"subcategories\": [\"Other\"]}, "
    "{\"name\": \"Python\", \"color\": \"yellow\", \"subcategories\": [\"Other\"]}, "
    "{\"name\": \"Native\", \"color\": \"blue\", \"subcategories\": [\"Other\"]}, "
    "{\"name\": \"GC\", \"color\": \"orange\", \"subcategories\": [\"Other\"]}]";

/* One thread's tables as its walk builds them (the per-node arrays are
 * shared by all threads: each node belongs to one thread's tree). */
typedef struct tables {
    uint32_t *stack_of;     /* node -> 1 + its stack's index; 0: not walked yet */
    uint8_t *in_gc;         /* node -> a <GC> frame is on its stack */
    sonde_u64map frame_of;  /* func << 32 | line -> frame index */
    sonde_u64map string_of; /* func -> index of its location in the string table */
    uint64_t *frames;       /* frame -> func << 32 | line */
    size_t nframes, frames_cap;
    uint32_t *strings;      /* string -> func */
    size_t nstrings, strings_cap;
    sonde_buf scratch;      /* a location as it is composed */
} tables;

static int is_gc(const sonde_profile *p, uint32_t func)
{
    return strcmp(sonde_profile_str(p, p->funcs[func].name), SONDE_GECKO_GC_FRAME) == 0;
}

static int category_of(const sonde_profile *p, uint32_t func)
{
    if (is_gc(p, func))
        return CAT_GC;
    switch ((enum sonde_func_kind)p->funcs[func].kind) {
    case SONDE_FUNC_PYTHON:
        return CAT_PYTHON;
    case SONDE_FUNC_NATIVE:
        return CAT_NATIVE;
    default:
        return CAT_OTHER;
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* func's location string (gecko.h) into b, NUL-terminated. */
static void compose_location(sonde_buf *b, const sonde_profile *p, uint32_t func)
{
    const sonde_func *f = &p->funcs[func];
    const char *name = sonde_profile_str(p, f->qualname), *file = sonde_profile_str(p, f->file);
    b->len = 0;
    if (f->kind == SONDE_FUNC_NATIVE) {
        const char *object = f->mapping && f->mapping <= p->nmappings
                                 ? sonde_profile_str(p, p->mappings[f->mapping - 1].file) : file;
        sonde_buf_printf(b, "%s (in %s) (%s:%d)", name, base_name(object), file, f->line);
    } else if (strcmp(file, "~") == 0 && f->line == 0) {
        sonde_gecko_location loc;
        sonde_buf_puts(b, name);
        sonde_gecko_location_parse(name, strlen(name), &loc);
        /* a label that would read as code or a library's function says it
         * is not one (an address, "0x...", reads as a label again) */
        if (loc.form == SONDE_GECKO_CODE || loc.form == SONDE_GECKO_NATIVE || !*name)
            sonde_buf_puts(b, " (~:0)");
    } else {
        sonde_buf_printf(b, "%s (%s:%d)", name, file, f->line);
    }
    sonde_buf_putc(b, '\0');
}

/* The index of func's location string, added when new; -1 on out of memory. */
static int64_t string_of(tables *tb, uint32_t func)
{
    uint32_t *slot = sonde_u64map_slot(&tb->string_of, func, (uint32_t)tb->nstrings);
    if (!slot)
        return -1;
    uint32_t at = *slot;
    if (at == tb->nstrings) {
        uint32_t *s = sonde_grow(tb->strings, &tb->strings_cap, tb->nstrings + 1, sizeof *s,
                                 UINT32_MAX - 1);
        if (!s)
            return -1;
        tb->strings = s;
        tb->strings[tb->nstrings++] = func;
    }
    return at;
}

/* The index of node's frame, added when new; -1 on out of memory. */
static int64_t frame_of(tables *tb, const sonde_node *n)
{
    uint64_t key = (uint64_t)n->func << 32 | (uint32_t)n->line;
    uint32_t *slot = sonde_u64map_slot(&tb->frame_of, key, (uint32_t)tb->nframes);
    if (!slot)
        return -1;
    uint32_t at = *slot;
    if (at == tb->nframes) {
        uint64_t *f = sonde_grow(tb->frames, &tb->frames_cap, tb->nframes + 1, sizeof *f,
                                 UINT32_MAX - 1);
        if (!f)
            return -1;
        tb->frames = f;
        if (string_of(tb, n->func) < 0)
            return -1;
        tb->frames[tb->nframes++] = key;
    }
    return at;
}

/* The stack table of the tree under root, in pre-order; each node's stack
 * and GC flag into tb.  0, or -1 on out of memory. */
static int put_stacks(sonde_buf *b, const sonde_profile *p, uint32_t root, tables *tb)
{
    const sonde_node *nodes = p->nodes;
    uint32_t nstacks = 0, n = nodes[root].first_child;
    sonde_buf_puts(b, "\"stackTable\": {\"schema\": {\"prefix\": 0, \"frame\": 1}, \"data\": [");
    while (n != SONDE_NO_NODE) {
        uint32_t parent = nodes[n].parent;
        int64_t frame = frame_of(tb, &nodes[n]);
        if (frame < 0)
            return -1;
        tb->stack_of[n] = ++nstacks;
        tb->in_gc[n] = is_gc(p, nodes[n].func) || (parent != root && tb->in_gc[parent]);
        if (parent == root)
            sonde_buf_printf(b, "%s[null, %lld]", nstacks > 1 ? ", " : "", (long long)frame);
        else
            sonde_buf_printf(b, ", [%u, %lld]", tb->stack_of[parent] - 1, (long long)frame);
        if (nodes[n].first_child != SONDE_NO_NODE) {
            n = nodes[n].first_child;
            continue;
        }
        while (n != root && nodes[n].next_sibling == SONDE_NO_NODE)
            n = nodes[n].parent;
        n = n == root ? SONDE_NO_NODE : nodes[n].next_sibling;
    }
    sonde_buf_puts(b, "]},\n  ");
    return 0;
}

/* The frame and string tables of the frames put_stacks collected. */
static void put_frames(sonde_buf *b, const sonde_profile *p, tables *tb)
{
    sonde_buf_puts(b, "\"frameTable\": {\"schema\": {\"location\": 0, \"relevantForJS\": 1, "
                      "\"innerWindowID\": 2, \"implementation\": 3, \"line\": 4, \"column\": 5, "
                      "\"category\": 6, \"subcategory\": 7}, \"data\": [");
    for (size_t i = 0; i < tb->nframes; i++) {
        uint32_t func = (uint32_t)(tb->frames[i] >> 32);
        int32_t line = (int32_t)(uint32_t)tb->frames[i];
        sonde_buf_printf(b, "%s[%u, false, null, null, ", i ? ", " : "",
                         sonde_u64map_get(&tb->string_of, func));
        if (line)
            sonde_buf_printf(b, "%d", line);
        else
            sonde_buf_puts(b, "null");
        sonde_buf_printf(b, ", null, %d, 0]", category_of(p, func));
    }
    sonde_buf_puts(b, "]},\n  \"stringTable\": [");
    for (size_t i = 0; i < tb->nstrings; i++) {
        compose_location(&tb->scratch, p, tb->strings[i]);
        if (i)
            sonde_buf_puts(b, ", ");
        sonde_buf_json_str(b, tb->scratch.data ? tb->scratch.data : "");
    }
    sonde_buf_puts(b, "],\n  ");
}

/* Nanoseconds as the milliseconds the format counts in, exactly. */
static void put_ms(sonde_buf *b, uint64_t ns)
{
    sonde_buf_printf(b, "%llu.%06llu", (unsigned long long)(ns / 1000000),
                     (unsigned long long)(ns % 1000000));
}

/* 1 when p's ticks are CPU time, not samples (record's cpu mode), and
 * every sample says what it weighed: the samples then carry it as the
 * thread's CPU time since its previous sample (threadCPUDelta, in ns). */
static int weighted(const sonde_profile *p)
{
    if (!(p->sample_rate > 0) || fabs(p->seconds_per_tick * p->sample_rate - 1) < 1e-9)
        return 0;
    for (uint64_t i = 0; i < p->nevents; i++)
        if (!p->events[i].weight)
            return 0;
    return 1;
}

/* Thread t's samples (ev[0..n), indexes into p->events, in time order). */
static void put_samples(sonde_buf *b, const sonde_profile *p, const tables *tb,
                        const uint32_t *ev, uint64_t n, int cpu)
{
    sonde_buf_printf(b, "\"samples\": {\"schema\": {\"stack\": 0, \"time\": 1, \"eventDelay\": 2%s}, "
                     "\"data\": [", cpu ? ", \"threadCPUDelta\": 3" : "");
    int first = 1;
    for (uint64_t k = 0; k < n; k++) {
        const sonde_sample_event *e = &p->events[ev[k]];
        if (e->node >= p->nnodes || !tb->stack_of[e->node])
            continue; /* not a node of this thread's tree: no stack to name */
        sonde_buf_printf(b, "%s[%u, ", first ? "" : ", ", tb->stack_of[e->node] - 1);
        put_ms(b, e->t_ns);
        if (cpu)
            sonde_buf_printf(b, ", null, %.0f]", (double)e->weight * p->seconds_per_tick * 1e9);
        else
            sonde_buf_puts(b, ", null]");
        first = 0;
    }
    sonde_buf_puts(b, "]},\n  ");
}

static void put_marker(sonde_buf *b, uint64_t from, uint64_t to, int *first)
{
    sonde_buf_puts(b, *first ? "[0, " : ", [0, ");
    *first = 0;
    put_ms(b, from);
    sonde_buf_puts(b, ", ");
    put_ms(b, to);
    sonde_buf_printf(b, ", 1, %d, null]", CAT_GC);
}

/* Thread t's markers: its runs of samples in the garbage collector (the
 * marker's name is string 0 of the table, SONDE_GECKO_GC_FRAME's
 * location: put_thread makes it so when the thread has one). */
static void put_markers(sonde_buf *b, const sonde_profile *p, const tables *tb,
                        const uint32_t *ev, uint64_t n)
{
    uint64_t period = p->sample_rate > 0 ? (uint64_t)(1e9 / p->sample_rate) : 0;
    uint64_t from = 0;
    int in = 0, first = 1;
    sonde_buf_puts(b, "\"markers\": {\"schema\": {\"name\": 0, \"startTime\": 1, \"endTime\": 2, "
                      "\"phase\": 3, \"category\": 4, \"data\": 5}, \"data\": [");
    for (uint64_t k = 0; k < n; k++) {
        const sonde_sample_event *e = &p->events[ev[k]];
        int gc = e->node < p->nnodes && tb->stack_of[e->node] && tb->in_gc[e->node];
        if (gc && !in)
            from = e->t_ns;
        else if (!gc && in)
            put_marker(b, from, e->t_ns, &first);
        in = gc;
    }
    if (in)
        put_marker(b, from, p->events[ev[n - 1]].t_ns + period, &first);
    sonde_buf_puts(b, "]}");
}

/* Makes the GC frame's location string 0 of a thread whose tree has
 * one, so that markers can name it.  0, or -1 on out of memory. */
static int name_gc_first(const sonde_profile *p, tables *tb)
{
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if (is_gc(p, f))
            return string_of(tb, f) < 0 ? -1 : 0;
    return 0;
}

static void put_thread(sonde_buf *b, const sonde_profile *p, uint32_t t, tables *tb,
                       const uint32_t *ev, uint64_t n, int cpu)
{
    const sonde_thread *th = &p->threads[t];
    sonde_u64map_free(&tb->frame_of);
    sonde_u64map_free(&tb->string_of);
    tb->nframes = tb->nstrings = 0;
    sonde_buf_puts(b, t ? ",\n {\"name\": " : "\n {\"name\": ");
    sonde_buf_json_str(b, sonde_profile_str(p, th->name));
    sonde_buf_printf(b, ", \"processType\": \"default\", \"processName\": \"Python\", "
                     "\"tid\": %llu, \"pid\": %d, \"registerTime\": 0, \"unregisterTime\": null,"
                     "\n  ", (unsigned long long)th->native_id, p->pid);
    if (name_gc_first(p, tb) < 0 || put_stacks(b, p, th->root, tb) < 0) {
        b->oom = 1;
        return;
    }
    put_frames(b, p, tb);
    put_samples(b, p, tb, ev, n, cpu);
    put_markers(b, p, tb, ev, n);
    sonde_buf_putc(b, '}');
}

static void put_meta(sonde_buf *b, const sonde_profile *p, int cpu)
{
    sonde_buf_printf(b, "{\"meta\": {\"version\": %d, \"interval\": ", SONDE_GECKO_VERSION);
    sonde_buf_num(b, p->sample_rate > 0 ? 1000 / p->sample_rate : 1);
    sonde_buf_puts(b, ", \"startTime\": ");
    put_ms(b, p->about.start_ns > 0 ? (uint64_t)p->about.start_ns : 0);
    sonde_buf_printf(b, ", \"shutdownTime\": null, \"processType\": 0, \"product\": \"sonde\", "
                     "\"platform\": \"Linux\", \"oscpu\": \"Linux x86_64\", \"abi\": \"x86_64\", "
                     "\"stackwalk\": %d, \"debug\": 0, \"gcpoison\": 0, \"asyncstack\": 0, "
                     "\"presymbolicated\": true, \"markerSchema\": [],\n \"categories\": %s,\n "
                     "\"about\": ", p->nmappings > 0, categories);
    sonde_json_about_write(b, &p->about, p->pid);
    if (cpu)
        sonde_buf_puts(b, ",\n \"sampleUnits\": {\"time\": \"ms\", \"eventDelay\": \"ms\", "
                          "\"threadCPUDelta\": \"ns\"}");
    sonde_buf_puts(b, "},\n\"threads\": [");
}

static void tables_free(tables *tb)
{
    free(tb->stack_of);
    free(tb->in_gc);
    sonde_u64map_free(&tb->frame_of);
    sonde_u64map_free(&tb->string_of);
    free(tb->frames);
    free(tb->strings);
    sonde_buf_free(&tb->scratch);
}

int sonde_gecko_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                      const sonde_format_opts *o)
{
    (void)s;
    (void)o;
    tables tb = { .stack_of = calloc(p->nnodes, sizeof *tb.stack_of),
                  .in_gc = calloc(p->nnodes, 1) };
    sonde_u64map_init(&tb.frame_of);
    sonde_u64map_init(&tb.string_of);
    sonde_buf_init(&tb.scratch);
    uint64_t *start = NULL;
    uint32_t *order = NULL;
    if (!tb.stack_of || !tb.in_gc || sonde_profile_events_by_thread(p, &start, &order) < 0) {
        tables_free(&tb);
        b->oom = 1;
        return -1;
    }
    int cpu = weighted(p);
    put_meta(b, p, cpu);
    for (uint32_t t = 0; t < p->nthreads && sonde_buf_ok(b); t++)
        put_thread(b, p, t, &tb, order + start[t], start[t + 1] - start[t], cpu);
    sonde_buf_puts(b, "],\n\"libs\": [], \"pages\": [], \"processes\": [], \"pausedRanges\": [], "
                      "\"sources\": {\"schema\": {\"id\": 0, \"filename\": 1, \"startLine\": 2, "
                      "\"startColumn\": 3, \"sourceMapURL\": 4}, \"data\": []}}\n");
    if (!sonde_buf_ok(&tb.scratch))
        b->oom = 1;
    tables_free(&tb);
    free(start);
    free(order);
    return sonde_buf_ok(b) ? 0 : -1;
}
