/* doc_merge.c - lines and mem documents of several processes summed into
 * one; see doc_merge.h. */
#include "doc_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/about.h"
#include "../formats/doc.h"
#include "../formats/json_about.h"
#include "../formats/json_value.h"
#include "../formats/lines_doc.h"
#include "../formats/mem_doc.h"

/* Timeline points a merged document keeps at most. */
#define MAX_POINTS (1u << 20)

static const sonde_jval *member(const sonde_jtree *t, const sonde_jval *obj, const char *key,
                                enum sonde_jtype type)
{
    const sonde_jval *v = obj && obj->type == SONDE_J_OBJ ? sonde_json_get(t, obj, key) : NULL;
    return v && v->type == type ? v : NULL;
}

static uint64_t count(const sonde_jtree *t, const sonde_jval *obj, const char *key)
{
    return sonde_num_to_count(sonde_json_num(t, obj, key, 0));
}

static uint64_t add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static const sonde_jval *root(const sonde_jtree *t)
{
    return &t->vals[t->root];
}

/* An array member's items (0 when absent or not an array). */
static uint32_t items(const sonde_jtree *t, const sonde_jval *obj, const char *key,
                      const sonde_jval **arr)
{
    *arr = member(t, obj, key, SONDE_J_ARR);
    return *arr ? (*arr)->len : 0;
}

const char *sonde_doc_merge_clash(const sonde_jtree *a, const sonde_jtree *b, char *why,
                                  size_t whylen)
{
    double va = sonde_json_num(a, root(a), DOC_SONDE, 1), vb = sonde_json_num(b, root(b), DOC_SONDE, 1);
    const sonde_jval *na = member(a, root(a), DOC_NATIVE, SONDE_J_BOOL);
    const sonde_jval *nb = member(b, root(b), DOC_NATIVE, SONDE_J_BOOL);
    if (va != vb)
        snprintf(why, whylen, "is sonde's document version %g and the other version %g", va, vb);
    else if ((na ? na->num : 0) != (nb ? nb->num : 0))
        snprintf(why, whylen, "%s C allocations and the other %s (sonde mem --native, "
                 "--no-native): their bytes are not the same measure",
                 na && na->num ? "counts" : "leaves out", nb && nb->num ? "counts them" :
                 "does not");
    else
        return NULL;
    return why;
}

void sonde_doc_merge_about(const sonde_jtree *t, int *pid, struct sonde_about *a)
{
    char err[64];
    *pid = 0;
    if (sonde_json_about_read(t, root(t), a, pid, err, sizeof err) < 0) {
        sonde_about_clear(a);
        *pid = 0;
    }
}

/* ---- functions: matched by (file, name, first line), lines by number ---- */

typedef struct fentry {
    uint32_t part;
    const sonde_jval *fn;
    const char *file, *name;
    int first_line;
} fentry;

typedef struct lentry {
    int line;       /* or an instruction's offset */
    uint32_t part;
    const sonde_jval *obj;
} lentry;

static int by_function(const void *x, const void *y)
{
    const fentry *a = x, *b = y;
    int c = strcmp(a->file, b->file);
    if (!c)
        c = strcmp(a->name, b->name);
    if (!c)
        c = (a->first_line > b->first_line) - (a->first_line < b->first_line);
    if (!c)
        c = (a->part > b->part) - (a->part < b->part);
    return c;
}

static int by_line(const void *x, const void *y)
{
    const lentry *a = x, *b = y;
    int c = (a->line > b->line) - (a->line < b->line);
    return c ? c : (a->part > b->part) - (a->part < b->part);
}

typedef struct merger {
    const sonde_doc_part *parts;
    uint32_t nparts;
    int mem, line_events;
    fentry *fns;
    uint32_t nfns;
    lentry *scratch;             /* one group's lines, sorted */
    size_t scratch_cap;
    sonde_lines_doc_function *lfns;
    sonde_lines_doc_line *llines;
    sonde_lines_doc_instr *instrs;
    sonde_mem_doc_function *mfns;
    sonde_mem_doc_line *mlines;
    uint32_t nout;               /* functions written so far */
    size_t nlines, ninstrs;      /* lines and instructions written so far */
} merger;

static int collect_functions(merger *m, size_t *all_lines, size_t *all_instrs)
{
    size_t n = 0;
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jval *arr;
        n += items(m->parts[p].doc, root(m->parts[p].doc), DOC_FUNCTIONS, &arr);
    }
    if (n > UINT32_MAX || !(m->fns = malloc((n ? n : 1) * sizeof *m->fns)))
        return -1;
    *all_lines = *all_instrs = 0;
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        const sonde_jval *arr, *sub;
        uint32_t k = items(t, root(t), DOC_FUNCTIONS, &arr);
        for (uint32_t i = 0; i < k; i++) {
            const sonde_jval *fn = sonde_json_item(t, arr, i);
            if (fn->type != SONDE_J_OBJ)
                continue;
            fentry *e = &m->fns[m->nfns++];
            e->part = p;
            e->fn = fn;
            e->file = sonde_json_str(t, sonde_json_get(t, fn, DOC_FILE));
            e->name = sonde_json_str(t, sonde_json_get(t, fn, DOC_NAME));
            e->first_line = (int)sonde_num_to_int(sonde_json_num(t, fn, DOC_FIRST_LINE, 0),
                                                  INT32_MIN, INT32_MAX);
            *all_lines += items(t, fn, DOC_LINES, &sub);
            *all_instrs += items(t, fn, DOC_INSTRUCTIONS, &sub);
        }
    }
    qsort(m->fns, m->nfns, sizeof *m->fns, by_function);
    return 0;
}

/* The group's items under key (lines, or instructions numbered by
 * offset), sorted, into m->scratch; their count, or -1. */
static long gather(merger *m, const fentry *g, uint32_t ng, const char *key, const char *num)
{
    size_t n = 0;
    for (uint32_t i = 0; i < ng; i++) {
        const sonde_jval *arr;
        n += items(m->parts[g[i].part].doc, g[i].fn, key, &arr);
    }
    if (n > m->scratch_cap) {
        lentry *s = realloc(m->scratch, n * sizeof *s);
        if (!s)
            return -1;
        m->scratch = s;
        m->scratch_cap = n;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < ng; i++) {
        const sonde_jtree *t = m->parts[g[i].part].doc;
        const sonde_jval *arr;
        uint32_t c = items(t, g[i].fn, key, &arr);
        for (uint32_t j = 0; j < c; j++) {
            const sonde_jval *o = sonde_json_item(t, arr, j);
            if (o->type != SONDE_J_OBJ)
                continue;
            m->scratch[k].line = (int)sonde_num_to_int(sonde_json_num(t, o, num, 0), INT32_MIN,
                                                       INT32_MAX);
            m->scratch[k].part = g[i].part;
            m->scratch[k++].obj = o;
        }
    }
    if (k > 1)
        qsort(m->scratch, k, sizeof *m->scratch, by_line);
    return (long)k;
}

static const sonde_jtree *doc_of(const merger *m, const lentry *e)
{
    return m->parts[e->part].doc;
}

static const char *source_of(const merger *m, const lentry *e)
{
    return sonde_json_str(doc_of(m, e), sonde_json_get(doc_of(m, e), e->obj, DOC_SOURCE));
}

/* One merged function of the lines document from the group g. */
static int merge_lines_function(merger *m, const fentry *g, uint32_t ng)
{
    long n = gather(m, g, ng, DOC_LINES, DOC_LINE);
    if (n < 0)
        return -1;
    sonde_lines_doc_function *f = &m->lfns[m->nout++];
    f->file = g->file;
    f->name = g->name;
    f->first_line = g->first_line;
    f->lines = &m->llines[m->nlines];
    for (long i = 0; i < n; i++) {
        const lentry *e = &m->scratch[i];
        const sonde_jtree *t = doc_of(m, e);
        if (f->nlines == 0 || f->lines[f->nlines - 1].line != e->line) {
            sonde_lines_doc_line *l = &m->llines[m->nlines++];
            memset(l, 0, sizeof *l);
            l->line = e->line;
            l->source = source_of(m, e);
            f->nlines++;
        }
        sonde_lines_doc_line *l = &m->llines[m->nlines - 1];
        l->hits = add(l->hits, count(t, e->obj, DOC_HITS));
        l->iterations = add(l->iterations, count(t, e->obj, DOC_ITERATIONS));
        l->time_ns = add(l->time_ns, count(t, e->obj, DOC_TIME_NS));
    }
    if ((n = gather(m, g, ng, DOC_INSTRUCTIONS, DOC_OFFSET)) < 0)
        return -1;
    for (uint32_t i = 0; i < ng; i++)
        f->has_instrs |= member(m->parts[g[i].part].doc, g[i].fn, DOC_INSTRUCTIONS,
                                SONDE_J_ARR) != NULL;
    f->instrs = &m->instrs[m->ninstrs];
    for (long i = 0; i < n; i++) {
        const lentry *e = &m->scratch[i];
        const sonde_jtree *t = doc_of(m, e);
        if (f->ninstrs == 0 || f->instrs[f->ninstrs - 1].offset != e->line) {
            sonde_lines_doc_instr *x = &m->instrs[m->ninstrs++];
            memset(x, 0, sizeof *x);
            x->offset = e->line;
            x->line = (int)sonde_num_to_int(sonde_json_num(t, e->obj, DOC_LINE, 0), INT32_MIN,
                                            INT32_MAX);
            x->opname = sonde_json_str(t, sonde_json_get(t, e->obj, DOC_OPNAME));
            x->arg = sonde_json_str(t, sonde_json_get(t, e->obj, DOC_ARG));
            f->ninstrs++;
        }
        sonde_lines_doc_instr *x = &m->instrs[m->ninstrs - 1];
        x->hits = add(x->hits, count(t, e->obj, DOC_HITS));
        x->time_ns = add(x->time_ns, count(t, e->obj, DOC_TIME_NS));
    }
    return 0;
}

/* One merged function of the mem document from the group g. */
static int merge_mem_function(merger *m, const fentry *g, uint32_t ng)
{
    long n = gather(m, g, ng, DOC_LINES, DOC_LINE);
    if (n < 0)
        return -1;
    sonde_mem_doc_function *f = &m->mfns[m->nout++];
    f->file = g->file;
    f->name = g->name;
    f->first_line = g->first_line;
    f->lines = &m->mlines[m->nlines];
    for (long i = 0; i < n; i++) {
        const lentry *e = &m->scratch[i];
        const sonde_jtree *t = doc_of(m, e);
        if (f->nlines == 0 || f->lines[f->nlines - 1].line != e->line) {
            sonde_mem_doc_line *l = &m->mlines[m->nlines++];
            memset(l, 0, sizeof *l);
            l->line = e->line;
            l->source = source_of(m, e);
            f->nlines++;
        }
        sonde_mem_doc_line *l = &m->mlines[m->nlines - 1];
        l->hits = add(l->hits, count(t, e->obj, DOC_HITS));
        l->alloc = add(l->alloc, count(t, e->obj, DOC_ALLOC_BYTES));
        l->freed = add(l->freed, count(t, e->obj, DOC_FREED_BYTES));
        l->net = add(l->net, count(t, e->obj, DOC_NET_BYTES));
        l->reserved = add(l->reserved, count(t, e->obj, DOC_RESERVED_BYTES));
        l->peak_heap = add(l->peak_heap, count(t, e->obj, DOC_PEAK_HEAP_BYTES));
        l->rss = add(l->rss, count(t, e->obj, DOC_RSS_BYTES));
        l->rss_increment += sonde_num_to_int(sonde_json_num(t, e->obj, DOC_RSS_INCREMENT_BYTES,
                                                            0), -(INT64_C(1) << 52),
                                             INT64_C(1) << 52);
    }
    return 0;
}

static int merge_functions(merger *m)
{
    size_t all_lines, all_instrs;
    if (collect_functions(m, &all_lines, &all_instrs) < 0)
        return -1;
    size_t nf = m->nfns ? m->nfns : 1, nl = all_lines ? all_lines : 1;
    if (m->mem) {
        m->mfns = calloc(nf, sizeof *m->mfns);
        m->mlines = calloc(nl, sizeof *m->mlines);
        if (!m->mfns || !m->mlines)
            return -1;
    } else {
        m->lfns = calloc(nf, sizeof *m->lfns);
        m->llines = calloc(nl, sizeof *m->llines);
        m->instrs = calloc(all_instrs ? all_instrs : 1, sizeof *m->instrs);
        if (!m->lfns || !m->llines || !m->instrs)
            return -1;
    }
    for (uint32_t i = 0, j; i < m->nfns; i = j) {
        for (j = i + 1; j < m->nfns && strcmp(m->fns[i].file, m->fns[j].file) == 0 &&
             strcmp(m->fns[i].name, m->fns[j].name) == 0 &&
             m->fns[i].first_line == m->fns[j].first_line; j++)
            ;
        int rc = m->mem ? merge_mem_function(m, &m->fns[i], j - i)
                        : merge_lines_function(m, &m->fns[i], j - i);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- mem: stacks under their process, the timeline summed ---- */

typedef struct stacks {
    sonde_mem_doc_stack *list;
    uint32_t n;
    sonde_mem_doc_frame *frames;
} stacks;

static int by_bytes(const void *x, const void *y)
{
    const sonde_mem_doc_stack *a = x, *b = y;
    return (a->bytes < b->bytes) - (a->bytes > b->bytes);
}

/* Every part's stacks under key, each under its process's frame, most
 * bytes first. */
static int merge_stacks(const merger *m, const char *key, stacks *out)
{
    size_t n = 0, nframes = 0;
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        const sonde_jval *arr, *st;
        uint32_t k = items(t, root(t), key, &arr);
        n += k;
        for (uint32_t i = 0; i < k; i++)
            nframes += 1 + items(t, sonde_json_item(t, arr, i), DOC_STACK, &st);
    }
    out->list = calloc(n ? n : 1, sizeof *out->list);
    out->frames = calloc(nframes ? nframes : 1, sizeof *out->frames);
    if (!out->list || !out->frames || n > UINT32_MAX)
        return -1;
    size_t f = 0;
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        const sonde_jval *arr, *st;
        uint32_t k = items(t, root(t), key, &arr);
        for (uint32_t i = 0; i < k; i++) {
            const sonde_jval *o = sonde_json_item(t, arr, i);
            uint32_t depth = items(t, o, DOC_STACK, &st);
            sonde_mem_doc_stack *s = &out->list[out->n++];
            s->bytes = count(t, o, DOC_BYTES);
            s->native = count(t, o, DOC_NATIVE_BYTES);
            s->reserved = count(t, o, DOC_RESERVED_BYTES);
            s->objects = (double)count(t, o, DOC_OBJECTS);
            s->stack = &out->frames[f];
            s->depth = 1 + depth;
            sonde_mem_doc_frame *fr = &out->frames[f++];
            fr->file = "~";
            fr->name = m->parts[p].label;
            fr->source = "";
            for (uint32_t d = 0; d < depth; d++) {
                const sonde_jval *x = sonde_json_item(t, st, d);
                fr = &out->frames[f++];
                fr->file = sonde_json_str(t, sonde_json_get(t, x, DOC_FILE));
                fr->name = sonde_json_str(t, sonde_json_get(t, x, DOC_NAME));
                fr->line = (int)sonde_num_to_int(sonde_json_num(t, x, DOC_LINE, 0), INT32_MIN,
                                                 INT32_MAX);
                fr->source = sonde_json_str(t, sonde_json_get(t, x, DOC_SOURCE));
            }
        }
    }
    qsort(out->list, out->n, sizeof *out->list, by_bytes);
    return 0;
}

typedef struct tpoint {
    uint64_t t;
    uint32_t part, i, last;
} tpoint;

static int by_t(const void *x, const void *y)
{
    const tpoint *a = x, *b = y;
    return (a->t > b->t) - (a->t < b->t);
}

/* A part's timeline arrays (NULL when it has none) and their length. */
static uint32_t series(const sonde_jtree *t, const sonde_jval *s[4])
{
    static const char *const keys[4] = { DOC_T_NS, DOC_RSS_BYTES, DOC_HEAP_BYTES,
                                         DOC_RESERVED_BYTES };
    const sonde_jval *tl = member(t, root(t), DOC_TIMELINE, SONDE_J_OBJ);
    uint32_t n = UINT32_MAX;
    for (int k = 0; k < 4; k++) {
        s[k] = member(t, tl, keys[k], SONDE_J_ARR);
        n = s[k] && s[k]->len < n ? s[k]->len : s[k] ? n : 0;
    }
    return n == UINT32_MAX ? 0 : n;
}

static uint64_t at(const sonde_jtree *t, const sonde_jval *arr, uint32_t i)
{
    const sonde_jval *v = sonde_json_item(t, arr, i);
    return v->type == SONDE_J_NUM ? sonde_num_to_count(v->num) : 0;
}

/* Each part's start in ns after the earliest's, when all are known, else 0s. */
static void starts(const merger *m, uint64_t *shift)
{
    int64_t first = 0;
    int known = 1;
    for (uint32_t p = 0; p < m->nparts; p++) {
        sonde_about a;
        int pid;
        sonde_about_init(&a);
        sonde_doc_merge_about(m->parts[p].doc, &pid, &a);
        shift[p] = (uint64_t)a.start_ns;
        known &= a.start_ns != 0;
        if (a.start_ns && (!first || a.start_ns < first))
            first = a.start_ns;
        sonde_about_clear(&a);
    }
    for (uint32_t p = 0; p < m->nparts; p++)
        shift[p] = known ? shift[p] - (uint64_t)first : 0;
}

/* The processes' memory together over time: at each point, each running
 * process's last value added up. */
static int merge_timeline(const merger *m, sonde_mem_doc *d, sonde_mem_doc_point **points,
                          sonde_mem_doc_span **spans)
{
    uint64_t *shift = calloc(m->nparts, sizeof *shift);
    sonde_mem_doc_point *cur = calloc(m->nparts, sizeof *cur);
    size_t n = 0, nspans = 0;
    const sonde_jval *s[4], *sp;
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        n += series(t, s);
        nspans += items(t, member(t, root(t), DOC_TIMELINE, SONDE_J_OBJ), DOC_SPANS, &sp);
    }
    tpoint *all = malloc((n ? n : 1) * sizeof *all);
    *points = malloc((n ? n : 1) * sizeof **points);
    *spans = calloc(nspans ? nspans : 1, sizeof **spans);
    if (!shift || !cur || !all || !*points || !*spans) {
        free(shift), free(cur), free(all);
        return -1;
    }
    starts(m, shift);
    size_t k = 0;
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        uint32_t c = series(t, s);
        for (uint32_t i = 0; i < c; i++)
            all[k++] = (tpoint){ at(t, s[0], i) + shift[p], p, i, i + 1 == c };
        const sonde_jval *tl = member(t, root(t), DOC_TIMELINE, SONDE_J_OBJ);
        uint32_t ns = items(t, tl, DOC_SPANS, &sp);
        for (uint32_t i = 0; i < ns; i++) {
            const sonde_jval *o = sonde_json_item(t, sp, i);
            sonde_mem_doc_span *x = &(*spans)[d->nspans++];
            x->name = sonde_json_str(t, sonde_json_get(t, o, DOC_NAME));
            x->start_ns = count(t, o, DOC_START_NS) + shift[p];
            x->end_ns = count(t, o, DOC_END_NS) + shift[p];
        }
    }
    qsort(all, k, sizeof *all, by_t);
    sonde_mem_doc_point sum = { 0 };
    for (size_t i = 0, j; i < k; i = j) {
        for (j = i; j < k && all[j].t == all[i].t; j++) {
            const sonde_jtree *t = m->parts[all[j].part].doc;
            series(t, s);
            sonde_mem_doc_point *c = &cur[all[j].part];
            sum.rss += at(t, s[1], all[j].i) - c->rss;
            sum.heap += at(t, s[2], all[j].i) - c->heap;
            sum.reserved += at(t, s[3], all[j].i) - c->reserved;
            c->rss = at(t, s[1], all[j].i);
            c->heap = at(t, s[2], all[j].i);
            c->reserved = at(t, s[3], all[j].i);
        }
        if (d->npoints < MAX_POINTS) {
            sum.t_ns = all[i].t;
            (*points)[d->npoints++] = sum;
        }
        for (size_t e = i; e < j; e++) {
            if (!all[e].last)
                continue;
            sonde_mem_doc_point *c = &cur[all[e].part];
            sum.rss -= c->rss, sum.heap -= c->heap, sum.reserved -= c->reserved;
            memset(c, 0, sizeof *c);
        }
    }
    free(shift);
    free(cur);
    free(all);
    return 0;
}

/* ---- the document ---- */

/* After the document body in b (which ends "}\n"): its "parts". */
static void put_parts(sonde_buf *b, const merger *m)
{
    if (b->len >= 2 && b->data[b->len - 2] == '}')
        b->len -= 2;
    sonde_buf_puts(b, ",\n\"parts\": [");
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        const sonde_jval *fns = member(t, root(t), DOC_FUNCTIONS, SONDE_J_ARR);
        sonde_buf_puts(b, p ? ",\n {\"process\": " : "\n {\"process\": ");
        sonde_buf_json_str(b, m->parts[p].label);
        sonde_buf_puts(b, ", \"file\": ");
        sonde_buf_json_str(b, m->parts[p].file);
        sonde_buf_puts(b, ", " DOC_KEY(DOC_FUNCTIONS));
        if (fns)
            sonde_json_value_write(b, t, fns);
        else
            sonde_buf_puts(b, "[]");
        sonde_buf_putc(b, '}');
    }
    sonde_buf_puts(b, "]}\n");
}

/* The mem document's settings and totals from every part. */
static void mem_totals(const merger *m, sonde_mem_doc *d)
{
    for (uint32_t p = 0; p < m->nparts; p++) {
        const sonde_jtree *t = m->parts[p].doc;
        const sonde_jval *r = root(t), *le = member(t, r, DOC_LINE_EVENTS, SONDE_J_BOOL);
        const sonde_jval *nat = member(t, r, DOC_NATIVE, SONDE_J_BOOL);
        uint64_t sample = count(t, r, DOC_SAMPLE_BYTES);
        if (p == 0) {
            d->native = nat && nat->num;
            d->line_events = le && le->num;
            d->interval_ms = sonde_json_num(t, r, DOC_INTERVAL_MS, 0);
        }
        d->line_events &= le && le->num;
        d->sample_bytes = sample > d->sample_bytes ? sample : d->sample_bytes;
        d->heap_peak = add(d->heap_peak, count(t, r, DOC_HEAP_PEAK_BYTES));
        d->reserved = add(d->reserved, count(t, r, DOC_RESERVED_BYTES));
        d->rss_high_water = add(d->rss_high_water, count(t, r, DOC_RSS_HIGH_WATER_BYTES));
        d->untracked = add(d->untracked, count(t, r, DOC_UNTRACKED_BYTES));
    }
}

static int write_mem(sonde_buf *b, merger *m)
{
    sonde_mem_doc d = { .functions = m->mfns, .nfunctions = m->nout };
    stacks leaks = { 0 }, allocs = { 0 };
    sonde_mem_doc_point *points = NULL;
    sonde_mem_doc_span *spans = NULL;
    mem_totals(m, &d);
    int rc = -1;
    if (merge_stacks(m, DOC_LEAKS, &leaks) == 0 && merge_stacks(m, DOC_ALLOCATIONS, &allocs) == 0) {
        if (merge_timeline(m, &d, &points, &spans) == 0) {
            d.spans = spans;
            d.points = points;
            d.leaks = leaks.list;
            d.nleaks = leaks.n;
            d.allocations = allocs.list;
            d.nallocations = allocs.n;
            rc = sonde_mem_doc_write(b, &d);
        }
    }
    free(leaks.list), free(leaks.frames), free(allocs.list), free(allocs.frames);
    free(points), free(spans);
    return rc;
}

int sonde_doc_merge_write(sonde_buf *b, int mem, const sonde_doc_part *parts, uint32_t n,
                          char *err, size_t errlen)
{
    merger m = { .parts = parts, .nparts = n, .mem = mem };
    sonde_buf body;
    sonde_buf_init(&body);
    int rc = merge_functions(&m);
    if (rc == 0)
        rc = mem ? write_mem(&body, &m) : sonde_lines_doc_write(&body, m.lfns, m.nout);
    if (rc == 0) {
        put_parts(&body, &m);
        rc = sonde_buf_ok(&body) ? 0 : -1;
    }
    if (rc == 0)
        sonde_buf_put(b, body.data, body.len);
    else
        snprintf(err, errlen, "out of memory merging %u documents", n);
    sonde_buf_free(&body);
    free(m.fns), free(m.scratch), free(m.lfns), free(m.llines), free(m.instrs);
    free(m.mfns), free(m.mlines);
    return rc == 0 && sonde_buf_ok(b) ? 0 : -1;
}
