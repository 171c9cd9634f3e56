/* format.h - the table of the files sonde writes for other tools, behind
 * one interface.
 *
 * Each writer (one file per format in this folder) renders a profile and
 * its stats into a buffer, which may stream to a file (buf.h), so the same
 * code serves files, the terminal, the Python API and the tests.  Each
 * says what it needs: the calling-context tree (a profile read back from a
 * .prof file has only the stats), a timeline (sonde record's samples in
 * time order, sonde run --torch's calls and operators, or one read back
 * from a file that keeps it), the stats.  A writer whose output would be
 * unreasonably large refuses: it returns -1 with the reason in b->why. */
#ifndef SONDE_FORMAT_H
#define SONDE_FORMAT_H

#include <stdint.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

/* What a user may ask of a writer; a NULL pointer gives the defaults
 * (those below, and gprof2dot's thresholds: 0.5 and 0.1). */
typedef struct sonde_format_opts {
    int short_paths;      /* collapsed: file names as py-spy shows them (short_path.h) */
    const char *cwd;      /* the current folder, for short_paths */
    uint64_t min_count;   /* collapsed: stacks counting less are left out */
    double node_thres;    /* dot: functions under this percent of the time are left out */
    double edge_thres;    /* dot: calls under this percent are left out */
    int all_calls;        /* chrome, of a run --torch timeline: every Python call, not only
                             those holding an operator or region (torch_holders.h) */
    int window;           /* tensorboard: only the steps numbered window_first to
                             window_last and what ran in them (one cycle of --torch-steps,
                             as torch writes one file a cycle); 0: every step */
    uint32_t window_first, window_last;
} sonde_format_opts;

typedef struct sonde_format {
    const char *name;
    const char *summary;
    int needs_tree;       /* the calling-context tree */
    int needs_timeline;   /* a timeline: samples in time order (p->events), or for
                             run --torch, slices (p->slices) */
    int needs_stats;      /* the stats; a writer without this flag takes s == NULL */
    int keeps_about;      /* it has room for what was profiled (p->about) */
    /* Returns 0, or -1 when out of memory (b->oom is then set too) or when
     * it refused (b->why says why). */
    int (*write)(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                 const sonde_format_opts *o);
} sonde_format;

/* o, or the defaults when o is NULL. */
const sonde_format_opts *sonde_format_opts_or_default(const sonde_format_opts *o);

/* The format called name, or NULL. */
const sonde_format *sonde_format_find(const char *name);
/* "pstats, collapsed, json, ...": for messages. */
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

int sonde_pstats_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o);
int sonde_collapsed_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_format_opts *o);
int sonde_json_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                     const sonde_format_opts *o);
int sonde_chrome_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o);
int sonde_tensorboard_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                            const sonde_format_opts *o);
int sonde_flamegraph_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o);
int sonde_speedscope_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o);
int sonde_dot_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                    const sonde_format_opts *o);
int sonde_gecko_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                      const sonde_format_opts *o);   /* gecko.c: the Firefox Profiler's */
int sonde_pprof_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                      const sonde_format_opts *o);   /* pprof.c: p's tree, a sample per path */

#endif
