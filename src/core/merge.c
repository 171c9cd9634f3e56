/* merge.c - profiles of several processes summed into one; see merge.h. */
#include "merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "step_parts.h"

#define PROCESS_PREFIX "process "

void sonde_merge_label(char *out, size_t outlen, int pid, const sonde_about *a,
                       const char *file)
{
    sonde_merge_label_ranked(out, outlen, pid, a, file, -1);
}

void sonde_merge_label_ranked(char *out, size_t outlen, int pid, const sonde_about *a,
                              const char *file, long rank)
{
    char what[84];
    sonde_buf b;
    sonde_buf_init(&b);
    if (a && a->argc)
        sonde_about_command(&b, a);
    const char *text = b.len && sonde_buf_ok(&b) ? b.data : file;
    size_t n = strlen(text);
    if (n > 80) {
        memcpy(what, text, 77);
        memcpy(what + 77, "...", 4);
    } else {
        memcpy(what, text, n + 1);
    }
    for (char *c = what; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    sonde_buf_free(&b);
    if (pid > 0 && rank >= 0)
        snprintf(out, outlen, PROCESS_PREFIX "%d (rank %ld: %s)", pid, rank, what);
    else if (pid > 0)
        snprintf(out, outlen, PROCESS_PREFIX "%d (%s)", pid, what);
    else
        snprintf(out, outlen, PROCESS_PREFIX "%s", what);
}

int sonde_merge_is_process(const sonde_profile *p, uint32_t func)
{
    if (func >= p->nfuncs || p->funcs[func].kind != SONDE_FUNC_C)
        return 0;
    return strncmp(sonde_profile_str(p, p->funcs[func].name), PROCESS_PREFIX,
                   sizeof PROCESS_PREFIX - 1) == 0;
}

static int sampled(const sonde_profile *p, const sonde_stats *s)
{
    return p->sample_rate > 0 || (s && s->sampled);
}

/* 1 when a sampled profile's ticks are CPU time (record's cpu mode: a
 * tick is a nanosecond, not a sampling period). */
static int cpu_weighed(const sonde_profile *p)
{
    return p->sample_rate > 0 && fabs(p->seconds_per_tick * p->sample_rate - 1) > 1e-6;
}

const char *sonde_merge_unit_clash(const sonde_profile *dst, const sonde_stats *ds,
                                   const sonde_profile *src, const sonde_stats *ss,
                                   char *why, size_t whylen)
{
    int a = sampled(dst, ds), b = sampled(src, ss);
    if (a != b)
        snprintf(why, whylen, "is %s and the other %s: calls and samples cannot be summed",
                 a ? "sampled (sonde record)" : "deterministic (every call: sonde run)",
                 b ? "sampled" : "deterministic");
    else if (a && dst->sample_rate > 0 && src->sample_rate > 0 &&
             fabs(dst->sample_rate - src->sample_rate) > 1e-6 * dst->sample_rate)
        snprintf(why, whylen, "is sampled at %g Hz and the other at %g Hz: their samples "
                 "weigh different times", dst->sample_rate, src->sample_rate);
    else if (a && dst->sample_rate > 0 && src->sample_rate > 0 &&
             cpu_weighed(dst) != cpu_weighed(src))
        snprintf(why, whylen, "weighs its samples by %s and the other by %s: CPU time and "
                 "wall time cannot be summed (record both with the same --mode)",
                 cpu_weighed(dst) ? "CPU time (--mode cpu)" : "wall time",
                 cpu_weighed(src) ? "CPU time (--mode cpu)" : "wall time");
    else
        return NULL;
    return why;
}

/* src's function f in dst, through the memo fmap (SONDE_NO_FUNC: not yet
 * looked up); SONDE_NO_FUNC on out of memory. */
static uint32_t dst_func(sonde_profile *dst, const sonde_profile *src, uint32_t *fmap,
                         uint32_t f)
{
    if (fmap[f] == SONDE_NO_FUNC)
        fmap[f] = sonde_profile_func_from(dst, src, f);
    return fmap[f];
}

static uint32_t *func_memo(const sonde_profile *src)
{
    uint32_t *fmap = malloc((src->nfuncs ? src->nfuncs : 1) * sizeof *fmap);
    if (fmap)
        memset(fmap, 0xff, (src->nfuncs ? src->nfuncs : 1) * sizeof *fmap);
    return fmap;
}

/* 1 when every root of src's tree starts with process frames only. */
static int tree_has_processes(const sonde_profile *src)
{
    if (!src->nthreads)
        return 0;
    for (uint32_t t = 0; t < src->nthreads; t++) {
        uint32_t root = src->threads[t].root;
        if (root >= src->nnodes)
            return 0;
        for (uint32_t c = src->nodes[root].first_child; c != SONDE_NO_NODE;
             c = src->nodes[c].next_sibling)
            if (c >= src->nnodes || !sonde_merge_is_process(src, src->nodes[c].func))
                return 0;
    }
    return 1;
}

/* ticks of src in dst's unit. */
static uint64_t in_dst(uint64_t ticks, double scale)
{
    if (scale == 1)
        return ticks;
    double v = (double)ticks * scale + 0.5;
    return v >= 18446744073709551616.0 ? UINT64_MAX : v > 0 ? (uint64_t)v : 0;
}

/* The node figures of src's node n added to dst's node d.  0, or -1. */
static int add_figures(sonde_profile *dst, uint32_t d, const sonde_profile *src, uint32_t n)
{
    for (int w = 0; w < SONDE_NFIGURES; w++) {
        int64_t v = sonde_profile_figure_of(src, (enum sonde_node_figure)w, n);
        if (v == SONDE_NO_FIGURE)
            continue;
        int64_t *slot = sonde_profile_figure(dst, (enum sonde_node_figure)w, d);
        if (!slot)
            return -1;
        *slot = (*slot == SONDE_NO_FIGURE ? 0 : *slot) + v;
    }
    return 0;
}

/* What dst's about says of all its processes: the earliest start, the
 * latest end, the CPU time and processes added up; no command line. */
static void about_add(sonde_profile *dst, const sonde_profile *src, int first)
{
    sonde_about *d = &dst->about;
    const sonde_about *s = &src->about;
    uint32_t procs = s->processes ? s->processes : 1;
    if (first) {
        d->start_ns = s->start_ns;
        d->wall = s->wall;
        d->cpu = s->cpu;
        d->processes = procs;
        return;
    }
    int64_t end_d = d->start_ns && d->wall >= 0 ? d->start_ns + (int64_t)(d->wall * 1e9) : 0;
    int64_t end_s = s->start_ns && s->wall >= 0 ? s->start_ns + (int64_t)(s->wall * 1e9) : 0;
    if (end_d && end_s) {
        int64_t start = d->start_ns < s->start_ns ? d->start_ns : s->start_ns;
        d->wall = (double)((end_d > end_s ? end_d : end_s) - start) / 1e9;
    } else {
        d->wall = -1;
    }
    if (!d->start_ns || !s->start_ns)
        d->start_ns = 0;
    else if (s->start_ns < d->start_ns)
        d->start_ns = s->start_ns;
    d->cpu = d->cpu >= 0 && s->cpu >= 0 ? d->cpu + s->cpu : -1;
    d->processes += procs;
}

/* src's samples into dst's timeline, each at its time since dst's start
 * (when both starts are known; the earlier start becomes dst's), a
 * CPU-weighed sample's weight in dst's ticks (scale). */
static int add_events(sonde_profile *dst, const sonde_profile *src, double scale,
                      const uint32_t *tmap, const uint32_t *nmap, int first)
{
    uint64_t shift = 0;
    if (!first && dst->about.start_ns && src->about.start_ns) {
        if (src->about.start_ns >= dst->about.start_ns) {
            shift = (uint64_t)(src->about.start_ns - dst->about.start_ns);
        } else {
            uint64_t later = (uint64_t)(dst->about.start_ns - src->about.start_ns);
            for (uint64_t i = 0; i < dst->nevents; i++)
                dst->events[i].t_ns += later;
        }
    }
    for (uint64_t i = 0; i < src->nevents; i++) {
        const sonde_sample_event *e = &src->events[i];
        if (e->thread >= src->nthreads || e->node >= src->nnodes || nmap[e->node] == SONDE_NO_NODE)
            continue;
        /* A CPU-weighed sample keeps its weight (never 0: "not recorded"). */
        uint64_t weight = e->weight ? in_dst(e->weight, scale) : 0;
        if (sonde_profile_add_weighted_event(dst, e->t_ns + shift, tmap[e->thread],
                                             nmap[e->node], e->weight && !weight ? 1 : weight) < 0)
            return -1;
    }
    if (src->events_dropped)
        dst->events_dropped = 1;
    return 0;
}

/* src's nodes into dst (nmap: each src node's in dst; thread roots set). */
static int add_nodes(sonde_profile *dst, const sonde_profile *src, uint32_t *fmap,
                     uint32_t *nmap, double scale)
{
    for (uint32_t i = 1; i < src->nnodes; i++) {
        const sonde_node *n = &src->nodes[i];
        if (n->func == SONDE_NO_FUNC || n->func >= src->nfuncs || n->parent >= i ||
            nmap[n->parent] == SONDE_NO_NODE)
            continue; /* a root (mapped already), or a node of no thread's */
        uint32_t f = dst_func(dst, src, fmap, n->func);
        uint32_t d = f == SONDE_NO_FUNC ? SONDE_NO_NODE
                     : sonde_profile_child_for(dst, nmap[n->parent], f, n->line);
        if (d == SONDE_NO_NODE || add_figures(dst, d, src, i) < 0)
            return -1;
        nmap[i] = d;
        dst->nodes[d].calls += n->calls;
        dst->nodes[d].total += in_dst(n->total, scale);
        dst->nodes[d].self += in_dst(n->self, scale);
    }
    return 0;
}

/* src's torch nodes' parts of each step (step_parts.h) into dst's. */
static int add_step_parts(sonde_profile *dst, const sonde_profile *src, const uint32_t *nmap,
                          double scale)
{
    for (uint32_t i = 0; i < src->nstep_parts; i++) {
        const sonde_step_part *part = &src->step_parts[i];
        if (part->node >= src->nnodes || nmap[part->node] == SONDE_NO_NODE)
            continue;
        uint64_t self = in_dst(part->self > 0 ? (uint64_t)part->self : 0, scale);
        if (sonde_step_part_add(dst, nmap[part->node], part->step, part->calls,
                                in_dst(part->total, scale),
                                self > INT64_MAX ? INT64_MAX : (int64_t)self) < 0)
            return -1;
    }
    return 0;
}

/* A thread's time: its root's own and its children's totals (a tracer
 * leaves the root's total 0). */
static uint64_t thread_total(const sonde_profile *src, uint32_t root)
{
    uint64_t total = src->nodes[root].self;
    for (uint32_t c = src->nodes[root].first_child; c != SONDE_NO_NODE && c < src->nnodes;
         c = src->nodes[c].next_sibling)
        total += src->nodes[c].total;
    return total > src->nodes[root].total ? total : src->nodes[root].total;
}

/* The thread of dst that is this one (the same ids and name: the same
 * thread of the same process, seen in another window of time), else a new
 * one; its index, or -1 on out of memory. */
static int64_t same_thread(sonde_profile *dst, const sonde_thread *th, const char *name)
{
    for (uint32_t t = 0; th->native_id && t < dst->nthreads; t++) {
        const sonde_thread *d = &dst->threads[t];
        if (d->ident == th->ident && d->native_id == th->native_id &&
            strcmp(sonde_profile_str(dst, d->name), name) == 0)
            return t;
    }
    return sonde_profile_add_thread(dst, th->ident, th->native_id, name);
}

int sonde_merge_tree(sonde_profile *dst, const sonde_profile *src, const char *label)
{
    int first = dst->nthreads == 0;
    if (first) {
        dst->seconds_per_tick = src->seconds_per_tick;
        dst->sample_rate = src->sample_rate;
    }
    double scale = src->seconds_per_tick / dst->seconds_per_tick;
    int labelled = tree_has_processes(src);
    uint32_t process = labelled ? SONDE_NO_FUNC
                                : sonde_profile_func(dst, "~", 0, label, label, SONDE_FUNC_C);
    uint32_t *fmap = func_memo(src);
    uint32_t *nmap = malloc((src->nnodes ? src->nnodes : 1) * sizeof *nmap);
    uint32_t *tmap = malloc((src->nthreads ? src->nthreads : 1) * sizeof *tmap);
    int rc = fmap && nmap && tmap && (labelled || process != SONDE_NO_FUNC) ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < src->nnodes; i++)
        nmap[i] = SONDE_NO_NODE;
    for (uint32_t t = 0; rc == 0 && t < src->nthreads; t++) {
        const sonde_thread *th = &src->threads[t];
        char name[SONDE_MERGE_LABEL_MAX + 128];
        snprintf(name, sizeof name, labelled ? "%.127s" : "%.127s in %s",
                 sonde_profile_str(src, th->name), label);
        int64_t nt = same_thread(dst, th, name);
        if (nt < 0) {
            rc = -1;
            continue;
        }
        tmap[t] = (uint32_t)nt;
        if (th->root >= src->nnodes)
            continue;
        uint32_t root = dst->threads[nt].root, top = root;
        uint64_t total = in_dst(thread_total(src, th->root), scale);
        dst->nodes[root].total += total;
        if (!labelled) {
            if ((top = sonde_profile_child_for(dst, root, process, 0)) == SONDE_NO_NODE) {
                rc = -1;
                break;
            }
            dst->nodes[top].calls += src->sample_rate > 0 ? 0 : 1;
            dst->nodes[top].total += total;
            dst->nodes[top].self += in_dst(src->nodes[th->root].self, scale);
        }
        nmap[th->root] = top;
    }
    if (rc == 0)
        rc = add_nodes(dst, src, fmap, nmap, scale);
    if (rc == 0)
        rc = add_step_parts(dst, src, nmap, scale);
    if (rc == 0)
        rc = add_events(dst, src, scale, tmap, nmap, first);
    if (rc == 0)
        about_add(dst, src, first);
    free(fmap);
    free(nmap);
    free(tmap);
    return rc;
}

/* Per function of ss, the calls, primitive calls and own time its caller
 * edges account for (malloc'd; NULL on out of memory), and in *callers
 * whether it has any caller edge. */
static sonde_fstat *called(const sonde_stats *ss, uint8_t **callers)
{
    size_t n = ss->nfuncs ? ss->nfuncs : 1;
    sonde_fstat *in = calloc(n, sizeof *in);
    *callers = calloc(n, 1);
    if (!in || !*callers) {
        free(in);
        free(*callers);
        return NULL;
    }
    for (uint32_t e = 0; e < ss->nedges; e++) {
        const sonde_edge *se = &ss->edges[e];
        if (se->callee < ss->nfuncs) {
            in[se->callee].ncalls += se->ncalls;
            in[se->callee].pcalls += se->pcalls;
            in[se->callee].tottime += se->tottime;
            (*callers)[se->callee] = 1;
        }
    }
    return in;
}

/* Whether f is a root of ss: no caller, or calls no caller accounts for. */
static int is_root(const sonde_stats *ss, uint32_t f, const sonde_fstat *in,
                   const uint8_t *callers)
{
    return ss->funcs[f].present && (!callers[f] || ss->funcs[f].ncalls > in[f].ncalls);
}

/* 1 when every root function of ss is a process frame. */
static int stats_have_processes(const sonde_profile *src, const sonde_stats *ss,
                                const sonde_fstat *in, const uint8_t *callers)
{
    int any = 0;
    for (uint32_t f = 0; f < ss->nfuncs; f++) {
        if (!is_root(ss, f, in, callers))
            continue;
        if (!sonde_merge_is_process(src, f))
            return 0;
        any = 1;
    }
    return any;
}

static void add_fstat(sonde_fstat *d, const sonde_fstat *s)
{
    d->ncalls += s->ncalls;
    d->pcalls += s->pcalls;
    d->tottime += s->tottime;
    d->cumtime += s->cumtime;
    d->present = 1;
}

/* The edges from the process frame `process` to src's root functions:
 * the calls of each that no caller edge accounts for, the time it ran as
 * a root (roots).  0, or -1 on out of memory. */
static int add_root_edges(sonde_stats *ds, uint32_t process, const sonde_stats *ss,
                          uint32_t nf, const double *roots, const uint32_t *fmap,
                          const sonde_fstat *in, const uint8_t *callers)
{
    double all = 0;
    for (uint32_t f = 0; f < nf; f++) {
        const sonde_fstat *s = &ss->funcs[f];
        if (!is_root(ss, f, in, callers) || fmap[f] == SONDE_NO_FUNC)
            continue;
        sonde_edge *e = sonde_stats_edge(ds, process, fmap[f]);
        if (!e)
            return -1;
        double share = s->ncalls ? (double)(s->ncalls - in[f].ncalls) / (double)s->ncalls : 1;
        double cum = roots[f] > 0 ? roots[f] : s->cumtime * share;
        e->ncalls += s->ncalls > in[f].ncalls ? s->ncalls - in[f].ncalls : 0;
        e->pcalls += s->pcalls > in[f].pcalls ? s->pcalls - in[f].pcalls : 0;
        e->tottime += s->tottime > in[f].tottime ? s->tottime - in[f].tottime : 0;
        e->cumtime += cum;
        all += cum;
    }
    sonde_fstat *p = &ds->funcs[process];
    p->ncalls += 1;
    p->pcalls += 1;
    p->cumtime += all;
    p->present = 1;
    return 0;
}

int sonde_merge_stats(sonde_profile *dst, sonde_stats *ds, const sonde_profile *src,
                      const sonde_stats *ss, const char *label)
{
    if (dst->nfuncs == 0 && ds->nfuncs == 0) {
        dst->seconds_per_tick = src->seconds_per_tick;
        dst->sample_rate = src->sample_rate;
    }
    if (ss->sampled)
        ds->sampled = 1;
    about_add(dst, src, dst->nfuncs == 0);
    uint8_t *callers = NULL;
    sonde_fstat *in = called(ss, &callers);
    double *roots = sonde_stats_roots(ss);
    uint32_t *fmap = func_memo(src);
    int rc = roots && fmap && in ? 0 : -1;
    uint32_t process = SONDE_NO_FUNC;
    if (rc == 0 && !stats_have_processes(src, ss, in, callers) &&
        (process = sonde_profile_func(dst, "~", 0, label, label, SONDE_FUNC_C)) == SONDE_NO_FUNC)
        rc = -1;
    uint32_t nf = ss->nfuncs < src->nfuncs ? ss->nfuncs : src->nfuncs;
    for (uint32_t f = 0; rc == 0 && f < nf; f++)
        if (ss->funcs[f].present && dst_func(dst, src, fmap, f) == SONDE_NO_FUNC)
            rc = -1;
    for (uint32_t e = 0; rc == 0 && e < ss->nedges; e++) {
        const sonde_edge *se = &ss->edges[e];
        if (se->caller < nf && se->callee < nf &&
            (dst_func(dst, src, fmap, se->caller) == SONDE_NO_FUNC ||
             dst_func(dst, src, fmap, se->callee) == SONDE_NO_FUNC))
            rc = -1;
    }
    if (rc == 0)
        rc = sonde_stats_reserve_funcs(ds, dst->nfuncs);
    for (uint32_t f = 0; rc == 0 && f < nf; f++)
        if (ss->funcs[f].present)
            add_fstat(&ds->funcs[fmap[f]], &ss->funcs[f]);
    for (uint32_t e = 0; rc == 0 && e < ss->nedges; e++) {
        const sonde_edge *se = &ss->edges[e];
        if (se->caller >= nf || se->callee >= nf)
            continue;
        sonde_edge *d = sonde_stats_edge(ds, fmap[se->caller], fmap[se->callee]);
        if (!d) {
            rc = -1;
            break;
        }
        d->ncalls += se->ncalls;
        d->pcalls += se->pcalls;
        d->tottime += se->tottime;
        d->cumtime += se->cumtime;
    }
    if (rc == 0 && process != SONDE_NO_FUNC)
        rc = add_root_edges(ds, process, ss, nf, roots, fmap, in, callers);
    free(in);
    free(callers);
    free(roots);
    free(fmap);
    return rc;
}

int sonde_merge_finish(sonde_profile *dst)
{
    return sonde_profile_sort_events(dst);
}
