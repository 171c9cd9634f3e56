/* format.c - the table of output formats; see format.h. */
#include "format.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../core/outfile.h"
#include "pprof.h"

static const sonde_format formats[] = {
    { .name = "pstats",
      .summary = "pstats marshal file, as cProfile writes (pstats, snakeviz, gprof2dot)",
      .needs_stats = 1, .write = sonde_pstats_write },
    { .name = "collapsed",
      .summary = "one line per stack: root;...;leaf COUNT (flamegraph.pl, speedscope)",
      .needs_tree = 1, .write = sonde_collapsed_write },
    { .name = "json", .summary = "sonde's own JSON: functions, threads, call tree, stats",
      .needs_stats = 1, .keeps_about = 1, .write = sonde_json_write },
    { .name = "speedscope", .summary = "speedscope.app JSON: one evented profile per thread",
      .needs_tree = 1, .keeps_about = 1, .write = sonde_speedscope_write },
    { .name = "flamegraph", .summary = "interactive SVG flame graph (hover, click to zoom, search)",
      .needs_tree = 1, .write = sonde_flamegraph_write },
    { .name = "chrome", .summary = "Chrome trace events (chrome://tracing, Perfetto): a timeline",
      .needs_tree = 1, .needs_timeline = 1, .write = sonde_chrome_write },
    { .name = "tensorboard",
      .summary = "a PyTorch profiler trace (*.pt.trace.json) for TensorBoard's plugin",
      .needs_tree = 1, .needs_timeline = 1, .write = sonde_tensorboard_write },
    { .name = "dot", .summary = "the call graph as Graphviz source, as gprof2dot draws it",
      .needs_stats = 1, .write = sonde_dot_write },
    { .name = "gecko",
      .summary = "the Firefox Profiler's Gecko profile: threads, samples in time order, GC",
      .needs_tree = 1, .needs_timeline = 1, .keeps_about = 1, .write = sonde_gecko_write },
    { .name = "pprof",
      .summary = "gzipped profile.proto (go tool pprof, Pyroscope, Parca, Cloud Profiler)",
      .needs_tree = 1, .keeps_about = 1, .write = sonde_pprof_write },
};

const sonde_format_opts *sonde_format_opts_or_default(const sonde_format_opts *o)
{
    static const sonde_format_opts defaults = { .node_thres = 0.5, .edge_thres = 0.1 };
    return o ? o : &defaults;
}

const sonde_format *sonde_format_find(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

/* The formats' names, written once by fill_names: protected by
 * names_once, since the command and Python threads may both ask. */
static char names[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_names(void)
{
    size_t len = 0;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                                formats[i].name);
}

const char *sonde_format_names(void)
{
    pthread_once(&names_once, fill_names);
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
