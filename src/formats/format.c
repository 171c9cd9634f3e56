/* format.c - the table of output formats; see format.h. */
#include "format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pprof.h"
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
    { "pprof", "gzipped profile.proto (go tool pprof, Pyroscope, Parca, Cloud Profiler)", 1, 0,
      sonde_write_pprof },
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

int sonde_format_write_file(const sonde_format *f, const char *path, const sonde_profile *p,
                            const sonde_stats *s, const sonde_format_opts *o, char *err,
                            size_t errlen)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    if (!out) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int regular = !to_stdout && fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
    sonde_buf b;
    sonde_buf_init_stream(&b, out);
    int rc = f->write(&b, p, s, o);
    int finished = sonde_buf_finish(&b);
    int e = errno;
    if (!to_stdout && fclose(out) != 0 && finished == 0) {
        finished = -1;
        e = errno;
    }
    if (rc < 0 && b.why[0])
        snprintf(err, errlen, "%s", b.why);
    else if (rc < 0 || finished < 0)
        snprintf(err, errlen, "cannot write '%s': %s", path,
                 rc < 0 && !b.write_errno ? "out of memory" : strerror(e));
    if ((rc < 0 || finished < 0) && regular)
        unlink(path); /* never a device or a pipe */
    sonde_buf_free(&b);
    return rc < 0 || finished < 0 ? -1 : 0;
}
