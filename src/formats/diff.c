/* diff.c - what changed between two profiles; see diff.h. */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_tree.h"

static int by_label(const void *x, const void *y)
{
    return strcmp(((const sonde_change *)x)->label, ((const sonde_change *)y)->label);
}

static int by_change(const void *x, const void *y)
{
    const sonde_change *a = x, *b = y;
    double da = fabs(a->after - a->before), db = fabs(b->after - b->before);
    return da < db ? 1 : da > db ? -1 : strcmp(a->label, b->label);
}

int sonde_diff_changes(const sonde_profile *pb, const sonde_stats *sb, const sonde_profile *pa,
                       const sonde_stats *sa, sonde_change **out, uint32_t *count)
{
    uint32_t n = 0;
    sonde_change *c = calloc((size_t)sb->nfuncs + sa->nfuncs + 1, sizeof *c);
    if (!c)
        return -1;
    const sonde_profile *ps[2] = { pb, pa };
    const sonde_stats *ss[2] = { sb, sa };
    for (int side = 0; side < 2; side++)
        for (uint32_t f = 0; f < ss[side]->nfuncs && f < ps[side]->nfuncs; f++) {
            const sonde_fstat *fs = &ss[side]->funcs[f];
            if (!fs->present)
                continue;
            view_func_label(ps[side], f, c[n].label, sizeof c[n].label);
            if (side) {
                c[n].after = fs->tottime;
                c[n].cum_after = fs->cumtime;
            } else {
                c[n].before = fs->tottime;
                c[n].cum_before = fs->cumtime;
            }
            n++;
        }
    qsort(c, n, sizeof *c, by_label);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        sonde_change *last = kept ? &c[kept - 1] : NULL;
        if (last && strcmp(last->label, c[i].label) == 0) {
            last->before += c[i].before;
            last->after += c[i].after;
            last->cum_before += c[i].cum_before;
            last->cum_after += c[i].cum_after;
        } else {
            c[kept++] = c[i];
        }
    }
    qsort(c, kept, sizeof *c, by_change);
    *out = c;
    *count = kept;
    return 0;
}

void sonde_diff_table(sonde_buf *b, const sonde_change *c, uint32_t n, uint32_t limit)
{
    uint32_t shown = limit && limit < n ? limit : n;
    sonde_buf_printf(b, "Functions whose own time changed most (%u of %u):\n\n", shown, n);
    char header[160];
    snprintf(header, sizeof header, "%12s %12s %12s %8s %12s %12s  %s", "own before", "own after",
             "change", "change%", "cum before", "cum after", "function");
    sonde_buf_underlined(b, header);
    for (uint32_t i = 0; i < shown; i++) {
        double d = c[i].after - c[i].before;
        char share[16];
        if (c[i].before > 0)
            snprintf(share, sizeof share, "%+.1f%%", 100 * d / c[i].before);
        else
            snprintf(share, sizeof share, "%s", c[i].after > 0 ? "new" : "");
        if (c[i].after <= 0 && c[i].before > 0)
            snprintf(share, sizeof share, "gone");
        sonde_buf_printf(b, "%12.6f %12.6f %+12.6f %8s %12.6f %12.6f  %s\n", c[i].before,
                         c[i].after, d, share, c[i].cum_before, c[i].cum_after, c[i].label);
    }
}
