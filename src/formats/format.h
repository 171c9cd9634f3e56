/* format.h - the table of output formats behind one interface.
 *
 * Each writer renders a profile (its tree) and its stats into a buffer.
 * Writers that need the calling-context tree say so, since a profile read
 * back from a .prof file has only the stats. */
#ifndef SONDE_FORMAT_H
#define SONDE_FORMAT_H

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

typedef struct sonde_format {
    const char *name;
    const char *summary;
    int needs_tree;
    int needs_timeline;   /* samples in time order: only sonde record has them */
    /* Returns 0, or -1 on out of memory (b->oom is then set too). */
    int (*write)(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);
} sonde_format;

/* The format called name, or NULL. */
const sonde_format *sonde_format_find(const char *name);
/* "pstats, collapsed, json": for messages. */
const char *sonde_format_names(void);

int sonde_write_pstats(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);
int sonde_write_collapsed(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);
int sonde_write_json(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);
int sonde_write_chrome(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);
int sonde_write_flamegraph(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);
int sonde_write_speedscope(sonde_buf *b, const sonde_profile *p, const sonde_stats *s);

#endif
