/* diff.h - what changed between two profiles of one program: each
 * function's own time before and after, matched by their labels
 * (sonde_diff_func_label: file:line(name), object addresses left out). */
#ifndef SONDE_DIFF_H
#define SONDE_DIFF_H

#include <stdint.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"
#include "../core/strtab.h"

typedef struct sonde_change {
    uint32_t label;        /* string id in the diff's labels */
    double before, after;  /* seconds of own time */
    double cum_before, cum_after;
} sonde_change;

/* The diff owns its arrays; sonde_diff_free releases them. */
typedef struct sonde_diff {
    sonde_strtab labels;
    sonde_change *changes; /* every function of either profile, largest change first */
    uint32_t n;
} sonde_diff;

/* "file:line(name)": a function's label, the key that matches functions
 * across two profiles; object addresses (" at 0x7f...") are left out, since
 * they differ from run to run. */
void sonde_diff_func_label(sonde_buf *b, const sonde_profile *p, uint32_t func);

/* Before two profiles are compared: a relative file name on one side
 * ("prog.py": cProfile writes the script as it was given) takes the name
 * of the other side's absolute file that ends in it, where exactly one
 * does, so a function has one label on both sides.  0, or -1 on out of
 * memory. */
int sonde_diff_match_files(sonde_profile *before, sonde_profile *after);

/* Compares `after` (pa, sa) with `before` (pb, sb) into d.  0, or -1 on
 * out of memory. */
int sonde_diff_compute(sonde_diff *d, const sonde_profile *pb, const sonde_stats *sb,
                       const sonde_profile *pa, const sonde_stats *sa);
void sonde_diff_free(sonde_diff *d);

static inline const char *sonde_diff_label(const sonde_diff *d, const sonde_change *c)
{
    return sonde_strtab_get(&d->labels, c->label);
}

/* The table sonde diff prints: the `limit` largest changes (0 = all). */
void sonde_diff_table_write(sonde_buf *b, const sonde_diff *d, uint32_t limit);

#endif
