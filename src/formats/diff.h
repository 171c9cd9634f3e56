/* diff.h - what changed between two profiles of one program: each
 * function's own time before and after, matched by (file, line, name). */
#ifndef SONDE_DIFF_H
#define SONDE_DIFF_H

#include <stdint.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

typedef struct sonde_change {
    char label[512];       /* file:line(name) */
    double before, after;  /* seconds of own time */
    double cum_before, cum_after;
} sonde_change;

/* Every function of either profile, largest change of own time first.
 * *out is malloc'd.  0, or -1 on out of memory. */
int sonde_diff_changes(const sonde_profile *pb, const sonde_stats *sb, const sonde_profile *pa,
                       const sonde_stats *sa, sonde_change **out, uint32_t *count);

/* The table sonde diff prints: the `limit` largest changes (0 = all). */
void sonde_diff_table(sonde_buf *b, const sonde_change *c, uint32_t n, uint32_t limit);

#endif
