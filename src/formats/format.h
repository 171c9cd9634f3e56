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

/* A profile to write in a format: sonde_format_fill (a sonde_outfile_fill,
 * see outfile.h) appends it to b.  0, or -1 as the writer returns. */
typedef struct sonde_format_job {
    const sonde_format *format;
    const sonde_profile *profile;
    const sonde_stats *stats;
    const sonde_format_opts *opts;
} sonde_format_job;
int sonde_format_fill(sonde_buf *b, void *job);

/* Writes p and s in format f to path ("-" = standard output) through
 * sonde_outfile_write (outfile.h): streaming, one message, a file left
 * incomplete removed.  0, or -1 with the message in err. */
int sonde_format_write_file(const sonde_format *f, const char *path, const sonde_profile *p,
                            const sonde_stats *s, const sonde_format_opts *o, char *err,
                            size_t errlen);

int sonde_write_pstats(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o);
int sonde_write_collapsed(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_format_opts *o);
int sonde_write_json(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                     const sonde_format_opts *o);
int sonde_write_chrome(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o);
int sonde_write_flamegraph(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o);
int sonde_write_speedscope(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o);

#endif
