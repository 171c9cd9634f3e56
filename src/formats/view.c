/* view.c - sonde view's page; see view.h for what it holds. */
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/u64map.h"
#include "flame_layout.h"
#include "mem_plot.h"
#include "view_assets.h"
#include "view_tree.h"

/* ---- the page around the data ---- */

static void page_begin(sonde_buf *b)
{
    sonde_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                      "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src "
                      "data:\">\n<title>sonde view</title>\n<style>\n");
    sonde_buf_puts(b, sonde_view_css);
    sonde_buf_puts(b, "</style></head>\n<body>\n<header><h1 id=\"title\"></h1>"
                      "<nav id=\"tabs\"></nav>\n"
                      "<label>search <input id=\"search\" type=\"search\" "
                      "placeholder=\"regular expression\"></label>\n"
                      "<label>filter <input id=\"filter\" type=\"search\" "
                      "placeholder=\"function\"></label>\n"
                      "<label>depth <input id=\"depth\" type=\"number\" min=\"0\"></label>\n"
                      "<label>cutoff % <input id=\"cutoff\" type=\"number\" min=\"0\" "
                      "step=\"0.1\"></label>\n"
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

static void put_funcs(sonde_buf *b, const sonde_profile *p)
{
    sonde_buf_puts(b, ",\n\"funcs\": [");
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        const sonde_func *f = &p->funcs[i];
        const char *name = sonde_profile_str(p, f->qualname);
        int r, g, bl;
        flame_colour(name, &r, &g, &bl);
        sonde_buf_puts(b, i ? ",\n[" : "\n[");
        sonde_buf_json_str(b, name);
        sonde_buf_putc(b, ',');
        sonde_buf_json_str(b, sonde_profile_str(p, f->file));
        sonde_buf_printf(b, ",%d,\"#%02x%02x%02x\"]", f->line, r, g, bl);
    }
    sonde_buf_puts(b, "]");
}

/* The tree, and where flame_layout.c puts each node (as -f flamegraph). */
static int put_tree(sonde_buf *b, const view_tree *t, const sonde_profile *p)
{
    flame_layout l;
    if (flame_layout_of(&l, t, p) < 0)
        return -1;
    sonde_buf_puts(b, ",\n\"tree\": [");
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
    flame_layout_free(&l);
    return 0;
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

static int tree_of(view_tree *t, const sonde_profile *p, const sonde_stats *s, int has_tree)
{
    return has_tree ? view_tree_from_profile(t, p) : view_tree_from_stats(t, s);
}

static void put_profile_fields(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                               const view_tree *t, int has_tree)
{
    sonde_buf_printf(b, ", \"unit\": \"seconds\", \"sampled\": %s, \"exact_tree\": %s",
                     p->sample_rate > 0 ? "true" : "false", has_tree ? "true" : "false");
    put_funcs(b, p);
    if (put_tree(b, t, p) < 0)
        b->oom = 1;
    put_stats(b, s);
}

int sonde_view_profile(sonde_buf *b, const char *title, const sonde_profile *p,
                       const sonde_stats *s, int has_tree)
{
    view_tree t;
    if (tree_of(&t, p, s, has_tree) < 0) {
        view_tree_free(&t);
        return -1;
    }
    page_begin(b);
    data_begin(b, "profile", title);
    put_profile_fields(b, p, s, &t, has_tree);
    page_end(b);
    view_tree_free(&t);
    return sonde_buf_ok(b) ? 0 : -1;
}

/* ---- lines and mem documents ---- */

/* Writes value v of t again as JSON (strings through the escaping writer). */
static void put_value(sonde_buf *b, const sonde_jtree *t, const sonde_jval *v)
{
    switch (v->type) {
    case SONDE_J_NULL: sonde_buf_puts(b, "null"); break;
    case SONDE_J_BOOL: sonde_buf_puts(b, v->num ? "true" : "false"); break;
    case SONDE_J_NUM: put_num(b, v->num); break;
    case SONDE_J_STR: sonde_buf_json_str(b, sonde_json_str(t, v)); break;
    case SONDE_J_ARR:
        sonde_buf_putc(b, '[');
        for (uint32_t i = 0; i < v->len; i++) {
            if (i)
                sonde_buf_putc(b, ',');
            put_value(b, t, sonde_json_item(t, v, i));
        }
        sonde_buf_putc(b, ']');
        break;
    case SONDE_J_OBJ:
        sonde_buf_putc(b, '{');
        for (uint32_t i = 0; i < v->len; i++) {
            if (i)
                sonde_buf_putc(b, ',');
            put_value(b, t, &t->vals[t->items[v->off + 2 * i]]);
            sonde_buf_putc(b, ':');
            put_value(b, t, &t->vals[t->items[v->off + 2 * i + 1]]);
        }
        sonde_buf_putc(b, '}');
        break;
    }
}

int sonde_view_document(sonde_buf *b, const char *title, const sonde_jtree *t, char *err,
                        size_t errlen)
{
    const sonde_jval *root = &t->vals[t->root];
    const sonde_jval *functions = sonde_json_get(t, root, "functions");
    const char *mode = sonde_json_str(t, sonde_json_get(t, root, "mode"));
    if (!functions || functions->type != SONDE_J_ARR ||
        (strcmp(mode, "lines") != 0 && strcmp(mode, "mem") != 0)) {
        snprintf(err, errlen, "not a sonde lines or mem profile (no \"mode\" and \"functions\")");
        return -1;
    }
    sonde_buf plot;
    sonde_buf_init(&plot);
    if (strcmp(mode, "mem") == 0 && sonde_mem_plot(&plot, t, err, errlen) < 0) {
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
    put_value(b, t, root);
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

/* A key for a function label: its characters hashed (FNV-1a). */
static uint32_t label_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

typedef struct labelled {
    const sonde_profile *p;
    const view_tree *t;
    sonde_u64map children;  /* parent << 32 | label hash -> node */
} labelled;

static void label_of(const labelled *l, uint32_t node, char *out, size_t len)
{
    if (l->t->nodes[node].func < 0)
        snprintf(out, len, "(root)");
    else
        view_func_label(l->p, (uint32_t)l->t->nodes[node].func, out, len);
}

static int index_children(labelled *l)
{
    char label[512];
    sonde_u64map_init(&l->children);
    for (uint32_t i = 1; i < l->t->n; i++) {
        label_of(l, i, label, sizeof label);
        uint64_t key = (uint64_t)l->t->nodes[i].parent << 32 | label_hash(label);
        if (!sonde_u64map_slot(&l->children, key, i))
            return -1;
    }
    return 0;
}

/* Each node of `after`'s tree: the total of the node of `before` reached
 * by the same path of functions, or 0. */
static double *match_paths(const labelled *before, const labelled *after)
{
    double *base = calloc(after->t->n ? after->t->n : 1, sizeof *base);
    uint32_t *twin = malloc((after->t->n ? after->t->n : 1) * sizeof *twin);
    char label[512], other[512];
    if (!base || !twin) {
        free(base);
        free(twin);
        return NULL;
    }
    twin[0] = 0;
    base[0] = before->t->n ? before->t->nodes[0].total : 0;
    for (uint32_t i = 1; i < after->t->n; i++) {
        uint32_t up = twin[after->t->nodes[i].parent];
        twin[i] = SONDE_U64MAP_NONE;
        if (up == SONDE_U64MAP_NONE)
            continue;
        label_of(after, i, label, sizeof label);
        uint32_t j = sonde_u64map_get(&before->children, (uint64_t)up << 32 | label_hash(label));
        if (j != SONDE_U64MAP_NONE) {
            label_of(before, j, other, sizeof other);
            if (strcmp(label, other) == 0) {
                twin[i] = j;
                base[i] = before->t->nodes[j].total;
            }
        }
    }
    free(twin);
    return base;
}

/* [[function, before, after]]: own time by function, largest change first. */
static void put_changes(sonde_buf *b, const sonde_change *c, uint32_t n)
{
    sonde_buf_puts(b, ",\n\"changes\": [");
    for (uint32_t i = 0; i < n; i++) {
        sonde_buf_puts(b, i ? ",\n[" : "\n[");
        sonde_buf_json_str(b, c[i].label);
        sonde_buf_putc(b, ',');
        put_num(b, c[i].before);
        sonde_buf_putc(b, ',');
        put_num(b, c[i].after);
        sonde_buf_putc(b, ']');
    }
    sonde_buf_puts(b, "]");
}

int sonde_view_diff(sonde_buf *b, const char *title, const sonde_view_side *before,
                    const sonde_view_side *after, const sonde_change *changes, uint32_t nchanges)
{
    view_tree tb, ta;
    int rc = -1;
    labelled lb = { before->p, &tb, { 0 } }, la = { after->p, &ta, { 0 } };
    double *base = NULL;
    int built = tree_of(&tb, before->p, before->s, before->has_tree) == 0;
    built = tree_of(&ta, after->p, after->s, after->has_tree) == 0 && built;
    if (!built || index_children(&lb) < 0 || !(base = match_paths(&lb, &la)))
        goto out;
    double max_delta = 0;
    for (uint32_t i = 1; i < ta.n; i++)
        max_delta = fmax(max_delta, fabs(ta.nodes[i].total - base[i]));
    page_begin(b);
    data_begin(b, "diff", title);
    put_profile_fields(b, after->p, after->s, &ta, after->has_tree);
    sonde_buf_puts(b, ",\n\"base\": [");
    for (uint32_t i = 0; i < ta.n; i++) {
        if (i)
            sonde_buf_putc(b, ',');
        put_num(b, base[i]);
    }
    sonde_buf_puts(b, "], \"max_delta\": ");
    put_num(b, max_delta);
    put_changes(b, changes, nchanges);
    page_end(b);
    rc = sonde_buf_ok(b) ? 0 : -1;
out:
    free(base);
    sonde_u64map_free(&lb.children);
    view_tree_free(&tb);
    view_tree_free(&ta);
    return rc;
}
