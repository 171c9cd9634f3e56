/* json.c - sonde's own JSON profile (documented in docs/formats.md).
 *
 * {"sonde": 1, "mode": "run", ("about": {...}, what was profiled, json_about.h)
 *  "unit": "seconds", ("sample_rate": HZ, when sampled)
 *  "functions": [{"name", "qualname", "file", "line", "kind"}],
 *  "threads": [{"ident", "native_id", "name", "root"}],
 *  "nodes": [[function, parent, calls, total, self(, line)], ...],
 *  ("torch_memory": [[node, bytes], ...], with --torch-memory; with a GPU
 *   "torch_device_memory" likewise, and "torch_device_ns": [[node, ns], ...],
 *   each GPU kernel's time on the device)
 *  ("timeline": {"capped": BOOL, "threads": [{"t_ns": [...], "nodes": [...]
 *   (, "weights": [...])}]}, a sampled profile's samples in time order, one
 *   entry per thread; "weights" where each sample weighed its own time:
 *   record's cpu mode, its CPU nanoseconds)
 *  "stats": [{"function", "ncalls", "pcalls", "tottime", "cumtime",
 *             "callers": [[function, ncalls, pcalls, tottime, cumtime]]}]}
 * Node 0 is a placeholder; a thread's root node has function -1.  A
 * sampled frame's node adds the line it was at, when it knows one. */
#include <stdlib.h>

#include "doc.h"
#include "format.h"
#include "json_about.h"
#include "json_profile.h"

static void put_functions(sonde_buf *b, const sonde_profile *p)
{
    sonde_buf_puts(b, "\"functions\": [");
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        const sonde_func *f = &p->funcs[i];
        sonde_buf_puts(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->name));
        sonde_buf_puts(b, ", \"qualname\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->qualname));
        sonde_buf_puts(b, ", \"file\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->file));
        sonde_buf_printf(b, ", \"line\": %d, \"kind\": \"%s\"}", f->line,
                         sonde_func_kind_name((enum sonde_func_kind)f->kind));
    }
    sonde_buf_puts(b, "],\n");
}

static void put_threads(sonde_buf *b, const sonde_profile *p)
{
    sonde_buf_puts(b, "\"threads\": [");
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const sonde_thread *t = &p->threads[i];
        sonde_buf_printf(b, "%s{\"ident\": %llu, \"native_id\": %llu, \"name\": ",
                         i ? ", " : "", (unsigned long long)t->ident,
                         (unsigned long long)t->native_id);
        sonde_buf_json_str(b, sonde_profile_str(p, t->name));
        sonde_buf_printf(b, ", \"root\": %u}", t->root);
    }
    sonde_buf_puts(b, "],\n");
}

static void put_nodes(sonde_buf *b, const sonde_profile *p)
{
    sonde_buf_puts(b, "\"nodes\": [");
    for (uint32_t i = 0; i < p->nnodes; i++) {
        const sonde_node *n = &p->nodes[i];
        long long func = n->func == SONDE_NO_FUNC ? -1 : (long long)n->func;
        sonde_buf_printf(b, "%s[%lld, %u, %llu, ", i ? ",\n  " : "\n  ", func, n->parent,
                         (unsigned long long)n->calls);
        sonde_buf_num(b, (double)n->total * p->seconds_per_tick);
        sonde_buf_puts(b, ", ");
        sonde_buf_num(b, (double)n->self * p->seconds_per_tick);
        if (n->line > 0)
            sonde_buf_printf(b, ", %d", n->line);
        sonde_buf_putc(b, ']');
    }
    sonde_buf_puts(b, "],\n");
}

/* Each figure recorded: the nodes that have it, with it. */
static void put_figures(sonde_buf *b, const sonde_profile *p)
{
    for (int which = 0; which < SONDE_NFIGURES; which++) {
        if (!p->figure[which])
            continue;
        sonde_buf_printf(b, "\"%s\": [", sonde_json_figure_keys[which]);
        int first = 1;
        for (uint32_t i = 0; i < p->nfigure[which] && i < p->nnodes; i++) {
            if (p->figure[which][i] == SONDE_NO_FIGURE)
                continue;
            sonde_buf_printf(b, "%s[%u, %lld]", first ? "" : ", ", i,
                             (long long)p->figure[which][i]);
            first = 0;
        }
        sonde_buf_puts(b, "],\n");
    }
}

/* The torch nodes' parts of each step (SONDE_JSON_STEP_PARTS), times in
 * seconds. */
static void put_step_parts(sonde_buf *b, const sonde_profile *p)
{
    if (!p->nstep_parts)
        return;
    sonde_buf_puts(b, "\"" SONDE_JSON_STEP_PARTS "\": [");
    for (uint32_t i = 0; i < p->nstep_parts; i++) {
        const sonde_step_part *part = &p->step_parts[i];
        sonde_buf_printf(b, "%s[%u, %lld, %llu, ", i ? ",\n  " : "\n  ", part->node,
                         part->step == SONDE_NO_STEP ? -1LL : (long long)part->step,
                         (unsigned long long)part->calls);
        sonde_buf_num(b, (double)part->total * p->seconds_per_tick);
        sonde_buf_puts(b, ", ");
        sonde_buf_num(b, (double)(part->self > 0 ? part->self : 0) * p->seconds_per_tick);
        sonde_buf_putc(b, ']');
    }
    sonde_buf_puts(b, "],\n");
}

/* The timeline of a sampled profile: for each thread (as "threads" lists
 * them) its samples in time order as lists of one length, "t_ns" (the
 * first sample's time since the recording began, then each one's distance
 * from the one before), "nodes" (the innermost frame's node, which names
 * the stack) and, when its samples say what they weighed, "weights" (what
 * each added to its stack, in ns: record's cpu mode weighs CPU time).  "capped": the recording reached
 * SONDE_MAX_SAMPLE_EVENTS and left the later samples out of the timeline
 * (the tree counts them). */
static void put_timeline(sonde_buf *b, const sonde_profile *p)
{
    uint64_t *start;
    uint32_t *order;
    if (!p->nevents || !p->nthreads)
        return;
    if (sonde_profile_events_by_thread(p, &start, &order) < 0) {
        b->oom = 1;
        return;
    }
    sonde_buf_printf(b, "\"timeline\": {\"capped\": %s, \"threads\": [",
                     p->events_dropped ? "true" : "false");
    for (uint32_t t = 0; t < p->nthreads; t++) {
        uint64_t last = 0;
        int weighed = start[t] < start[t + 1];
        sonde_buf_puts(b, t ? ",\n  {\"t_ns\": [" : "\n  {\"t_ns\": [");
        for (uint64_t k = start[t]; k < start[t + 1]; k++) {
            uint64_t at = p->events[order[k]].t_ns;
            sonde_buf_printf(b, "%s%llu", k > start[t] ? "," : "",
                             (unsigned long long)(at >= last ? at - last : 0));
            last = at > last ? at : last;
            weighed &= p->events[order[k]].weight > 0;
        }
        sonde_buf_puts(b, "], \"nodes\": [");
        for (uint64_t k = start[t]; k < start[t + 1]; k++)
            sonde_buf_printf(b, "%s%u", k > start[t] ? "," : "", p->events[order[k]].node);
        if (weighed) {
            sonde_buf_puts(b, "], \"weights\": [");
            for (uint64_t k = start[t]; k < start[t + 1]; k++)
                sonde_buf_printf(b, "%s%.0f", k > start[t] ? "," : "",
                                 (double)p->events[order[k]].weight * p->seconds_per_tick * 1e9);
        }
        sonde_buf_puts(b, "]}");
    }
    sonde_buf_puts(b, "]},\n");
    free(start);
    free(order);
}

static void put_stats(sonde_buf *b, const sonde_stats *s)
{
    uint32_t *start, *order;
    if (sonde_stats_group_edges(s, 0, &start, &order) < 0) {
        b->oom = 1;
        return;
    }
    sonde_buf_puts(b, "\"stats\": [");
    int first = 1;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (!fs->present)
            continue;
        sonde_buf_printf(b, "%s{\"function\": %u, \"ncalls\": %llu, \"pcalls\": %llu, "
                         "\"tottime\": ", first ? "\n  " : ",\n  ", f,
                         (unsigned long long)fs->ncalls, (unsigned long long)fs->pcalls);
        sonde_buf_num(b, fs->tottime);
        sonde_buf_puts(b, ", \"cumtime\": ");
        sonde_buf_num(b, fs->cumtime);
        sonde_buf_puts(b, ", \"callers\": [");
        first = 0;
        int any = 0;
        for (uint32_t i = start[f]; i < start[f + 1]; i++) {
            const sonde_edge *ed = &s->edges[order[i]];
            sonde_buf_printf(b, "%s[%u, %llu, %llu, ", any ? ", " : "", ed->caller,
                             (unsigned long long)ed->ncalls, (unsigned long long)ed->pcalls);
            sonde_buf_num(b, ed->tottime);
            sonde_buf_puts(b, ", ");
            sonde_buf_num(b, ed->cumtime);
            sonde_buf_putc(b, ']');
            any = 1;
        }
        sonde_buf_puts(b, "]}");
    }
    sonde_buf_puts(b, "]\n");
    free(start);
    free(order);
}

int sonde_json_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                     const sonde_format_opts *o)
{
    (void)o;
    sonde_doc_open(b, DOC_MODE_RUN);
    if (sonde_about_known(&p->about) || p->pid > 0) {
        sonde_buf_puts(b, ",\n" DOC_KEY(DOC_ABOUT));
        sonde_json_about_write(b, &p->about, p->pid);
    }
    sonde_buf_puts(b, ", \"unit\": \"seconds\",\n");
    if (p->sample_rate > 0) {
        sonde_buf_puts(b, "\"sample_rate\": ");
        sonde_buf_num(b, p->sample_rate);
        sonde_buf_puts(b, ",\n");
    }
    put_functions(b, p);
    put_threads(b, p);
    put_nodes(b, p);
    put_figures(b, p);
    put_step_parts(b, p);
    if (p->sample_rate > 0)
        put_timeline(b, p);
    put_stats(b, s);
    sonde_buf_puts(b, "}\n");
    return sonde_buf_ok(b) ? 0 : -1;
}
