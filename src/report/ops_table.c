/* ops_table.c - the operator table; see ops_table.h. */
#include "ops_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/short_path.h"
#include "../formats/load.h"
#include "table.h"

enum ops_key { BY_TOTAL, BY_SELF, BY_CALLS, BY_AVG, BY_NAME, BY_DEVICE_TOTAL, BY_DEVICE_SELF,
               BY_DEVICE_AVG, BY_MEM, BY_SELF_MEM, BY_DEVICE_MEM, BY_SELF_DEVICE_MEM };

/* Sort keys: torch's names and pstats' (read-only table). */
static const struct {
    const char *name;
    enum ops_key key;
} ops_keys[] = {
    { "cpu_time_total", BY_TOTAL }, { "cumtime", BY_TOTAL },
    { "self_cpu_time_total", BY_SELF }, { "tottime", BY_SELF },
    { "count", BY_CALLS }, { "ncalls", BY_CALLS }, { "calls", BY_CALLS },
    { "cpu_time", BY_AVG }, { "name", BY_NAME },
    { "cuda_time_total", BY_DEVICE_TOTAL }, { "device_time_total", BY_DEVICE_TOTAL },
    { "self_cuda_time_total", BY_DEVICE_SELF }, { "self_device_time_total", BY_DEVICE_SELF },
    { "cuda_time", BY_DEVICE_AVG }, { "device_time", BY_DEVICE_AVG },
    { "cpu_memory_usage", BY_MEM }, { "self_cpu_memory_usage", BY_SELF_MEM },
    { "cuda_memory_usage", BY_DEVICE_MEM }, { "device_memory_usage", BY_DEVICE_MEM },
    { "self_cuda_memory_usage", BY_SELF_DEVICE_MEM },
    { "self_device_memory_usage", BY_SELF_DEVICE_MEM },
};

static int find_key(const char *name)
{
    for (size_t i = 0; i < sizeof ops_keys / sizeof *ops_keys; i++)
        if (strcmp(ops_keys[i].name, name) == 0)
            return (int)ops_keys[i].key;
    return -1;
}

int sonde_ops_sort_known(const char *key) { return find_key(key) >= 0; }

const char sonde_ops_sort_names[] =
    "cpu_time_total, self_cpu_time_total, count, cpu_time, cuda_time_total, "
    "self_cuda_time_total, cuda_time, cpu_memory_usage, self_cpu_memory_usage, "
    "cuda_memory_usage, self_cuda_memory_usage or name";

/* One row: an operator, region or GPU kernel (and, by caller, the Python
 * function above it); func is its first function (of its shapes, by
 * shape). */
typedef struct op_row {
    uint32_t func;
    uint32_t caller;    /* SONDE_NO_FUNC when not split by caller */
    uint32_t step;      /* by step: the step's number, or SONDE_NO_STEP; else 0 */
    double whole;       /* the CPU self time its percentages are of: its step's
                           rows' (by step), else every row's */
    uint64_t calls;
    double self, total; /* seconds on the CPU */
    double device_self, device_total; /* seconds on the GPU */
    int64_t mem, self_mem; /* net CPU bytes (--torch-memory) */
    int64_t device_mem, self_device_mem; /* net GPU bytes */
} op_row;

typedef struct rows {
    const sonde_profile *p;
    /* per node, for each figure the profile has: the sum of the figures
     * of the nearest torch nodes beneath it */
    int64_t *below[SONDE_NFIGURES];
    int64_t *kernels; /* per node, with GPU time: its kernels' (children's) */
    int by_shape;
    op_row *row;
    size_t n, cap;
    /* Finding rows among many (a row per operator and step): each torch
     * function's row name (the first function of its name, or by shape
     * itself; SONDE_NO_FUNC until asked), the first function of each
     * name's hash, and each row's index by its key (row_key). */
    uint32_t *named;
    sonde_u64map first_named, at;
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

/* The function that names func's row (see rows.named); SONDE_NO_FUNC on
 * out of memory. */
static uint32_t row_name(rows *r, uint32_t func)
{
    if (r->by_shape)
        return func;
    if (!r->named) {
        if (!(r->named = malloc(((size_t)r->p->nfuncs + 1) * sizeof *r->named)))
            return SONDE_NO_FUNC;
        for (uint32_t f = 0; f < r->p->nfuncs; f++)
            r->named[f] = SONDE_NO_FUNC;
    }
    if (r->named[func] != SONDE_NO_FUNC)
        return r->named[func];
    const unsigned char *name = (const unsigned char *)sonde_profile_str(r->p,
                                                                       r->p->funcs[func].name);
    uint64_t hash = 14695981039346656037ull; /* FNV-1a */
    for (size_t i = 0, n = name_len(r->p, func); i < n; i++)
        hash = (hash ^ name[i]) * 1099511628211ull;
    uint32_t *first = sonde_u64map_slot(&r->first_named, hash, func);
    if (!first)
        return SONDE_NO_FUNC;
    /* (two names of one hash: the second's functions are rows of their own) */
    return r->named[func] = same_row(r, *first, func) ? *first : func;
}

static uint64_t row_key(uint32_t name, uint32_t caller, uint32_t step)
{
    return ((uint64_t)name << 32 | step) ^ ((uint64_t)caller * 0x9E3779B97F4A7C15ull);
}

static op_row *row_for(rows *r, uint32_t func, uint32_t caller, uint32_t step)
{
    uint32_t name = row_name(r, func);
    if (name == SONDE_NO_FUNC)
        return NULL;
    uint32_t *at = sonde_u64map_slot(&r->at, row_key(name, caller, step), (uint32_t)r->n);
    if (!at)
        return NULL;
    op_row *row = *at < r->n ? &r->row[*at] : NULL;
    if (row && row->caller == caller && row->step == step && same_row(r, row->func, func))
        return row;
    for (size_t i = 0; row && i < r->n; i++) /* another row of that key */
        if (r->row[i].caller == caller && r->row[i].step == step &&
            same_row(r, r->row[i].func, func))
            return &r->row[i];
    op_row *grown = sonde_grow(r->row, &r->cap, r->n + 1, sizeof *grown, UINT32_MAX - 1);
    if (!grown)
        return NULL;
    r->row = grown;
    r->row[r->n] = (op_row){ .func = func, .caller = caller, .step = step };
    return &r->row[r->n++];
}

static int is_kernel(const sonde_profile *p, uint32_t func)
{
    return p->funcs[func].kind == SONDE_FUNC_TORCH &&
           p->funcs[func].line == SONDE_TORCH_KERNEL_LINE;
}

/* A torch node's figure, its callees' included: its own (an operator's
 * bytes, a kernel's time), else (a region's bytes, an operator's GPU time)
 * that of the torch nodes beneath it. */
static int64_t node_figure(const rows *r, enum sonde_node_figure which, uint32_t n)
{
    int64_t m = sonde_profile_figure_of(r->p, which, n);
    return m == SONDE_NO_FIGURE ? r->below[which][n] : m;
}

static void free_rows(rows *r)
{
    for (int which = 0; which < SONDE_NFIGURES; which++)
        free(r->below[which]);
    free(r->kernels);
    free(r->row);
    free(r->named);
    sonde_u64map_free(&r->first_named);
    sonde_u64map_free(&r->at);
}

/* r->below for each figure the profile has, and r->kernels: children
 * come after their parents, so one pass from the last node up adds each
 * to its parent.  0, or -1 on out of memory. */
static int find_below(rows *r, const sonde_profile *p)
{
    size_t n = p->nnodes ? p->nnodes : 1;
    for (int which = 0; which < SONDE_NFIGURES; which++)
        if (p->figure[which] && !(r->below[which] = calloc(n, sizeof *r->below[which])))
            return -1;
    if (p->figure[SONDE_DEVICE_NS] && !(r->kernels = calloc(n, sizeof *r->kernels)))
        return -1;
    for (uint32_t i = p->nnodes; i-- > 1;) {
        const sonde_node *node = &p->nodes[i];
        if (node->parent == SONDE_NO_NODE || node->parent >= i)
            continue;
        int torch = node->func != SONDE_NO_FUNC && p->funcs[node->func].kind == SONDE_FUNC_TORCH;
        for (int which = 0; which < SONDE_NFIGURES; which++)
            if (r->below[which])
                r->below[which][node->parent] +=
                    torch ? node_figure(r, (enum sonde_node_figure)which, i) : r->below[which][i];
        if (r->kernels && torch && is_kernel(p, node->func))
            r->kernels[node->parent] += node_figure(r, SONDE_DEVICE_NS, i);
    }
    return 0;
}

/* Node n's figures into its row: each figure's whole, and its own part
 * (its bytes less those beneath; an operator's GPU time, that of its
 * kernels). */
static void add_figures(const rows *r, op_row *row, uint32_t n)
{
    if (r->below[SONDE_CPU_MEM]) {
        row->mem += node_figure(r, SONDE_CPU_MEM, n);
        row->self_mem += node_figure(r, SONDE_CPU_MEM, n) - r->below[SONDE_CPU_MEM][n];
    }
    if (r->below[SONDE_DEVICE_MEM]) {
        row->device_mem += node_figure(r, SONDE_DEVICE_MEM, n);
        row->self_device_mem += node_figure(r, SONDE_DEVICE_MEM, n) -
                                r->below[SONDE_DEVICE_MEM][n];
    }
    if (r->kernels) {
        double total = (double)node_figure(r, SONDE_DEVICE_NS, n) * 1e-9;
        row->device_total += total;
        row->device_self += is_kernel(r->p, r->p->nodes[n].func) ? total
                                                                 : (double)r->kernels[n] * 1e-9;
    }
}

static int from_stats(rows *r, const sonde_profile *p, const sonde_stats *s)
{
    for (uint32_t f = 0; f < p->nfuncs && f < s->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (p->funcs[f].kind != SONDE_FUNC_TORCH || !fs->present)
            continue;
        op_row *row = row_for(r, f, SONDE_NO_FUNC, 0);
        if (!row)
            return -1;
        row->calls += fs->ncalls;
        row->self += fs->tottime;
        row->total += fs->cumtime;
    }
    int figures = r->kernels || r->below[SONDE_CPU_MEM] || r->below[SONDE_DEVICE_MEM];
    for (uint32_t n = 1; figures && n < p->nnodes; n++) {
        uint32_t f = p->nodes[n].func;
        if (f == SONDE_NO_FUNC || p->funcs[f].kind != SONDE_FUNC_TORCH)
            continue;
        op_row *row = row_for(r, f, SONDE_NO_FUNC, 0);
        if (!row)
            return -1;
        add_figures(r, row, n);
    }
    return 0;
}

/* Which nodes are a node of function f or beneath one: children come
 * after their parents, so one pass down.  NULL on out of memory. */
static uint8_t *nodes_beneath(const sonde_profile *p, uint32_t f)
{
    uint8_t *in = calloc(p->nnodes ? p->nnodes : 1, 1);
    for (uint32_t n = 1; in && n < p->nnodes; n++) {
        uint32_t up = p->nodes[n].parent;
        in[n] = p->nodes[n].func == f || (up != SONDE_NO_NODE && up < n && in[up]);
    }
    return in;
}

/* The nearest Python function above torch node n (SONDE_NO_FUNC for
 * none); *nested: whether the same operator is open between them. */
static uint32_t caller_of(const sonde_profile *p, uint32_t n, int *nested)
{
    uint32_t up = p->nodes[n].parent;
    *nested = 0;
    for (uint32_t depth = 0; up != SONDE_NO_NODE && depth < p->nnodes; depth++) {
        uint32_t f = p->nodes[up].func;
        if (f == SONDE_NO_FUNC)
            break;
        if (p->funcs[f].kind == SONDE_FUNC_PYTHON)
            return f;
        *nested |= f == p->nodes[n].func;
        up = p->nodes[up].parent;
    }
    return SONDE_NO_FUNC;
}

static int is_torch_node(const sonde_profile *p, uint32_t n)
{
    return p->nodes[n].func != SONDE_NO_FUNC && p->funcs[p->nodes[n].func].kind == SONDE_FUNC_TORCH;
}

/* Torch node n's row for step (0 when not split by step): by its caller
 * with by_caller; *nested as caller_of.  NULL on out of memory. */
static op_row *node_row(rows *r, const sonde_ops_opts *o, uint32_t n, uint32_t step,
                        int *nested)
{
    uint32_t caller = caller_of(r->p, n, nested);
    return row_for(r, r->p->nodes[n].func, o->by_caller ? caller : SONDE_NO_FUNC, step);
}

/* Each operator node (with one_process, beneath its frame), under the
 * nearest Python function above it (by_caller; else one row per
 * operator); a node's total counts unless the same operator is open above
 * it there (pstats' rule for recursion). */
static int from_tree(rows *r, const sonde_profile *p, const sonde_ops_opts *o)
{
    uint8_t *in = o->one_process ? nodes_beneath(p, o->process_func) : NULL;
    if (o->one_process && !in)
        return -1;
    for (uint32_t n = 1; n < p->nnodes; n++) {
        const sonde_node *node = &p->nodes[n];
        if (!is_torch_node(p, n) || (in && !in[n]))
            continue;
        int nested;
        op_row *row = node_row(r, o, n, 0, &nested);
        if (!row) {
            free(in);
            return -1;
        }
        row->calls += node->calls;
        add_figures(r, row, n);
        row->self += (double)node->self * p->seconds_per_tick;
        if (!nested)
            row->total += (double)node->total * p->seconds_per_tick;
    }
    free(in);
    return 0;
}

/* by_step: each operator's and region's part of each training step
 * (step_parts.h), as from_tree makes rows of whole nodes (GPU kernels
 * and memory are not kept by step). */
static int from_steps(rows *r, const sonde_profile *p, const sonde_ops_opts *o)
{
    uint8_t *in = o->one_process ? nodes_beneath(p, o->process_func) : NULL;
    if (o->one_process && !in)
        return -1;
    for (uint32_t i = 0; i < p->nstep_parts; i++) {
        const sonde_step_part *part = &p->step_parts[i];
        uint32_t n = part->node;
        if (n >= p->nnodes || !is_torch_node(p, n) || (in && !in[n]))
            continue;
        int nested;
        op_row *row = node_row(r, o, n, part->step, &nested);
        if (!row) {
            free(in);
            return -1;
        }
        row->calls += part->calls;
        row->self += (double)(part->self > 0 ? part->self : 0) * p->seconds_per_tick;
        if (!nested)
            row->total += (double)part->total * p->seconds_per_tick;
    }
    free(in);
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
    if (a->step != b->step) /* by step: in step order, those in none last */
        return a->step < b->step ? -1 : 1;
    int c = 0;
    switch (st->key) {
    case BY_TOTAL: c = cmp_num(a->total, b->total); break;
    case BY_SELF: c = cmp_num(a->self, b->self); break;
    case BY_CALLS: c = cmp_num((double)a->calls, (double)b->calls); break;
    case BY_AVG:
        c = cmp_num(a->calls ? a->total / (double)a->calls : 0,
                    b->calls ? b->total / (double)b->calls : 0);
        break;
    case BY_DEVICE_TOTAL: c = cmp_num(a->device_total, b->device_total); break;
    case BY_DEVICE_SELF: c = cmp_num(a->device_self, b->device_self); break;
    case BY_DEVICE_AVG:
        c = cmp_num(a->calls ? a->device_total / (double)a->calls : 0,
                    b->calls ? b->device_total / (double)b->calls : 0);
        break;
    case BY_MEM: c = cmp_num((double)a->mem, (double)b->mem); break;
    case BY_SELF_MEM: c = cmp_num((double)a->self_mem, (double)b->self_mem); break;
    case BY_DEVICE_MEM: c = cmp_num((double)a->device_mem, (double)b->device_mem); break;
    case BY_SELF_DEVICE_MEM:
        c = cmp_num((double)a->self_device_mem, (double)b->self_device_mem);
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

/* A rule under columns this wide: the step's when step_width is not 0,
 * the name's, `columns` of 12, then the shapes' when shapes_width is not
 * 0. */
static void put_rule(sonde_buf *b, int step_width, int name_width, int columns, int shapes_width)
{
    for (int i = 0; i < step_width; i++)
        sonde_buf_putc(b, i + 2 < step_width ? '-' : ' ');
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

/* The columns after the name, torch.profiler's: those of GPU time (when
 * a GPU kernel was recorded) and of memory (--torch-memory; the GPU's
 * when its allocator was recorded) between CPU time's and the calls. */
enum ops_column {
    COL_SELF_PCT, COL_SELF, COL_TOTAL_PCT, COL_TOTAL, COL_AVG,
    COL_DEVICE_SELF, COL_DEVICE_SELF_PCT, COL_DEVICE_TOTAL, COL_DEVICE_AVG,
    COL_MEM, COL_SELF_MEM, COL_DEVICE_MEM, COL_SELF_DEVICE_MEM, COL_CALLS, NCOLUMNS
};
static const char *const headers[NCOLUMNS] = {
    "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
    "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg",
    "CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem", "# of Calls",
};

/* Which columns a table of r shows. */
static void pick_columns(const rows *r, int shown[NCOLUMNS])
{
    for (int c = 0; c < NCOLUMNS; c++)
        shown[c] = c <= COL_AVG || c == COL_CALLS ||
                   (c <= COL_DEVICE_AVG && r->kernels) ||
                   ((c == COL_MEM || c == COL_SELF_MEM) && r->below[SONDE_CPU_MEM]) ||
                   ((c == COL_DEVICE_MEM || c == COL_SELF_DEVICE_MEM) &&
                    r->below[SONDE_DEVICE_MEM]);
}

static void put_percent(sonde_buf *b, double part, double whole)
{
    sonde_buf_printf(b, "%11.2f%%  ", whole > 0 ? part * 100.0 / whole : 0);
}

/* One row's cells after its name. */
static void put_cells(sonde_buf *b, const op_row *r, const int shown[NCOLUMNS],
                      double device_self_total)
{
    for (int c = 0; c < NCOLUMNS; c++) {
        if (!shown[c])
            continue;
        switch ((enum ops_column)c) {
        case COL_SELF_PCT: put_percent(b, r->self, r->whole); break;
        case COL_SELF: put_time(b, r->self, 12); break;
        case COL_TOTAL_PCT: put_percent(b, r->total, r->whole); break;
        case COL_TOTAL: put_time(b, r->total, 12); break;
        case COL_AVG: put_time(b, r->calls ? r->total / (double)r->calls : 0, 12); break;
        case COL_DEVICE_SELF: put_time(b, r->device_self, 12); break;
        case COL_DEVICE_SELF_PCT: put_percent(b, r->device_self, device_self_total); break;
        case COL_DEVICE_TOTAL: put_time(b, r->device_total, 12); break;
        case COL_DEVICE_AVG:
            put_time(b, r->calls ? r->device_total / (double)r->calls : 0, 12);
            break;
        case COL_MEM: put_memory(b, r->mem); break;
        case COL_SELF_MEM: put_memory(b, r->self_mem); break;
        case COL_DEVICE_MEM: put_memory(b, r->device_mem); break;
        case COL_SELF_DEVICE_MEM: put_memory(b, r->self_device_mem); break;
        case COL_CALLS: sonde_buf_printf(b, "%12llu  ", (unsigned long long)r->calls); break;
        case NCOLUMNS: break;
        }
    }
}

/* The step column's width, its gap included (by step). */
#define STEP_WIDTH 8

static void put_table(sonde_buf *b, const rows *all, const op_row *row, size_t n,
                      const sonde_ops_opts *o, double self_total, double device_self_total)
{
    const sonde_profile *p = all->p;
    int shown[NCOLUMNS], columns = 0;
    pick_columns(all, shown);
    for (int c = 0; c < NCOLUMNS; c++)
        columns += shown[c];
    int width = 4, shapes_width = o->by_shape ? 12 : 0, step_width = o->by_step ? STEP_WIDTH : 0;
    for (size_t i = 0; i < n; i++) {
        int w = (int)name_len(p, row[i].func);
        width = w > width ? w : width;
        w = o->by_shape ? (int)strlen(shapes_of(p, row[i].func)) : 0;
        shapes_width = w > shapes_width ? w : shapes_width;
    }
    put_rule(b, step_width, width, columns, shapes_width);
    if (o->by_step)
        sonde_buf_printf(b, "%*s  ", STEP_WIDTH - 2, "Step");
    sonde_buf_printf(b, "%*s", width, "Name");
    for (int c = 0; c < NCOLUMNS; c++)
        if (shown[c])
            sonde_buf_printf(b, "  %12s", headers[c]);
    if (o->by_shape)
        sonde_buf_printf(b, "  %*s", shapes_width, "Input Shapes");
    sonde_buf_puts(b, o->by_caller ? "  Python caller\n" : "  \n");
    put_rule(b, step_width, width, columns, shapes_width);
    for (size_t i = 0; i < n; i++) {
        const op_row *r = &row[i];
        const char *name = sonde_profile_str(p, p->funcs[r->func].name);
        size_t len = name_len(p, r->func);
        char *named = strndup(name, len);
        if (o->by_step && r->step == SONDE_NO_STEP)
            sonde_buf_printf(b, "%*s  ", STEP_WIDTH - 2, "-");
        else if (o->by_step)
            sonde_buf_printf(b, "%*u  ", STEP_WIDTH - 2, r->step);
        sonde_buf_printf(b, "%*s", width - (int)len, "");
        if (named)
            sonde_buf_text_str(b, named);
        else
            b->oom = 1;
        free(named);
        sonde_buf_puts(b, "  ");
        put_cells(b, r, shown, device_self_total);
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
    put_rule(b, step_width, width, columns, shapes_width);
    char text[64];
    format_time(text, sizeof text, self_total);
    sonde_buf_printf(b, "Self CPU time total: %s\n", text);
    if (shown[COL_DEVICE_SELF]) {
        format_time(text, sizeof text, device_self_total);
        sonde_buf_printf(b, "Self CUDA time total: %s\n", text);
    }
}

int sonde_ops_table_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_ops_opts *o, char *err, size_t errlen)
{
    int key = find_key(o->sort);
    if (key < 0) {
        snprintf(err, errlen, "unknown sort key '%s' for --ops (use %s)", o->sort,
                 sonde_ops_sort_names);
        return -1;
    }
    if ((o->by_caller || o->one_process) && !sonde_load_has_tree(p)) {
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
    if (o->by_step && !p->nstep_parts) {
        snprintf(err, errlen, "this profile has no training steps: record it with sonde run "
                 "--torch -f json, on a program that steps an optimizer or calls sonde.step()");
        return -1;
    }
    rows r = { .p = p, .by_shape = o->by_shape };
    int tree = o->by_caller || o->one_process, rc;
    if (o->by_step) /* (no figures: GPU time and memory are not kept by step) */
        rc = from_steps(&r, p, o);
    else
        rc = find_below(&r, p) < 0 ? -1 : tree ? from_tree(&r, p, o) : from_stats(&r, p, s);
    if (rc < 0) {
        free_rows(&r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (r.n == 0) {
        free_rows(&r);
        snprintf(err, errlen, "no PyTorch operators in this profile (record them with "
                 "sonde run --torch)");
        return -1;
    }
    /* the percentages' wholes: the CPU's self times, the GPU's kernels' */
    double self_total = 0, device_self_total = 0;
    for (size_t i = 0; i < r.n; i++) {
        self_total += r.row[i].self;
        if (is_kernel(p, r.row[i].func))
            device_self_total += r.row[i].device_self;
    }
    sorter st = { p, (enum ops_key)key };
    qsort_r(r.row, r.n, sizeof *r.row, compare_rows, &st);
    /* each row's whole: every row's self time, or by step its step's (a
     * step's rows are together) */
    for (size_t i = 0, end; i < r.n; i = end) {
        double whole = 0;
        for (end = i + 1; end < r.n && (!o->by_step || r.row[end].step == r.row[i].step); end++)
            ;
        for (size_t j = i; j < end; j++)
            whole += r.row[j].self;
        for (size_t j = i; j < end; j++)
            r.row[j].whole = whole;
    }
    /* the first `limit` rows (by step, of each step) */
    size_t n = 0;
    for (size_t i = 0, in_step = 0; i < r.n; i++) {
        in_step = i && r.row[i].step == r.row[i - 1].step ? in_step + 1 : 0;
        if (o->limit <= 0 || in_step < (size_t)o->limit)
            r.row[n++] = r.row[i];
    }
    put_table(b, &r, r.row, n, o, self_total, device_self_total);
    free_rows(&r);
    return 0;
}
