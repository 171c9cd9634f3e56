/* json_profile.c - sonde's JSON profile back into the model; see
 * json_profile.h.  Times come back as nanosecond ticks. */
#include "json_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/step_parts.h"
#include "doc.h"
#include "json_about.h"

int sonde_json_profile_is(const sonde_jtree *t)
{
    const sonde_jval *root = &t->vals[t->root];
    return root->type == SONDE_J_OBJ &&
           strcmp(sonde_json_str(t, sonde_json_get(t, root, DOC_MODE)), DOC_MODE_RUN) == 0 &&
           sonde_json_get(t, root, "nodes") != NULL;
}

static double item_num(const sonde_jtree *t, const sonde_jval *arr, uint32_t i)
{
    if (!arr || arr->type != SONDE_J_ARR || i >= arr->len)
        return -1;
    const sonde_jval *v = sonde_json_item(t, arr, i);
    return v->type == SONDE_J_NUM ? v->num : -1;
}

static int read_functions(const sonde_jtree *t, const sonde_jval *fs, sonde_profile *p,
                          char *err, size_t errlen)
{
    for (uint32_t i = 0; i < fs->len; i++) {
        const sonde_jval *f = sonde_json_item(t, fs, i);
        const char *name = sonde_json_str(t, sonde_json_get(t, f, "name"));
        const char *qualname = sonde_json_str(t, sonde_json_get(t, f, "qualname"));
        const char *kind = sonde_json_str(t, sonde_json_get(t, f, "kind"));
        uint32_t id = sonde_profile_func(p, sonde_json_str(t, sonde_json_get(t, f, "file")),
                                         (int32_t)sonde_num_to_int(sonde_json_num(t, f, "line", 0),
                                                                   INT32_MIN, INT32_MAX),
                                         name,
                                         *qualname ? qualname : name,
                                         sonde_func_kind_named(kind));
        if (id == SONDE_NO_FUNC) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (id != i) {
            snprintf(err, errlen, "function %u repeats function %u", i, id);
            return -1;
        }
    }
    return 0;
}

/* A figure's list (absent, or [[node, value], ...], under key) into p's
 * figure, the file's nodes found in p through at (nnodes of them).  0, or
 * -1. */
static int read_figure(const sonde_jtree *t, const sonde_jval *list, const char *key,
                       enum sonde_node_figure which, const uint32_t *at, uint32_t nnodes,
                       sonde_profile *p, char *err, size_t errlen)
{
    if (!list)
        return 0;
    for (uint32_t i = 0; i < (list->type == SONDE_J_ARR ? list->len : 0); i++) {
        const sonde_jval *e = sonde_json_item(t, list, i);
        double node = item_num(t, e, 0), value = item_num(t, e, 1);
        if (e->type != SONDE_J_ARR || e->len != 2 ||
            !(node >= 1 && node < nnodes && at[(uint32_t)node]) ||
            !(value >= -9e18 && value <= 9e18)) {
            snprintf(err, errlen, "\"%s\" entry %u names no node or no number", key, i);
            return -1;
        }
        int64_t *m = sonde_profile_figure(p, which, at[(uint32_t)node]);
        if (!m) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        *m = (*m == SONDE_NO_FIGURE ? 0 : *m) + (int64_t)value;
    }
    if (list->type != SONDE_J_ARR) {
        snprintf(err, errlen, "\"%s\" is not a list", key);
        return -1;
    }
    return 0;
}

const char *const sonde_json_figure_keys[SONDE_NFIGURES] = {
    [SONDE_CPU_MEM] = "torch_memory", [SONDE_DEVICE_MEM] = "torch_device_memory",
    [SONDE_DEVICE_NS] = "torch_device_ns",
};

/* The figures of torch's nodes.  0, or -1. */
static int read_figures(const sonde_jtree *t, const sonde_jval *root, const uint32_t *at,
                        uint32_t nnodes, sonde_profile *p, char *err, size_t errlen)
{
    for (int which = 0; which < SONDE_NFIGURES; which++) {
        const char *key = sonde_json_figure_keys[which];
        if (read_figure(t, sonde_json_get(t, root, key), key, (enum sonde_node_figure)which, at,
                        nnodes, p, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* One thread's samples of "timeline" (th: {"t_ns": [...], "nodes": [...]})
 * into p's events.  0, or -1 with a message. */
static int read_samples(const sonde_jtree *t, const sonde_jval *th, uint32_t thread,
                        const uint32_t *at, uint32_t nnodes, sonde_profile *p, char *err,
                        size_t errlen)
{
    const sonde_jval *ts = sonde_json_get(t, th, "t_ns"), *ns = sonde_json_get(t, th, "nodes");
    const sonde_jval *ws = sonde_json_get(t, th, "weights");
    if (!ts || !ns || ts->type != SONDE_J_ARR || ns->type != SONDE_J_ARR || ts->len != ns->len ||
        (ws && (ws->type != SONDE_J_ARR || ws->len != ts->len))) {
        snprintf(err, errlen, "\"timeline\" thread %u has no \"t_ns\" and \"nodes\" lists "
                 "(and \"weights\", when it has one) of one length", thread);
        return -1;
    }
    uint64_t now = 0;
    for (uint32_t i = 0; i < ts->len; i++) {
        double dt = item_num(t, ts, i), node = item_num(t, ns, i);
        if (!(node >= 1 && node < nnodes && at[(uint32_t)node] &&
              p->nodes[at[(uint32_t)node]].func != SONDE_NO_FUNC) || !(dt >= 0 && dt < 1e18)) {
            snprintf(err, errlen, "\"timeline\" sample %u of thread %u names no frame's node "
                     "or no time", i, thread);
            return -1;
        }
        double w = ws ? item_num(t, ws, i) : 0;
        if (!(w >= 0 && w < 1e18)) {
            snprintf(err, errlen, "\"timeline\" sample %u of thread %u has no weight", i, thread);
            return -1;
        }
        now += (uint64_t)dt;
        if (sonde_profile_add_weighted_event(p, now, thread, at[(uint32_t)node],
                                             (uint64_t)(w / (p->seconds_per_tick * 1e9) + 0.5)) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* 1 when a thread of the timeline weighs its samples ("weights", in ns:
 * the tree's ticks are then nanoseconds too, as record's cpu mode counts). */
static int timeline_weighed(const sonde_jtree *t, const sonde_jval *root)
{
    const sonde_jval *threads = sonde_json_get(t, sonde_json_get(t, root, "timeline"), "threads");
    for (uint32_t k = 0; threads && threads->type == SONDE_J_ARR && k < threads->len; k++)
        if (sonde_json_get(t, sonde_json_item(t, threads, k), "weights"))
            return 1;
    return 0;
}

/* "timeline" (absent, or {"capped", "threads": [...]}, json.c) into
 * p->events, in time order.  0, or -1 with a message. */
static int read_timeline(const sonde_jtree *t, const sonde_jval *tl, const uint32_t *at,
                         uint32_t nnodes, sonde_profile *p, char *err, size_t errlen)
{
    if (!tl)
        return 0;
    const sonde_jval *threads = sonde_json_get(t, tl, "threads");
    if (tl->type != SONDE_J_OBJ || !threads || threads->type != SONDE_J_ARR ||
        threads->len > p->nthreads) {
        snprintf(err, errlen, "\"timeline\" has no \"threads\" list of at most one entry a "
                 "thread");
        return -1;
    }
    for (uint32_t k = 0; k < threads->len; k++)
        if (read_samples(t, sonde_json_item(t, threads, k), k, at, nnodes, p, err, errlen) < 0)
            return -1;
    const sonde_jval *capped = sonde_json_get(t, tl, "capped");
    p->events_dropped |= capped && capped->type == SONDE_J_BOOL && capped->num;
    /* each thread's samples follow the last thread's: all of them in time
     * order again, as the sampler appends them */
    if (sonde_profile_sort_events(p) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* SONDE_JSON_STEP_PARTS (absent, or a list) into p's step parts, the
 * file's nodes found in p through at (nnodes of them); times of at most
 * 1e9 seconds.  0, or -1. */
static int read_step_parts(const sonde_jtree *t, const sonde_jval *list, const uint32_t *at,
                           uint32_t nnodes, double ticks_per_second, sonde_profile *p, char *err,
                           size_t errlen)
{
    if (list && list->type != SONDE_J_ARR) {
        snprintf(err, errlen, "\"%s\" is not a list", SONDE_JSON_STEP_PARTS);
        return -1;
    }
    for (uint32_t i = 0; list && i < list->len; i++) {
        const sonde_jval *e = sonde_json_item(t, list, i);
        double node = item_num(t, e, 0), calls = item_num(t, e, 2), total = item_num(t, e, 3),
               self = item_num(t, e, 4);
        const sonde_jval *step = e->type == SONDE_J_ARR && e->len == 5 ? sonde_json_item(t, e, 1)
                                                                      : NULL;
        double number = step && step->type == SONDE_J_NUM ? step->num : -2;
        if (!step || !(node >= 1 && node < nnodes && at[(uint32_t)node]) ||
            !(number == -1 || (number >= 0 && number < SONDE_NO_STEP && number == floor(number))) ||
            !(calls >= 0 && total >= 0 && total <= 1e9 && self >= 0 && self <= 1e9)) {
            snprintf(err, errlen, "\"%s\" entry %u is not [node, step, calls, total, self]",
                     SONDE_JSON_STEP_PARTS, i);
            return -1;
        }
        if (sonde_step_part_add(p, at[(uint32_t)node],
                                number < 0 ? SONDE_NO_STEP : (uint32_t)number,
                                sonde_num_to_count(calls),
                                sonde_num_to_count(total * ticks_per_second + 0.5),
                                (int64_t)sonde_num_to_count(self * ticks_per_second + 0.5)) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

int sonde_json_profile_read(const sonde_jtree *t, sonde_profile *p, char *err, size_t errlen)
{
    const sonde_jval *root = &t->vals[t->root];
    const sonde_jval *fs = sonde_json_get(t, root, "functions");
    const sonde_jval *threads = sonde_json_get(t, root, "threads");
    const sonde_jval *nodes = sonde_json_get(t, root, "nodes");
    if (!fs || fs->type != SONDE_J_ARR || !threads || threads->type != SONDE_J_ARR || !nodes ||
        nodes->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no \"functions\", \"threads\" and \"nodes\" lists");
        return -1;
    }
    if (read_functions(t, fs, p, err, errlen) < 0 ||
        sonde_json_about_read(t, root, &p->about, &p->pid, err, errlen) < 0)
        return -1;
    /* A sampled profile counts in samples, as the sampler did (at a rate
     * sonde record takes: 1 to 100000 Hz); the rest in nanoseconds. */
    double rate = sonde_json_num(t, root, "sample_rate", 0);
    if (sonde_json_get(t, root, "sample_rate") && !(rate >= 1 && rate <= 100000)) {
        snprintf(err, errlen, "\"sample_rate\" is not a rate from 1 to 100000 per second");
        return -1;
    }
    p->sample_rate = rate;
    p->seconds_per_tick = p->sample_rate > 0 && !timeline_weighed(t, root) ? 1.0 / p->sample_rate
                                                                            : 1e-9;
    double ticks_per_second = 1.0 / p->seconds_per_tick;
    /* where each node of the file went in p */
    uint32_t *at = calloc(nodes->len ? nodes->len : 1, sizeof *at);
    if (!at) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < threads->len; i++) {
        const sonde_jval *th = sonde_json_item(t, threads, i);
        double r = sonde_json_num(t, th, "root", -1);
        int64_t k = sonde_profile_add_thread(p, sonde_num_to_count(sonde_json_num(t, th, "ident", 0)),
                                             sonde_num_to_count(sonde_json_num(t, th, "native_id", 0)),
                                             sonde_json_str(t, sonde_json_get(t, th, "name")));
        if (k < 0 || !(r >= 1 && r < nodes->len)) {
            snprintf(err, errlen, k < 0 ? "out of memory" : "thread %u has no root node", i);
            rc = -1;
        } else {
            at[(uint32_t)r] = p->threads[k].root;
        }
    }
    for (uint32_t i = 1; rc == 0 && i < nodes->len; i++) {
        const sonde_jval *n = sonde_json_item(t, nodes, i);
        double func = item_num(t, n, 0), parent = item_num(t, n, 1);
        if (func == -1 && at[i])
            continue; /* a thread's root */
        if (!(func >= 0 && func < p->nfuncs && parent >= 1 && parent < i && at[(uint32_t)parent])) {
            snprintf(err, errlen, "node %u names a function or parent that does not exist", i);
            rc = -1;
            break;
        }
        double line = item_num(t, n, 5);
        int32_t at_line = line >= 1 && line <= INT32_MAX ? (int32_t)line : 0;
        uint32_t k = sonde_profile_child_for(p, at[(uint32_t)parent], (uint32_t)func, at_line);
        if (k == SONDE_NO_NODE) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        at[i] = k;
        double calls = item_num(t, n, 2), total = item_num(t, n, 3), self = item_num(t, n, 4);
        p->nodes[k].calls += sonde_num_to_count(calls);
        p->nodes[k].total += sonde_num_to_count(total * ticks_per_second + 0.5);
        p->nodes[k].self += sonde_num_to_count(self * ticks_per_second + 0.5);
    }
    if (rc == 0)
        rc = read_figures(t, root, at, nodes->len, p, err, errlen);
    if (rc == 0)
        rc = read_step_parts(t, sonde_json_get(t, root, SONDE_JSON_STEP_PARTS), at, nodes->len,
                             ticks_per_second, p, err, errlen);
    if (rc == 0)
        rc = read_timeline(t, sonde_json_get(t, root, "timeline"), at, nodes->len, p, err,
                           errlen);
    free(at);
    return rc;
}

int sonde_json_stats_read(const sonde_jtree *t, const sonde_profile *p, sonde_stats *s,
                          char *err, size_t errlen)
{
    const sonde_jval *stats = sonde_json_get(t, &t->vals[t->root], "stats");
    if (!stats || stats->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no call tree and no \"stats\" list");
        return -1;
    }
    if (sonde_stats_reserve_funcs(s, p->nfuncs) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < stats->len; i++) {
        const sonde_jval *e = sonde_json_item(t, stats, i);
        double f = sonde_json_num(t, e, "function", -1);
        if (!(f >= 0 && f < p->nfuncs)) {
            snprintf(err, errlen, "stats entry %u names a function that does not exist", i);
            return -1;
        }
        sonde_fstat *fs = &s->funcs[(uint32_t)f];
        fs->present = 1;
        fs->ncalls = sonde_num_to_count(sonde_json_num(t, e, "ncalls", 0));
        fs->pcalls = sonde_num_to_count(sonde_json_num(t, e, "pcalls", 0));
        fs->tottime = fmax(0, sonde_json_num(t, e, "tottime", 0));
        fs->cumtime = fmax(0, sonde_json_num(t, e, "cumtime", 0));
        const sonde_jval *callers = sonde_json_get(t, e, "callers");
        for (uint32_t k = 0; callers && callers->type == SONDE_J_ARR && k < callers->len; k++) {
            const sonde_jval *c = sonde_json_item(t, callers, k);
            double caller = item_num(t, c, 0);
            if (!(caller >= 0 && caller < p->nfuncs)) {
                snprintf(err, errlen, "a caller of function %u does not exist", (uint32_t)f);
                return -1;
            }
            sonde_edge *ed = sonde_stats_edge(s, (uint32_t)caller, (uint32_t)f);
            if (!ed) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            ed->ncalls = sonde_num_to_count(item_num(t, c, 1));
            ed->pcalls = sonde_num_to_count(item_num(t, c, 2));
            ed->tottime = fmax(0, item_num(t, c, 3));
            ed->cumtime = fmax(0, item_num(t, c, 4));
        }
    }
    return 0;
}
