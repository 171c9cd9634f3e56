/* format.c - the table of output formats; see format.h. */
#include "format.h"

#include <stdio.h>
#include <string.h>

#include "../core/outfile.h"
#include "pstats.h"

int sonde_write_pstats(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                       const sonde_format_opts *o)
{
    (void)o;
    sonde_pstats_write(b, p, s);
    return sonde_buf_ok(b) ? 0 : -1;
}

static const sonde_format formats[] = {
    { "pstats", "pstats marshal file, as cProfile writes (pstats, snakeviz, gprof2dot)",
      0, 0, sonde_write_pstats },
    { "collapsed", "one line per stack: root;...;leaf COUNT (flamegraph.pl, speedscope)",
      1, 0, sonde_write_collapsed },
    { "json", "sonde's own JSON: functions, threads, call tree, stats", 0, 0, sonde_write_json },
    { "speedscope", "speedscope.app JSON: one evented profile per thread", 1, 0,
      sonde_write_speedscope },
    { "flamegraph", "interactive SVG flame graph (hover, click to zoom, search)", 1, 0,
      sonde_write_flamegraph },
    { "chrome", "Chrome trace events (chrome://tracing, Perfetto): a timeline", 1, 1,
      sonde_write_chrome },
};

const sonde_format *sonde_format_find(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

const char *sonde_format_names(void)
{
    static char names[256];
    if (!names[0]) {
        size_t len = 0;
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                                    formats[i].name);
    }
    return names;
}

int sonde_format_fill(sonde_buf *b, void *job)
{
    const sonde_format_job *j = job;
    return j->format->write(b, j->profile, j->stats, j->opts);
}

int sonde_format_write_file(const sonde_format *f, const char *path, const sonde_profile *p,
                            const sonde_stats *s, const sonde_format_opts *o, char *err,
                            size_t errlen)
{
    sonde_format_job job = { .format = f, .profile = p, .stats = s, .opts = o };
    return sonde_outfile_write(path, NULL, sonde_format_fill, &job, err, errlen);
}
