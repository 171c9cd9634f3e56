/* view.c - sonde view's page; see view.h for what it holds. */
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/u64map.h"
#include "../core/flame_layout.h"
#include "../formats/doc.h"
#include "../formats/json_about.h"
#include "../formats/json_value.h"
#include "../report/mem_plot.h"
#include "view_assets.h"
#include "view_heatmap.h"
#include "view_timeline.h"
#include "../core/time_tree.h"

/* ---- the page around the data ---- */

static void page_begin(sonde_buf *b)
{
    sonde_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                      "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src "
                      "data:\">\n<title>sonde view</title>\n<style>\n");
    sonde_buf_puts(b, sonde_view_css);
    sonde_buf_puts(b, "</style></head>\n<body>\n<header><h1 id=\"title\"></h1>"
                      "<span id=\"about\"></span>\n<nav id=\"tabs\"></nav>\n"
                      "<label title=\"import machinery and sonde's launcher folded into their "
                      "caller\"><input id=\"fold\" type=\"checkbox\" checked> fold imports"
                      "</label>\n<label title=\"only frames of Python files outside the "
                      "interpreter's library (the standard library, site-packages): the "
                      "rest folds into the caller\"><input id=\"mine\" type=\"checkbox\"> "
                      "only my code</label>\n"
                      "<label>process <select id=\"process\"></select></label>\n"
                      "<label>thread <select id=\"thread\"></select></label>\n"
                      "<label title=\"the pictures' widths: time on the CPU, or the GPU "
                      "kernels' time beneath each frame\">weigh <select id=\"weight\">"
                      "<option>CPU time</option><option>GPU time</option></select></label>\n"
                      "<label>search <input id=\"search\" type=\"search\" "
                      "placeholder=\"regular expression\"></label>\n"
                      "<label>filter <input id=\"filter\" type=\"search\" "
                      "placeholder=\"function\"></label>\n"
                      "<label>depth <input id=\"depth\" type=\"number\" min=\"0\"></label>\n"
                      "<label>cutoff % <input id=\"cutoff\" type=\"number\" min=\"0\" "
                      "step=\"0.1\"></label>\n"
                      "<button id=\"savesvg\" type=\"button\">save SVG</button>\n"
                      "<span id=\"found\"></span> <span id=\"status\" class=\"note\"></span>"
                      "</header>\n<div id=\"crumbs\"></div>\n<main><div id=\"view\"></div>"
                      "<aside id=\"side\"></aside></main>\n<div id=\"tip\"></div>\n");
}

static void data_begin(sonde_buf *b, const char *kind, const char *title)
{
    sonde_buf_printf(b, "<script type=\"application/json\" id=\"data\">{\"kind\": \"%s\", "
                        "\"title\": ", kind);
    sonde_buf_json_str(b, title);
}

static void page_end(sonde_buf *b)
{
    sonde_buf_puts(b, "}</script>\n<script>\n");
    sonde_buf_puts(b, sonde_view_js);
    sonde_buf_puts(b, "</script>\n</body></html>\n");
}

/* ---- profiles ---- */

static void put_num(sonde_buf *b, double v)
{
    sonde_buf_printf(b, "%.9g", isfinite(v) ? v : 0.0);
}

/* "files": each file once; "funcs": [name, file's index, line, colour].
 * 0, or -1 on out of memory. */
static int put_funcs(sonde_buf *b, const sonde_profile *p)
{
    sonde_u64map index; /* a file's string id -> its place in "files" */
    sonde_u64map_init(&index);
    uint32_t *file = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof *file), nfiles = 0;
    int rc = file ? 0 : -1;
    sonde_buf_puts(b, ",\n\"files\": [");
    for (uint32_t i = 0; rc == 0 && i < p->nfuncs; i++) {
        uint32_t *slot = sonde_u64map_slot(&index, p->funcs[i].file, nfiles);
        if (!slot) {
            rc = -1;
            break;
        }
        if (*slot == nfiles) {
            sonde_buf_puts(b, nfiles ? ",\n" : "\n");
            sonde_buf_json_str(b, sonde_profile_str(p, p->funcs[i].file));
            nfiles++;
        }
        file[i] = *slot;
    }
    sonde_buf_puts(b, "],\n\"funcs\": [");
    for (uint32_t i = 0; rc == 0 && i < p->nfuncs; i++) {
        const sonde_func *f = &p->funcs[i];
        const char *name = sonde_profile_str(p, f->qualname);
        int r, g, bl;
        sonde_flame_colour(name, f->kind, &r, &g, &bl);
        sonde_buf_puts(b, i ? ",\n[" : "\n[");
        sonde_buf_json_str(b, name);
        sonde_buf_printf(b, ",%u,%d,\"#%02x%02x%02x\"]", file[i], f->line, r, g, bl);
    }
    sonde_buf_puts(b, "]");
    free(file);
    sonde_u64map_free(&index);
    return rc;
}

/* The tree, and where flame_layout.c puts each node (as -f flamegraph). */
static int put_tree(sonde_buf *b, const sonde_time_tree *t, const sonde_profile *p)
{
    sonde_flame_layout l;
    if (sonde_flame_layout_compute(&l, t, p) < 0)
        return -1;
    sonde_buf_puts(b, "[");
    for (uint32_t i = 0; i < t->n; i++) {
        sonde_buf_printf(b, "%s[%d,%u,", i ? ",\n" : "\n", t->nodes[i].func, t->nodes[i].parent);
        put_num(b, t->nodes[i].total);
        sonde_buf_putc(b, ',');
        put_num(b, t->nodes[i].self);
        sonde_buf_putc(b, ',');
        put_num(b, l.x[i]);
        sonde_buf_putc(b, ']');
    }
    sonde_buf_puts(b, "]");
    sonde_flame_layout_free(&l);
    return 0;
}

/* Drops t's nodes of no weight (their descendants have none either), but
 * for the root, keeping the order: parents before children.  0, or -1 on
 * out of memory. */
static int drop_weightless(sonde_time_tree *t)
{
    uint32_t *moved = malloc((t->n ? t->n : 1) * sizeof *moved), kept = 0;
    if (!moved)
        return -1;
    for (uint32_t i = 0; i < t->n; i++) {
        if (i > 0 && !(t->nodes[i].total > 0))
            continue;
        sonde_time_node n = t->nodes[i];
        if (i > 0)
            n.parent = moved[n.parent]; /* a parent weighs at least its child: kept */
        moved[i] = kept;
        t->nodes[kept++] = n;
    }
    t->n = kept;
    free(moved);
    return 0;
}

/* Each thread's own tree, for the thread selector, when there are several
 * and the tree is real: {"name", "tree"} per thread, as p lists them,
 * under `key`; with weighed_only, without the nodes of no weight. */
static int put_thread_trees(sonde_buf *b, const sonde_profile *p, const char *key,
                            int weighed_only)
{
    sonde_buf_printf(b, ",\n\"%s\": [", key);
    for (uint32_t k = 0; k < p->nthreads; k++) {
        sonde_profile one = *p; /* p seen through thread k alone (read only) */
        one.threads = &p->threads[k];
        one.nthreads = 1;
        sonde_time_tree t;
        int rc = sonde_time_tree_from_profile(&t, &one);
        if (rc == 0 && weighed_only)
            rc = drop_weightless(&t);
        if (rc == 0) {
            sonde_buf_puts(b, k ? ",\n{\"name\": " : "\n{\"name\": ");
            sonde_buf_json_str(b, sonde_profile_str(p, p->threads[k].name));
            sonde_buf_puts(b, ", \"tree\": ");
            rc = put_tree(b, &t, p);
            sonde_buf_putc(b, '}');
        }
        sonde_time_tree_free(&t);
        if (rc < 0)
            return -1;
    }
    sonde_buf_puts(b, "]");
    return 0;
}

/* p seen through its GPU time (--torch with a GPU): *view shares p's
 * parts but for its nodes, a copy whose self is each node's kernels'
 * nanoseconds on the device (none but the kernels' own) and whose total is
 * the sum beneath, so that the trees drawn weigh GPU time.  0 (free
 * view->nodes), 1 when p recorded no GPU time (nothing made), or -1 on
 * out of memory. */
static int gpu_view(const sonde_profile *p, sonde_profile *view)
{
    if (!p->figure[SONDE_DEVICE_NS])
        return 1;
    *view = *p;
    view->nodes = malloc(p->nnodes * sizeof *view->nodes);
    if (!view->nodes)
        return -1;
    memcpy(view->nodes, p->nodes, p->nnodes * sizeof *view->nodes);
    for (uint32_t i = 1; i < p->nnodes; i++) {
        int64_t ns = sonde_profile_figure_of(p, SONDE_DEVICE_NS, i);
        view->nodes[i].self = view->nodes[i].total = ns > 0 ? (uint64_t)ns : 0;
    }
    for (uint32_t i = p->nnodes - 1; i >= 1; i--) /* children come after their parents */
        if (view->nodes[i].parent != SONDE_NO_NODE && view->nodes[i].parent < i)
            view->nodes[view->nodes[i].parent].total += view->nodes[i].total;
    view->seconds_per_tick = 1e-9;
    return 0;
}

/* "gpu_tree" (and "gpu_thread_trees" with several threads) when p
 * recorded GPU time.  0, or -1 on out of memory. */
static int put_gpu_trees(sonde_buf *b, const sonde_profile *p)
{
    sonde_profile view;
    int made = gpu_view(p, &view);
    if (made != 0)
        return made < 0 ? -1 : 0;
    sonde_time_tree t;
    int rc = sonde_time_tree_from_profile(&t, &view);
    if (rc == 0)
        rc = drop_weightless(&t);
    if (rc == 0) {
        sonde_buf_puts(b, ",\n\"gpu_tree\": ");
        rc = put_tree(b, &t, &view);
    }
    sonde_time_tree_free(&t);
    if (rc == 0 && view.nthreads > 1)
        rc = put_thread_trees(b, &view, "gpu_thread_trees", 1);
    free(view.nodes);
    return rc;
}

static void put_stats(sonde_buf *b, const sonde_stats *s)
{
    sonde_buf_puts(b, ",\n\"stats\": [");
    int first = 1;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (!fs->present)
            continue;
        sonde_buf_printf(b, "%s[%u,%llu,%llu,", first ? "\n" : ",\n", f,
                         (unsigned long long)fs->ncalls, (unsigned long long)fs->pcalls);
        put_num(b, fs->tottime);
        sonde_buf_putc(b, ',');
        put_num(b, fs->cumtime);
        sonde_buf_putc(b, ']');
        first = 0;
    }
    sonde_buf_puts(b, "],\n\"edges\": [");
    for (uint32_t e = 0; e < s->nedges; e++) {
        const sonde_edge *ed = &s->edges[e];
        sonde_buf_printf(b, "%s[%u,%u,%llu,", e ? ",\n" : "\n", ed->caller, ed->callee,
                         (unsigned long long)ed->ncalls);
        put_num(b, ed->tottime);
        sonde_buf_putc(b, ',');
        put_num(b, ed->cumtime);
        sonde_buf_putc(b, ']');
    }
    sonde_buf_puts(b, "]");
}

static int tree_of(sonde_time_tree *t, const sonde_profile *p, const sonde_stats *s, int has_tree)
{
    return has_tree ? sonde_time_tree_from_profile(t, p) : sonde_time_tree_from_stats(t, s);
}

/* What the header says of how the profile was taken: the sampling rate
 * (0: every call), the process and the threads' names, and what the file
 * says of the run ("run": the object of sonde's JSON "about"). */
static void put_about(sonde_buf *b, const sonde_profile *p)
{
    sonde_buf_puts(b, ",\n\"about\": {\"rate\": ");
    put_num(b, p->sample_rate);
    sonde_buf_printf(b, ", \"pid\": %d, \"threads\": [", p->pid);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (i)
            sonde_buf_putc(b, ',');
        sonde_buf_json_str(b, sonde_profile_str(p, p->threads[i].name));
    }
    sonde_buf_puts(b, "], \"run\": ");
    sonde_json_about_write(b, &p->about, 0);
    sonde_buf_puts(b, "}");
}

/* with_threads: the threads' trees, the timeline and the heatmap too (not
 * on a diff page); site_packages: see sonde_view_profile_write. */
static void put_profile_fields(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                               const sonde_time_tree *t, int has_tree, int with_threads,
                               int site_packages)
{
    sonde_buf_printf(b, ", \"unit\": \"seconds\", \"sampled\": %s, \"exact_tree\": %s",
                     p->sample_rate > 0 ? "true" : "false", has_tree ? "true" : "false");
    put_about(b, p);
    if (put_funcs(b, p) < 0)
        b->oom = 1;
    sonde_buf_puts(b, ",\n\"tree\": ");
    if (put_tree(b, t, p) < 0 || (with_threads && has_tree && p->nthreads > 1 &&
                                  put_thread_trees(b, p, "thread_trees", 0) < 0) ||
        (with_threads && has_tree && put_gpu_trees(b, p) < 0))
        b->oom = 1;
    if (with_threads && (sonde_view_timeline_put(b, p) < 0 ||
                         sonde_view_heatmap_put(b, p, site_packages) < 0))
        b->oom = 1;
    put_stats(b, s);
}

int sonde_view_profile_write(sonde_buf *b, const char *title, const sonde_profile *p,
                       const sonde_stats *s, int has_tree, int site_packages)
{
    sonde_time_tree t;
    if (tree_of(&t, p, s, has_tree) < 0) {
        sonde_time_tree_free(&t);
        return -1;
    }
    page_begin(b);
    data_begin(b, "profile", title);
    put_profile_fields(b, p, s, &t, has_tree, 1, site_packages);
    page_end(b);
    sonde_time_tree_free(&t);
    return sonde_buf_ok(b) ? 0 : -1;
}

/* ---- lines and mem documents ---- */

int sonde_view_document_write(sonde_buf *b, const char *title, const sonde_jtree *t, char *err,
                        size_t errlen)
{
    const sonde_jval *root = &t->vals[t->root];
    const sonde_jval *functions = sonde_json_get(t, root, DOC_FUNCTIONS);
    const char *mode = sonde_json_str(t, sonde_json_get(t, root, DOC_MODE));
    if (!functions || functions->type != SONDE_J_ARR ||
        (strcmp(mode, DOC_MODE_LINES) != 0 && strcmp(mode, DOC_MODE_MEM) != 0)) {
        snprintf(err, errlen, "not a sonde lines or mem profile (no \"mode\" and \"functions\")");
        return -1;
    }
    sonde_buf plot;
    sonde_buf_init(&plot);
    if (strcmp(mode, DOC_MODE_MEM) == 0 && sonde_mem_plot_write(&plot, t, err, errlen) < 0) {
        sonde_buf_free(&plot);
        return -1;
    }
    page_begin(b);
    /* the plot inline, without its XML declaration (this is HTML) */
    const char *svg = plot.data ? strstr(plot.data, "<svg") : NULL;
    if (svg) {
        sonde_buf_puts(b, "<div id=\"memplot\" style=\"display:none\">\n");
        sonde_buf_puts(b, svg);
        sonde_buf_puts(b, "</div>\n");
    }
    data_begin(b, mode, title);
    sonde_buf_puts(b, ", \"doc\": ");
    sonde_json_value_write(b, t, root);
    page_end(b);
    int ok = sonde_buf_ok(&plot);
    sonde_buf_free(&plot);
    if (!ok || !sonde_buf_ok(b)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- diffs ---- */

/* One side of a diff, its nodes named by label ids shared by both sides. */
typedef struct labelled {
    const sonde_profile *p;
    const sonde_time_tree *t;
    uint32_t *label;        /* per function: its label's id */
    sonde_u64map children;  /* parent << 32 | label id -> node */
} labelled;

/* Gives every function of l its label's id in labels.  0, or -1 on out of
 * memory. */
static int name_functions(labelled *l, sonde_strtab *labels)
{
    sonde_buf text;
    sonde_buf_init(&text);
    l->label = malloc((l->p->nfuncs ? l->p->nfuncs : 1) * sizeof *l->label);
    int rc = l->label ? 0 : -1;
    for (uint32_t f = 0; rc == 0 && f < l->p->nfuncs; f++) {
        text.len = 0;
        sonde_diff_func_label(&text, l->p, f);
        int64_t id = sonde_buf_ok(&text) ? sonde_strtab_intern(labels, text.data, text.len) : -1;
        l->label[f] = (uint32_t)id;
        rc = id < 0 ? -1 : 0;
    }
    sonde_buf_free(&text);
    return rc;
}

static uint64_t child_key(const labelled *l, uint32_t parent, uint32_t node)
{
    return (uint64_t)parent << 32 | l->label[l->t->nodes[node].func];
}

static int index_children(labelled *l)
{
    for (uint32_t i = 1; i < l->t->n; i++)
        if (!sonde_u64map_slot(&l->children, child_key(l, l->t->nodes[i].parent, i), i))
            return -1;
    return 0;
}

/* Each node of `after`'s tree: the total of the node of `before` reached
 * by the same path of functions, or 0. */
static double *match_paths(const labelled *before, const labelled *after)
{
    double *base = calloc(after->t->n ? after->t->n : 1, sizeof *base);
    uint32_t *twin = malloc((after->t->n ? after->t->n : 1) * sizeof *twin);
    if (!base || !twin) {
        free(base);
        free(twin);
        return NULL;
    }
    twin[0] = 0;
    base[0] = before->t->n ? before->t->nodes[0].total : 0;
    for (uint32_t i = 1; i < after->t->n; i++) {
        uint32_t up = twin[after->t->nodes[i].parent];
        twin[i] = up == SONDE_U64MAP_NONE ? up
                  : sonde_u64map_get(&before->children, child_key(after, up, i));
        if (twin[i] != SONDE_U64MAP_NONE)
            base[i] = before->t->nodes[twin[i]].total;
    }
    free(twin);
    return base;
}

/* [[function, before, after]]: own time by function, largest change first. */
static void put_changes(sonde_buf *b, const sonde_diff *d)
{
    sonde_buf_puts(b, ",\n\"changes\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        const sonde_change *c = &d->changes[i];
        sonde_buf_puts(b, i ? ",\n[" : "\n[");
        sonde_buf_json_str(b, sonde_diff_label(d, c));
        sonde_buf_putc(b, ',');
        put_num(b, c->before);
        sonde_buf_putc(b, ',');
        put_num(b, c->after);
        sonde_buf_putc(b, ']');
    }
    sonde_buf_puts(b, "]");
}

int sonde_view_diff_write(sonde_buf *b, const char *title, const sonde_view_side *before,
                    const sonde_view_side *after, const sonde_diff *d)
{
    sonde_time_tree tb, ta;
    int rc = -1;
    labelled lb = { .p = before->p, .t = &tb }, la = { .p = after->p, .t = &ta };
    sonde_strtab labels;
    sonde_strtab_init(&labels);
    double *base = NULL;
    int built = tree_of(&tb, before->p, before->s, before->has_tree) == 0;
    built = tree_of(&ta, after->p, after->s, after->has_tree) == 0 && built;
    if (!built || name_functions(&lb, &labels) < 0 || name_functions(&la, &labels) < 0 ||
        index_children(&lb) < 0 || !(base = match_paths(&lb, &la)))
        goto out;
    double max_delta = 0;
    for (uint32_t i = 1; i < ta.n; i++)
        max_delta = fmax(max_delta, fabs(ta.nodes[i].total - base[i]));
    page_begin(b);
    data_begin(b, "diff", title);
    put_profile_fields(b, after->p, after->s, &ta, after->has_tree, 0, 0);
    sonde_buf_puts(b, ",\n\"base\": [");
    for (uint32_t i = 0; i < ta.n; i++) {
        if (i)
            sonde_buf_putc(b, ',');
        put_num(b, base[i]);
    }
    sonde_buf_puts(b, "], \"max_delta\": ");
    put_num(b, max_delta);
    sonde_buf_puts(b, ", \"before_run\": ");
    sonde_json_about_write(b, &before->p->about, 0);
    put_changes(b, d);
    page_end(b);
    rc = sonde_buf_ok(b) ? 0 : -1;
out:
    free(base);
    free(lb.label);
    free(la.label);
    sonde_strtab_free(&labels);
    sonde_u64map_free(&lb.children);
    sonde_time_tree_free(&tb);
    sonde_time_tree_free(&ta);
    return rc;
}
