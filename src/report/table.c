/* table.c - pstats-style text report; see table.h. */
#include "table.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum sort_key { BY_TOTTIME, BY_CUMTIME, BY_NCALLS, BY_PCALLS, BY_NAME, BY_FILE, BY_LINE };

static const struct {
    const char *name;
    enum sort_key key;
    const char *title;
} sort_keys[] = {
    { "tottime", BY_TOTTIME, "internal time" },
    { "time", BY_TOTTIME, "internal time" },
    { "cumtime", BY_CUMTIME, "cumulative time" },
    { "cumulative", BY_CUMTIME, "cumulative time" },
    { "ncalls", BY_NCALLS, "call count" },
    { "calls", BY_NCALLS, "call count" },
    { "pcalls", BY_PCALLS, "primitive call count" },
    { "name", BY_NAME, "function name" },
    { "file", BY_FILE, "file name" },
    { "filename", BY_FILE, "file name" },
    { "line", BY_LINE, "line number" },
};

static int find_sort(const char *name)
{
    for (size_t i = 0; i < sizeof sort_keys / sizeof sort_keys[0]; i++)
        if (strcmp(sort_keys[i].name, name) == 0)
            return (int)i;
    return -1;
}

int sonde_table_sort_known(const char *key) { return find_sort(key) >= 0; }

void sonde_table_func_label(sonde_buf *b, const sonde_profile *p, uint32_t func)
{
    const sonde_func *f = &p->funcs[func];
    const char *name = sonde_profile_str(p, f->name);
    const char *file = sonde_profile_str(p, f->file);
    size_t n = strlen(name);
    if (f->kind == SONDE_FUNC_TORCH) {
        sonde_buf_puts(b, "torch:");
        sonde_buf_text_str(b, name);
        return;
    }
    if (strcmp(file, "~") == 0 && f->line == 0) {
        if (n >= 2 && name[0] == '<' && name[n - 1] == '>') {
            char *inner = strndup(name + 1, n - 2);
            sonde_buf_putc(b, '{');
            if (inner)
                sonde_buf_text_str(b, inner);
            else
                b->oom = 1;
            sonde_buf_putc(b, '}');
            free(inner);
        } else {
            sonde_buf_text_str(b, name);
        }
        return;
    }
    sonde_buf_text_str(b, file);
    sonde_buf_printf(b, ":%d(", f->line);
    sonde_buf_text_str(b, name);
    sonde_buf_putc(b, ')');
}

typedef struct sorter {
    const sonde_profile *p;
    const sonde_stats *s;
    enum sort_key key;
} sorter;

static int cmp_num(double a, double b) { return a > b ? -1 : a < b ? 1 : 0; }

/* qsort_r's order for function ids, by a sorter's key. */
static int compare_funcs(const void *pa, const void *pb, void *context)
{
    const sorter *st = context;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const sonde_fstat *fa = &st->s->funcs[a], *fb = &st->s->funcs[b];
    const sonde_func *ga = &st->p->funcs[a], *gb = &st->p->funcs[b];
    int c = 0;
    switch (st->key) {
    case BY_TOTTIME: c = cmp_num(fa->tottime, fb->tottime); break;
    case BY_CUMTIME: c = cmp_num(fa->cumtime, fb->cumtime); break;
    case BY_NCALLS: c = cmp_num((double)fa->ncalls, (double)fb->ncalls); break;
    case BY_PCALLS: c = cmp_num((double)fa->pcalls, (double)fb->pcalls); break;
    case BY_NAME:
        c = strcmp(sonde_profile_str(st->p, ga->name), sonde_profile_str(st->p, gb->name));
        break;
    case BY_FILE:
        c = strcmp(sonde_profile_str(st->p, ga->file), sonde_profile_str(st->p, gb->file));
        break;
    case BY_LINE: c = ga->line - gb->line; break;
    }
    if (c == 0)
        c = cmp_num(fa->cumtime, fb->cumtime);
    if (c == 0)
        c = a < b ? -1 : a > b;
    return c;
}

static void put_calls(sonde_buf *b, uint64_t n, uint64_t prim, int width)
{
    char text[48];
    if (n != prim)
        snprintf(text, sizeof text, "%llu/%llu", (unsigned long long)n,
                 (unsigned long long)prim);
    else
        snprintf(text, sizeof text, "%llu", (unsigned long long)n);
    sonde_buf_printf(b, "%*s", width, text);
}

static void put_row(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                    uint32_t f)
{
    const sonde_fstat *fs = &s->funcs[f];
    put_calls(b, fs->ncalls, fs->pcalls, 9);
    sonde_buf_printf(b, " %8.3f ", fs->tottime);
    if (fs->ncalls)
        sonde_buf_printf(b, "%8.3f ", fs->tottime / (double)fs->ncalls);
    else
        sonde_buf_puts(b, "         ");
    sonde_buf_printf(b, "%8.3f ", fs->cumtime);
    if (fs->pcalls)
        sonde_buf_printf(b, "%8.3f ", fs->cumtime / (double)fs->pcalls);
    else
        sonde_buf_puts(b, "         ");
    sonde_table_func_label(b, p, f);
    sonde_buf_putc(b, '\n');
}

/* Functions selected by re (all when re is NULL), sorted. */
static uint32_t *select_funcs(const sonde_profile *p, const sonde_stats *s,
                              const regex_t *re, enum sort_key key, uint32_t *n)
{
    uint32_t *ids = malloc(((size_t)s->nfuncs + 1) * sizeof *ids);
    if (!ids)
        return NULL;
    sonde_buf label;
    sonde_buf_init(&label);
    *n = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        if (!s->funcs[f].present)
            continue;
        if (re) {
            label.len = 0;
            sonde_table_func_label(&label, p, f);
            if (!label.data || regexec(re, label.data, 0, NULL, 0) != 0)
                continue;
        }
        ids[(*n)++] = f;
    }
    sonde_buf_free(&label);
    sorter st = { .p = p, .s = s, .key = key };
    qsort_r(ids, *n, sizeof *ids, compare_funcs, &st);
    return ids;
}

/* The callers (callees = 0) or callees of each selected function. */
static void put_relations(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const uint32_t *ids, uint32_t n, int callees)
{
    sonde_buf_printf(b, "\n%s\n", callees ? "Function called...    ncalls  tottime  cumtime  callee"
                                          : "Function was called by...    ncalls  tottime  cumtime  caller");
    uint32_t *start, *order;
    if (sonde_stats_group_edges(s, callees, &start, &order) < 0) {
        b->oom = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        sonde_table_func_label(b, p, ids[i]);
        sonde_buf_putc(b, '\n');
        int any = 0;
        for (uint32_t j = start[ids[i]]; j < start[ids[i] + 1]; j++) {
            const sonde_edge *ed = &s->edges[order[j]];
            sonde_buf_puts(b, callees ? "    -> " : "    <- ");
            put_calls(b, ed->ncalls, ed->pcalls, 20);
            sonde_buf_printf(b, " %8.3f %8.3f  ", ed->tottime, ed->cumtime);
            sonde_table_func_label(b, p, callees ? ed->callee : ed->caller);
            sonde_buf_putc(b, '\n');
            any = 1;
        }
        if (!any)
            sonde_buf_puts(b, callees ? "    (calls nothing profiled)\n"
                                      : "    (no profiled caller)\n");
    }
    free(start);
    free(order);
}

/* The totals line and the sorted, cut table.  0, or -1 on out of memory. */
static int put_table(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                     const sonde_table_opts *o, int k)
{
    uint64_t prim, calls = sonde_stats_total_calls(s, &prim);
    if (s->sampled) /* each sample is counted once where it ran */
        sonde_buf_printf(b, "%12llu samples", (unsigned long long)prim);
    else
        sonde_buf_printf(b, "%12llu function calls", (unsigned long long)calls);
    if (prim != calls && !s->sampled)
        sonde_buf_printf(b, " (%llu primitive calls)", (unsigned long long)prim);
    if (p->rate_unknown)
        sonde_buf_puts(b, " (the file gives counts, not times: each \"second\" below is a "
                          "sample)\n\n");
    else
        sonde_buf_printf(b, " in %.3f seconds\n\n", sonde_stats_total_time(s));
    sonde_buf_printf(b, "   Ordered by: %s\n", sort_keys[k].title);

    uint32_t n;
    uint32_t *ids = select_funcs(p, s, NULL, sort_keys[k].key, &n);
    if (!ids)
        return -1;
    uint32_t shown = o->limit > 0 && (uint64_t)o->limit < n ? (uint32_t)o->limit : n;
    if (shown < n)
        sonde_buf_printf(b, "   List reduced from %u to %u due to restriction <%ld>\n",
                         n, shown, o->limit);
    /* Python's pstats heads a sampled profile's columns so too. */
    static const char by_calls[] = "   ncalls  tottime  percall  cumtime  percall",
                      by_samples[] = " nsamples  tottime persample cumtime persample";
    sonde_buf_printf(b, "\n%s filename:lineno(function)\n", s->sampled ? by_samples : by_calls);
    for (uint32_t i = 0; i < shown; i++)
        put_row(b, p, s, ids[i]);
    free(ids);
    return 0;
}

int sonde_table_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                      const sonde_table_opts *o, char *err, size_t errlen)
{
    int k = find_sort(o->sort ? o->sort : "cumtime");
    if (k < 0) {
        snprintf(err, errlen, "unknown sort key '%s' (use tottime, cumtime, ncalls, "
                 "pcalls, name, file or line)", o->sort);
        return -1;
    }
    if (!o->callers_re && !o->callees_re && put_table(b, p, s, o, k) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t n, *ids;
    const char *res[2] = { o->callers_re, o->callees_re };
    for (int which = 0; which < 2; which++) {
        if (!res[which])
            continue;
        regex_t re;
        int rc = regcomp(&re, res[which], REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[128];
            regerror(rc, &re, msg, sizeof msg);
            snprintf(err, errlen, "bad regular expression '%s': %s", res[which], msg);
            return -1;
        }
        ids = select_funcs(p, s, &re, sort_keys[k].key, &n);
        regfree(&re);
        if (!ids) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (n == 0)
            sonde_buf_printf(b, "\nNo function matches '%s'.\n", res[which]);
        else
            put_relations(b, p, s, ids, n, which);
        free(ids);
    }
    return 0;
}
