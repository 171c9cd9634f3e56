/* ops_table.c - the operator table; see ops_table.h. */
#include "ops_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/short_path.h"
#include "../formats/load.h"
#include "table.h"

enum ops_key { BY_TOTAL, BY_SELF, BY_CALLS, BY_AVG, BY_NAME };

/* Sort keys: torch's names and pstats' (read-only table). */
static const struct {
    const char *name;
    enum ops_key key;
} ops_keys[] = {
    { "cpu_time_total", BY_TOTAL }, { "cumtime", BY_TOTAL },
    { "self_cpu_time_total", BY_SELF }, { "tottime", BY_SELF },
    { "count", BY_CALLS }, { "ncalls", BY_CALLS }, { "calls", BY_CALLS },
    { "cpu_time", BY_AVG }, { "name", BY_NAME },
};

static int find_key(const char *name)
{
    for (size_t i = 0; i < sizeof ops_keys / sizeof *ops_keys; i++)
        if (strcmp(ops_keys[i].name, name) == 0)
            return (int)ops_keys[i].key;
    return -1;
}

int sonde_ops_sort_known(const char *key) { return find_key(key) >= 0; }

/* One row: an operator (and, by caller, the Python function above it);
 * func is its first function (of its shapes, by shape). */
typedef struct op_row {
    uint32_t func;
    uint32_t caller;    /* SONDE_NO_FUNC when not split by caller */
    uint64_t calls;
    double self, total; /* seconds */
    int64_t mem, self_mem; /* net CPU bytes (--torch-memory) */
} op_row;

typedef struct rows {
    const sonde_profile *p;
    int64_t *below; /* per node, with memory: the bytes of the nearest
                     * torch nodes beneath it */
    int by_shape;
    op_row *row;
    size_t n, cap;
} rows;

/* The name a row shows: the operator's, without its shapes. */
static size_t name_len(const sonde_profile *p, uint32_t func)
{
    return sonde_torch_name_len(&p->funcs[func], sonde_profile_str(p, p->funcs[func].name));
}

/* Whether functions a and b fall in one row: one function by shape, else
 * one operator name. */
static int same_row(const rows *r, uint32_t a, uint32_t b)
{
    if (a == b)
        return 1;
    if (r->by_shape)
        return 0;
    size_t n = name_len(r->p, a);
    return n == name_len(r->p, b) && memcmp(sonde_profile_str(r->p, r->p->funcs[a].name),
                                            sonde_profile_str(r->p, r->p->funcs[b].name), n) == 0;
}

static op_row *row_for(rows *r, uint32_t func, uint32_t caller)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->row[i].caller == caller && same_row(r, r->row[i].func, func))
            return &r->row[i];
    op_row *grown = sonde_grow(r->row, &r->cap, r->n + 1, sizeof *grown, SIZE_MAX);
    if (!grown)
        return NULL;
    r->row = grown;
    r->row[r->n] = (op_row){ .func = func, .caller = caller };
    return &r->row[r->n++];
}

static int64_t mem_of(const sonde_profile *p, uint32_t n)
{
    return n < p->ncpu_mem ? p->cpu_mem[n] : SONDE_NO_MEM;
}

/* A torch node's bytes, its callees' included: an operator's own figure,
 * a region's (which has none) that of the torch nodes beneath it. */
static int64_t node_mem(const rows *r, uint32_t n)
{
    int64_t m = mem_of(r->p, n);
    return m == SONDE_NO_MEM ? r->below[n] : m;
}

/* r->below, when the profile has memory: children come after their
 * parents, so one pass from the last node up adds each to its parent.
 * 0, or -1 on out of memory. */
static int find_below(rows *r, const sonde_profile *p)
{
    if (!p->cpu_mem)
        return 0;
    r->below = calloc(p->nnodes ? p->nnodes : 1, sizeof *r->below);
    if (!r->below)
        return -1;
    for (uint32_t n = p->nnodes; n-- > 1;) {
        const sonde_node *node = &p->nodes[n];
        if (node->parent == SONDE_NO_NODE || node->parent >= n)
            continue;
        int torch = node->func != SONDE_NO_FUNC && p->funcs[node->func].kind == SONDE_FUNC_TORCH;
        r->below[node->parent] += torch ? node_mem(r, n) : r->below[n];
    }
    return 0;
}

static void add_mem(const rows *r, op_row *row, uint32_t n)
{
    if (!r->below)
        return;
    row->mem += node_mem(r, n);
    row->self_mem += node_mem(r, n) - r->below[n];
}

static int from_stats(rows *r, const sonde_profile *p, const sonde_stats *s)
{
    for (uint32_t f = 0; f < p->nfuncs && f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (p->funcs[f].kind != SONDE_FUNC_TORCH || !fs->present)
            continue;
        op_row *row = row_for(r, f, SONDE_NO_FUNC);
        if (!row)
            return -1;
        row->calls += fs->ncalls;
        row->self += fs->tottime;
        row->total += fs->cumtime;
    }
    for (uint32_t n = 1; r->below && n < p->nnodes; n++) {
        uint32_t f = p->nodes[n].func;
        if (f == SONDE_NO_FUNC || p->funcs[f].kind != SONDE_FUNC_TORCH)
            continue;
        op_row *row = row_for(r, f, SONDE_NO_FUNC);
        if (!row)
            return -1;
        add_mem(r, row, n);
    }
    return 0;
}

/* Each operator node, under the nearest Python function above it; a
 * node's total counts unless the same operator is open above it there
 * (pstats' rule for recursion). */
static int from_tree(rows *r, const sonde_profile *p)
{
    for (uint32_t n = 1; n < p->nnodes; n++) {
        const sonde_node *node = &p->nodes[n];
        if (node->func == SONDE_NO_FUNC || p->funcs[node->func].kind != SONDE_FUNC_TORCH)
            continue;
        uint32_t caller = SONDE_NO_FUNC, up = node->parent;
        int nested = 0;
        for (uint32_t depth = 0; up != SONDE_NO_NODE && depth < p->nnodes; depth++) {
            uint32_t f = p->nodes[up].func;
            if (f == SONDE_NO_FUNC)
                break;
            if (p->funcs[f].kind == SONDE_FUNC_PYTHON) {
                caller = f;
                break;
            }
            nested |= f == node->func;
            up = p->nodes[up].parent;
        }
        op_row *row = row_for(r, node->func, caller);
        if (!row)
            return -1;
        row->calls += node->calls;
        add_mem(r, row, n);
        row->self += (double)node->self * p->seconds_per_tick;
        if (!nested)
            row->total += (double)node->total * p->seconds_per_tick;
    }
    return 0;
}

typedef struct sorter {
    const sonde_profile *p;
    enum ops_key key;
} sorter;

static int cmp_num(double a, double b) { return a > b ? -1 : a < b ? 1 : 0; }

static int compare_rows(const void *pa, const void *pb, void *context)
{
    const sorter *st = context;
    const op_row *a = pa, *b = pb;
    int c = 0;
    switch (st->key) {
    case BY_TOTAL: c = cmp_num(a->total, b->total); break;
    case BY_SELF: c = cmp_num(a->self, b->self); break;
    case BY_CALLS: c = cmp_num((double)a->calls, (double)b->calls); break;
    case BY_AVG:
        c = cmp_num(a->calls ? a->total / (double)a->calls : 0,
                    b->calls ? b->total / (double)b->calls : 0);
        break;
    case BY_NAME:
        c = strcmp(sonde_profile_str(st->p, st->p->funcs[a->func].name),
                   sonde_profile_str(st->p, st->p->funcs[b->func].name));
        break;
    }
    if (c == 0)
        c = cmp_num(a->total, b->total);
    if (c == 0)
        c = a->func < b->func ? -1 : a->func > b->func ? 1 : 0;
    if (c == 0)
        c = a->caller < b->caller ? -1 : a->caller > b->caller;
    return c;
}

/* torch's _format_time: seconds as "12.345us", "1.234ms" or "1.234s". */
static void format_time(char *text, size_t size, double seconds)
{
    double us = seconds * 1e6;
    if (us >= 1e6)
        snprintf(text, size, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(text, size, "%.3fms", us / 1e3);
    else
        snprintf(text, size, "%.3fus", us);
}

/* A time right-aligned in width, then the gap to the next column. */
static void put_time(sonde_buf *b, double seconds, int width)
{
    char text[64];
    format_time(text, sizeof text, seconds);
    sonde_buf_printf(b, "%*s  ", width, text);
}

/* A rule under columns this wide: the name's, `columns` of 12, then the
 * shapes' when shapes_width is not 0. */
static void put_rule(sonde_buf *b, int name_width, int columns, int shapes_width)
{
    for (int i = 0; i < name_width; i++)
        sonde_buf_putc(b, '-');
    for (int c = 0; c < columns; c++)
        sonde_buf_puts(b, "  ------------");
    if (shapes_width)
        sonde_buf_puts(b, "  ");
    for (int i = 0; i < shapes_width; i++)
        sonde_buf_putc(b, '-');
    sonde_buf_puts(b, "  \n");
}

/* The input shapes part of a torch function's name ("[]" for none). */
static const char *shapes_of(const sonde_profile *p, uint32_t func)
{
    const char *name = sonde_profile_str(p, p->funcs[func].name);
    size_t len = name_len(p, func);
    return name[len] ? name + len + 1 : "[]";
}

/* torch's _format_memory: bytes as "12 B", "1.50 KB", "2.25 MB", "1.00 GB". */
static void put_memory(sonde_buf *b, int64_t bytes)
{
    char text[64];
    double x = (double)bytes, mag = x < 0 ? -x : x;
    if (mag >= 1024.0 * 1024 * 1024)
        snprintf(text, sizeof text, "%.2f GB", x / (1024.0 * 1024 * 1024));
    else if (mag >= 1024.0 * 1024)
        snprintf(text, sizeof text, "%.2f MB", x / (1024.0 * 1024));
    else if (mag >= 1024.0)
        snprintf(text, sizeof text, "%.2f KB", x / 1024.0);
    else
        snprintf(text, sizeof text, "%lld B", (long long)bytes);
    sonde_buf_printf(b, "%12s  ", text);
}

/* The columns, memory's (with --torch-memory) before the calls. */
static const char *const headers[] = { "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                       "CPU time avg", "CPU Mem", "Self CPU Mem",
                                       "# of Calls" };
#define NHEADERS ((int)(sizeof headers / sizeof *headers))
#define MEM_COLUMN 5

static void put_table(sonde_buf *b, const sonde_profile *p, const op_row *row, size_t n,
                      const sonde_ops_opts *o, double self_total, int memory)
{
    int columns = memory ? NHEADERS : NHEADERS - 2;
    int width = 4, shapes_width = o->by_shape ? 12 : 0;
    for (size_t i = 0; i < n; i++) {
        int w = (int)name_len(p, row[i].func);
        width = w > width ? w : width;
        w = o->by_shape ? (int)strlen(shapes_of(p, row[i].func)) : 0;
        shapes_width = w > shapes_width ? w : shapes_width;
    }
    put_rule(b, width, columns, shapes_width);
    sonde_buf_printf(b, "%*s", width, "Name");
    for (int c = 0; c < NHEADERS; c++)
        if (memory || c < MEM_COLUMN || c > MEM_COLUMN + 1)
            sonde_buf_printf(b, "  %12s", headers[c]);
    if (o->by_shape)
        sonde_buf_printf(b, "  %*s", shapes_width, "Input Shapes");
    sonde_buf_puts(b, o->by_caller ? "  Python caller\n" : "  \n");
    put_rule(b, width, columns, shapes_width);
    double scale = self_total > 0 ? 100.0 / self_total : 0;
    for (size_t i = 0; i < n; i++) {
        const op_row *r = &row[i];
        const char *name = sonde_profile_str(p, p->funcs[r->func].name);
        size_t len = name_len(p, r->func);
        char *shown = strndup(name, len);
        sonde_buf_printf(b, "%*s", width - (int)len, "");
        if (shown)
            sonde_buf_text_str(b, shown);
        else
            b->oom = 1;
        free(shown);
        sonde_buf_printf(b, "  %11.2f%%  ", r->self * scale);
        put_time(b, r->self, 12);
        sonde_buf_printf(b, "%11.2f%%  ", r->total * scale);
        put_time(b, r->total, 12);
        put_time(b, r->calls ? r->total / (double)r->calls : 0, 12);
        if (memory) {
            put_memory(b, r->mem);
            put_memory(b, r->self_mem);
        }
        sonde_buf_printf(b, "%12llu  ", (unsigned long long)r->calls);
        if (o->by_shape) /* a region, or an operator recorded without shapes: [] */
            sonde_buf_printf(b, "%*s  ", shapes_width, shapes_of(p, r->func));
        if (r->caller != SONDE_NO_FUNC) {
            const sonde_func *f = &p->funcs[r->caller];
            sonde_buf_text_str(b, sonde_short_path(sonde_profile_str(p, f->file), NULL));
            sonde_buf_printf(b, ":%d(", f->line);
            sonde_buf_text_str(b, sonde_profile_str(p, f->name));
            sonde_buf_putc(b, ')');
        }
        else if (o->by_caller)
            sonde_buf_puts(b, "(no Python caller)");
        sonde_buf_putc(b, '\n');
    }
    put_rule(b, width, columns, shapes_width);
    char text[64];
    format_time(text, sizeof text, self_total);
    sonde_buf_printf(b, "Self CPU time total: %s\n", text);
}

int sonde_ops_table_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_ops_opts *o, char *err, size_t errlen)
{
    int key = find_key(o->sort);
    if (key < 0) {
        snprintf(err, errlen, "unknown sort key '%s' for --ops (use cpu_time_total, "
                 "self_cpu_time_total, count, cpu_time or name)", o->sort);
        return -1;
    }
    if (o->by_caller && !sonde_load_has_tree(p)) {
        snprintf(err, errlen, "this profile has no call tree to find the callers in: write it "
                 "with sonde run --torch -f json -o FILE");
        return -1;
    }
    int shapes = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++)
        shapes |= p->funcs[f].kind == SONDE_FUNC_TORCH && p->funcs[f].line == SONDE_TORCH_SHAPES_LINE;
    if (o->by_shape && !shapes) {
        snprintf(err, errlen, "this profile has no input shapes: record them with sonde run "
                 "--torch-shapes");
        return -1;
    }
    rows r = { .p = p, .by_shape = o->by_shape };
    if (find_below(&r, p) < 0 || (o->by_caller ? from_tree(&r, p) : from_stats(&r, p, s)) < 0) {
        free(r.row);
        free(r.below);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (r.n == 0) {
        free(r.below);
        snprintf(err, errlen, "no PyTorch operators in this profile (record them with "
                 "sonde run --torch)");
        return -1;
    }
    double self_total = 0;
    for (size_t i = 0; i < r.n; i++)
        self_total += r.row[i].self;
    sorter st = { p, (enum ops_key)key };
    qsort_r(r.row, r.n, sizeof *r.row, compare_rows, &st);
    size_t n = o->limit > 0 && (size_t)o->limit < r.n ? (size_t)o->limit : r.n;
    put_table(b, p, r.row, n, o, self_total, r.below != NULL);
    free(r.row);
    free(r.below);
    return 0;
}
