/* pprof.c - a profile's tree as pprof's profile.proto; see pprof.h.
 *
 * One Sample per call path (a node of a thread's tree) with figures of
 * its own, its Locations leaf first, labelled with its thread's name
 * ("thread") and kernel id ("thread_id", when known).
 *   - sampled (sonde record): samples/count and cpu/nanoseconds (samples
 *     x period), period cpu/nanoseconds = 1e9 / rate;
 *   - deterministic (sonde run, Profile.write): calls/count and
 *     time/nanoseconds, the call path's own time.
 * Each function is a Function (name: the qualified name, system_name:
 * the plain one, filename, start_line: its first line); C functions
 * (file "~") have no file.  Each (function, line) is a Location of one
 * Line: the line a sampled frame was at, else the function's first line;
 * a native function's (record --native) is also in its object's Mapping
 * (path, executable range, file offset, build id) at an address of it.
 *
 * What was profiled (p->about) goes in the profile's time_nanos (the
 * start), duration_nanos (the wall time) and comments "KEY: VALUE", KEY
 * one of command (the command line, quoted as a shell takes it),
 * executable, python_version (its line breaks as spaces), cpu_s,
 * processes, verdict, pid and cwd (the program's working directory):
 * pprof_read.c reads them back.
 *
 * Each sample repeats its whole stack, so the output grows with the sum
 * of the depths: past MAX_FRAMES frames in all the writer refuses, as the
 * collapsed writer does. */
#include "pprof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_build.h"

#define MAX_FRAMES (1ull << 28)

typedef struct writer {
    const sonde_profile *p;
    sonde_pprof_build out;
    uint64_t *function_of;  /* sonde function -> pprof Function id, 0 = not yet */
    uint64_t *location_of;  /* node -> pprof Location id, 0 = not yet */
    uint64_t *mapping_of;   /* sonde mapping -> pprof Mapping id, 0 = not yet */
} writer;

static uint64_t function_id(writer *w, uint32_t func)
{
    if (w->function_of[func])
        return w->function_of[func];
    const sonde_func *f = &w->p->funcs[func];
    /* C functions have no file; torch operators keep theirs ("~torch"),
     * which names their kind when the file is read back. */
    int c = f->kind == SONDE_FUNC_C;
    w->function_of[func] = sonde_pprof_function(
        &w->out, sonde_profile_str(w->p, f->qualname), sonde_profile_str(w->p, f->name),
        c ? "" : sonde_profile_str(w->p, f->file), c ? 0 : f->line);
    return w->function_of[func];
}

/* The Mapping of native function f: its object file; 0 when unknown. */
static uint64_t mapping_id(writer *w, const sonde_func *f)
{
    if (!f->mapping || f->mapping > w->p->nmappings)
        return 0;
    uint32_t m = f->mapping - 1;
    if (!w->mapping_of[m]) {
        const sonde_mapping *mp = &w->p->mappings[m];
        w->mapping_of[m] = sonde_pprof_mapping(&w->out, mp->start, mp->limit, mp->offset,
                                               sonde_profile_str(w->p, mp->file),
                                               sonde_profile_str(w->p, mp->build_id));
    }
    return w->mapping_of[m];
}

/* The Location of node's frame.  This is where a frame's kind decides
 * its Location: native code (record --native) is in its object's Mapping
 * at an address of the function (the first sampled), with a Line of its
 * function (its symbol, its source file or object path) at the line
 * sampled. */
static uint64_t location_id(writer *w, uint32_t node)
{
    if (w->location_of[node])
        return w->location_of[node];
    const sonde_node *n = &w->p->nodes[node];
    const sonde_func *f = &w->p->funcs[n->func];
    int32_t line = w->p->sample_rate > 0 && n->line ? n->line : f->line;
    switch ((enum sonde_func_kind)f->kind) {
    case SONDE_FUNC_PYTHON:
    case SONDE_FUNC_C:
    case SONDE_FUNC_TORCH:
        w->location_of[node] = sonde_pprof_line_location(&w->out, function_id(w, n->func), line);
        break;
    case SONDE_FUNC_NATIVE:
        w->location_of[node] = sonde_pprof_native_location(
            &w->out, mapping_id(w, f), f->address, function_id(w, n->func), line);
        break;
    }
    return w->location_of[node];
}

/* Whether node has figures of its own (is a sample). */
static int has_sample(const sonde_profile *p, const sonde_node *n)
{
    return n->func != SONDE_NO_FUNC && (n->self > 0 || (p->sample_rate <= 0 && n->calls > 0));
}

/* Frames the samples would list, all together; *deepest the most in one.
 * Parents come before their children in p->nodes (profile.c appends). */
static uint64_t count_frames(const sonde_profile *p, uint32_t *depth, uint32_t *deepest)
{
    uint64_t frames = 0;
    *deepest = 0;
    for (uint32_t i = 1; i < p->nnodes; i++) {
        const sonde_node *n = &p->nodes[i];
        depth[i] = n->func == SONDE_NO_FUNC ? 0 : depth[n->parent] + 1;
        if (has_sample(p, n)) {
            frames += depth[i];
            *deepest = depth[i] > *deepest ? depth[i] : *deepest;
        }
    }
    return frames;
}

static void put_samples(writer *w, uint32_t thread, uint64_t *path, uint64_t period)
{
    const sonde_profile *p = w->p;
    const sonde_thread *t = &p->threads[thread];
    sonde_pprof_label labels[2] = {
        { "thread", sonde_profile_str(p, t->name), 0 },
        { "thread_id", NULL, (int64_t)t->native_id },
    };
    /* the thread's nodes: its root's descendants, found by a walk */
    uint32_t node = p->nodes[t->root].first_child;
    while (node != SONDE_NO_NODE && !w->out.failed) {
        const sonde_node *n = &p->nodes[node];
        if (has_sample(p, n)) {
            uint32_t depth = 0;
            for (uint32_t k = node; k != t->root; k = p->nodes[k].parent)
                path[depth++] = location_id(w, k);
            uint64_t values[2];
            if (p->sample_rate > 0) {
                values[0] = sonde_profile_ticks_in(p, n->self, 1 / p->sample_rate);
                values[1] = values[0] * period;
            } else {
                values[0] = n->calls;
                values[1] = sonde_profile_ticks_in(p, n->self, 1e-9);
            }
            sonde_pprof_sample(&w->out, path, depth, values, labels, t->native_id ? 2 : 1);
        }
        /* next in depth-first order */
        if (n->first_child != SONDE_NO_NODE) {
            node = n->first_child;
            continue;
        }
        while (node != t->root && p->nodes[node].next_sibling == SONDE_NO_NODE)
            node = p->nodes[node].parent;
        node = node == t->root ? SONDE_NO_NODE : p->nodes[node].next_sibling;
    }
}

/* What was profiled: the profile's time and duration, and comments. */
static void put_about(writer *w)
{
    const sonde_about *a = &w->p->about;
    sonde_pprof_times(&w->out, a->start_ns, a->wall > 0 ? (int64_t)llround(a->wall * 1e9) : 0);
    sonde_buf c;
    sonde_buf_init(&c);
    if (a->argc) {
        sonde_buf_puts(&c, SONDE_PPROF_COMMAND);
        sonde_about_command(&c, a);
        sonde_buf_putc(&c, '\0');
    }
    if (a->executable)
        sonde_buf_printf(&c, SONDE_PPROF_EXECUTABLE "%s%c", a->executable, '\0');
    if (a->version) { /* one line: 3.8's sys.version breaks before its compiler */
        size_t at = c.len;
        sonde_buf_printf(&c, SONDE_PPROF_VERSION "%s%c", a->version, '\0');
        for (size_t i = at; sonde_buf_ok(&c) && i < c.len; i++)
            c.data[i] = c.data[i] == '\n' ? ' ' : c.data[i];
    }
    if (a->cpu >= 0)
        sonde_buf_printf(&c, SONDE_PPROF_CPU "%.6f%c", a->cpu, '\0');
    if (a->processes)
        sonde_buf_printf(&c, SONDE_PPROF_PROCESSES "%u%c", a->processes, '\0');
    if (a->verdict)
        sonde_buf_printf(&c, SONDE_PPROF_VERDICT "%s%c", a->verdict, '\0');
    if (w->p->pid > 0)
        sonde_buf_printf(&c, SONDE_PPROF_PID "%d%c", w->p->pid, '\0');
    if (a->cwd)
        sonde_buf_printf(&c, SONDE_PPROF_CWD "%s%c", a->cwd, '\0');
    if (!sonde_buf_ok(&c))
        w->out.failed = 1;
    for (size_t at = 0; sonde_buf_ok(&c) && at < c.len; at += strlen(c.data + at) + 1)
        sonde_pprof_comment(&w->out, c.data + at);
    sonde_buf_free(&c);
}

int sonde_pprof_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                      const sonde_format_opts *o)
{
    (void)s;
    (void)o;
    uint32_t deepest;
    uint32_t *depth = calloc(p->nnodes ? p->nnodes : 1, sizeof *depth);
    if (!depth) {
        b->oom = 1;
        return -1;
    }
    uint64_t frames = count_frames(p, depth, &deepest);
    free(depth);
    if (frames > MAX_FRAMES) {
        snprintf(b->why, sizeof b->why,
                 "the pprof samples would list %llu frames (each sample repeats its stack, and "
                 "the deepest has %u): use -f speedscope or json, which grow with the tree, not "
                 "with its depth", (unsigned long long)frames, deepest);
        return -1;
    }
    int sampled = p->sample_rate > 0;
    static const sonde_pprof_type sampled_types[] = { { "samples", "count" },
                                                      { "cpu", "nanoseconds" } };
    static const sonde_pprof_type traced_types[] = { { "calls", "count" },
                                                     { "time", "nanoseconds" } };
    uint64_t period = sampled ? (uint64_t)llround(1e9 / p->sample_rate) : 1;
    writer w = { .p = p };
    w.function_of = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *w.function_of);
    w.location_of = calloc(p->nnodes ? p->nnodes : 1, sizeof *w.location_of);
    w.mapping_of = calloc(p->nmappings ? p->nmappings : 1, sizeof *w.mapping_of);
    uint64_t *path = malloc(((size_t)deepest + 1) * sizeof *path);
    int rc = sonde_pprof_build_init(&w.out, b, sampled ? sampled_types : traced_types, 2,
                                    sampled ? sampled_types[1] : traced_types[1],
                                    (int64_t)period, sampled ? "cpu" : "time");
    if (!w.function_of || !w.location_of || !w.mapping_of || !path)
        w.out.failed = 1;
    for (uint32_t t = 0; rc == 0 && t < p->nthreads && !w.out.failed; t++)
        put_samples(&w, t, path, period);
    if (rc == 0 && !w.out.failed)
        put_about(&w);
    rc = sonde_pprof_build_finish(&w.out);
    free(w.function_of);
    free(w.location_of);
    free(w.mapping_of);
    free(path);
    if (rc < 0 && sonde_buf_ok(b))
        b->oom = 1; /* the builder ran out of memory on its own */
    return rc;
}
