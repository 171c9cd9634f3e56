/* diff.c - what changed between two profiles; see diff.h. */
#include "diff.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"


/* Appends s to b without its " at 0x<hex digits>": the address in a label
 * such as "<built-in method __new__ of type object at 0x7f...>" changes
 * from one run to the next. */
static void put_without_addresses(sonde_buf *b, const char *s)
{
    const char *at;
    while ((at = strstr(s, " at 0x")) != NULL) {
        const char *end = at + 6;
        while (isxdigit((unsigned char)*end))
            end++;
        /* " at 0x" without digits is not an address: kept */
        sonde_buf_put(b, s, (size_t)((end == at + 6 ? end : at) - s));
        s = end;
    }
    sonde_buf_puts(b, s);
}

void sonde_diff_func_label(sonde_buf *b, const sonde_profile *p, uint32_t func)
{
    const sonde_func *f = &p->funcs[func];
    put_without_addresses(b, sonde_profile_str(p, f->file));
    sonde_buf_printf(b, ":%d(", f->line);
    put_without_addresses(b, sonde_profile_str(p, f->name));
    sonde_buf_putc(b, ')');
}

/* qsort_r's order for d's changes: largest change first, then by label. */
static int by_change(const void *x, const void *y, void *d)
{
    const sonde_change *a = x, *b = y;
    double da = fabs(a->after - a->before), db = fabs(b->after - b->before);
    if (da != db)
        return da < db ? 1 : -1;
    return strcmp(sonde_diff_label(d, a), sonde_diff_label(d, b));
}

/* The change of label id, made (zeroed) when new.  NULL on out of memory. */
static sonde_change *change_of(sonde_diff *d, uint32_t id, size_t *cap)
{
    if (id >= *cap) {
        size_t had = *cap;
        sonde_change *c = sonde_grow(d->changes, cap, (size_t)id + 1, sizeof *c, UINT32_MAX);
        if (!c)
            return NULL;
        memset(c + had, 0, (*cap - had) * sizeof *c);
        d->changes = c;
    }
    if (id >= d->n)
        d->n = id + 1;
    d->changes[id].label = id;
    return &d->changes[id];
}

/* Adds each function of one side to the change of its label.  0, or -1 on
 * out of memory. */
static int add_side(sonde_diff *d, const sonde_profile *p, const sonde_stats *s, int after,
                    size_t *cap)
{
    sonde_buf label;
    sonde_buf_init(&label);
    int rc = 0;
    for (uint32_t f = 0; rc == 0 && f < s->nfuncs && f < p->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        if (!fs->present)
            continue;
        label.len = 0;
        sonde_diff_func_label(&label, p, f);
        int64_t id = sonde_buf_ok(&label) ? sonde_strtab_intern(&d->labels, label.data, label.len)
                                          : -1;
        sonde_change *c = id < 0 ? NULL : change_of(d, (uint32_t)id, cap);
        if (!c) {
            rc = -1;
            break;
        }
        *(after ? &c->after : &c->before) += fs->tottime;
        *(after ? &c->cum_after : &c->cum_before) += fs->cumtime;
    }
    sonde_buf_free(&label);
    return rc;
}

int sonde_diff_compute(sonde_diff *d, const sonde_profile *pb, const sonde_stats *sb,
                       const sonde_profile *pa, const sonde_stats *sa)
{
    memset(d, 0, sizeof *d);
    sonde_strtab_init(&d->labels);
    size_t cap = 0;
    if (add_side(d, pb, sb, 0, &cap) < 0 || add_side(d, pa, sa, 1, &cap) < 0) {
        sonde_diff_free(d);
        return -1;
    }
    if (d->n) /* (no changes: no array to sort, and qsort_r wants one) */
        qsort_r(d->changes, d->n, sizeof *d->changes, by_change, d);
    return 0;
}

void sonde_diff_free(sonde_diff *d)
{
    sonde_strtab_free(&d->labels);
    free(d->changes);
    memset(d, 0, sizeof *d);
}

void sonde_diff_table_write(sonde_buf *b, const sonde_diff *d, uint32_t limit)
{
    uint32_t shown = limit && limit < d->n ? limit : d->n;
    sonde_buf_printf(b, "Functions whose own time changed most (%u of %u):\n\n", shown, d->n);
    char header[160];
    snprintf(header, sizeof header, "%12s %12s %12s %8s %12s %12s  %s", "own before", "own after",
             "change", "change%", "cum before", "cum after", "function");
    sonde_buf_underlined(b, header);
    for (uint32_t i = 0; i < shown; i++) {
        const sonde_change *c = &d->changes[i];
        double delta = c->after - c->before;
        char share[16];
        if (c->before > 0)
            snprintf(share, sizeof share, "%+.1f%%", 100 * delta / c->before);
        else
            snprintf(share, sizeof share, "%s", c->after > 0 ? "new" : "");
        if (c->after <= 0 && c->before > 0)
            snprintf(share, sizeof share, "gone");
        sonde_buf_printf(b, "%12.6f %12.6f %+12.6f %8s %12.6f %12.6f  ", c->before, c->after,
                         delta, share, c->cum_before, c->cum_after);
        sonde_buf_text_str(b, sonde_diff_label(d, c));
        sonde_buf_putc(b, '\n');
    }
}
