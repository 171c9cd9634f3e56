/* format.h - the table of output formats behind one interface.
 *
 * Each writer renders a profile (its tree) and its stats into a buffer,
 * which may stream to a file (buf.h).  Writers that need the
 * calling-context tree say so, since a profile read back from a .prof file
 * has only the stats.  A writer whose output would be unreasonably large
 * refuses: it returns -1 with the reason in b->why. */
#ifndef SONDE_FORMAT_H
#define SONDE_FORMAT_H

#include <stdint.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

/* What a user may ask of a writer; a NULL pointer gives the defaults. */
typedef struct sonde_format_opts {
    int short_paths;      /* collapsed: file names as py-spy shows them (short_path.h) */
    const char *cwd;      /* the current folder, for short_paths */
    uint64_t min_count;   /* collapsed: stacks counting less are left out */
} sonde_format_opts;

typedef struct sonde_format {
    const char *name;
    const char *summary;
    int needs_tree;
    int needs_timeline;   /* samples in time order: only sonde record has them */
    /* Returns 0, or -1 when out of memory (b->oom is then set too) or when
     * it refused (b->why says why). */
    int (*write)(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                 const sonde_format_opts *o);
} sonde_format;

/* The format called name, or NULL. */
const sonde_format *sonde_format_find(const char *name);
/* "pstats, collapsed, json": for messages. */
const char *sonde_format_names(void);

/* Writes p and s in format f to path ("-" = standard output), streaming
 * (no more memory than a chunk, whatever the size).  0, or -1 with a
 * message in err; a file left incomplete is removed. */
int sonde_format_write_file(const sonde_format *f, const char *path, const sonde_profile *p,
                            const sonde_stats *s, const sonde_format_opts *o, char *err,
                            size_t errlen);

int sonde_pstats_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o);
int sonde_collapsed_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_format_opts *o);
int sonde_json_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                     const sonde_format_opts *o);
int sonde_chrome_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o);
int sonde_flamegraph_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o);
int sonde_speedscope_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o);

#endif
