/* load.c - profile files: read, recognise, decode; see load.h. */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collapsed_read.h"
#include "doc.h"
#include "gecko.h"
#include "json_profile.h"
#include "json_read.h"
#include "pprof.h"
#include "pstats.h"

/* What kind of file st describes, for a message: NULL for a regular one. */
static const char *not_regular(const struct stat *st)
{
    if (S_ISREG(st->st_mode))
        return NULL;
    return S_ISDIR(st->st_mode) ? "a folder" : S_ISFIFO(st->st_mode) ? "a pipe (FIFO)"
           : S_ISSOCK(st->st_mode) ? "a socket" : "a device";
}

/* Reads a whole regular file; NULL with a message naming it.  The file is
 * opened without blocking, so a FIFO is refused, not waited on. */
static unsigned char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    const char *kind = not_regular(&st);
    if (kind || (unsigned long long)st.st_size > SONDE_LOAD_MAX_BYTES) {
        if (kind)
            snprintf(err, errlen, "cannot read '%s': it is %s, not a profile file", path, kind);
        else
            snprintf(err, errlen, "cannot read '%s': larger than %u MiB", path,
                     SONDE_LOAD_MAX_BYTES >> 20);
        close(fd);
        return NULL;
    }
    size_t n = (size_t)st.st_size, got = 0;
    unsigned char *data = malloc(n ? n : 1);
    int e = 0;
    while (data && got < n) {
        ssize_t r = read(fd, data + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            e = r < 0 ? errno : 0;
            break;
        }
        got += (size_t)r;
    }
    if (!data || got != n) {
        snprintf(err, errlen, "cannot read '%s': %s", path,
                 !data ? "out of memory" : e ? strerror(e) : "the file shrank while it was read");
        free(data);
        close(fd);
        return NULL;
    }
    close(fd);
    *len = n;
    return data;
}

/* 1 when data starts like a JSON document rather than a marshal one. */
static int is_json(const unsigned char *d, size_t n)
{
    return n >= 2 && d[0] == '{' && strchr("\" \t\r\n}", d[1]) != NULL;
}

/* A JSON document: sonde's own profile (the tree, and the stats derived
 * from it), or, when doc is given, a lines or mem document kept in *doc. */
static int load_json(const char *path, const unsigned char *data, size_t len, sonde_profile *p,
                     sonde_stats *s, sonde_jtree *doc, enum sonde_load_kind *kind, char *err,
                     size_t errlen)
{
    sonde_jtree t;
    char why[200];
    if (sonde_json_read(&t, (const char *)data, len, why, sizeof why) < 0) {
        snprintf(err, errlen, "cannot read '%s': %s", path, why);
        return -1;
    }
    const char *mode = sonde_json_str(&t, sonde_json_get(&t, &t.vals[t.root], DOC_MODE));
    int lines = strcmp(mode, DOC_MODE_LINES) == 0, mem = strcmp(mode, DOC_MODE_MEM) == 0;
    if ((lines || mem) && doc) {
        *doc = t;
        *kind = lines ? SONDE_LOADED_LINES : SONDE_LOADED_MEM;
        return 0;
    }
    int rc = -1;
    if (lines || mem)
        snprintf(err, errlen, "'%s' holds sonde %s's per-line figures, not a profile of calls",
                 path, mode);
    else if (sonde_gecko_is(&t) && sonde_gecko_read(&t, p, why, sizeof why) < 0)
        snprintf(err, errlen, "cannot read '%s' as a Firefox Profiler profile: %s", path, why);
    else if (sonde_gecko_is(&t) && sonde_stats_from_profile(s, p) < 0)
        snprintf(err, errlen, "out of memory reading '%s'", path);
    else if (sonde_gecko_is(&t))
        rc = 0;
    else if (!sonde_json_profile_is(&t))
        snprintf(err, errlen, "'%s' is JSON but not a profile sonde reads (sonde run or record "
                 "-f json or -f gecko, sonde lines -o, sonde mem -o, the Firefox Profiler's)",
                 path);
    else if (sonde_json_profile_read(&t, p, why, sizeof why) < 0)
        snprintf(err, errlen, "cannot read '%s': %s", path, why);
    else if (p->nthreads == 0 && sonde_json_stats_read(&t, p, s, why, sizeof why) < 0)
        snprintf(err, errlen, "cannot read '%s': %s", path, why); /* from a .prof: stats only */
    else if (p->nthreads > 0 && sonde_stats_from_profile(s, p) < 0)
        snprintf(err, errlen, "out of memory reading '%s'", path);
    else
        rc = 0;
    sonde_jtree_free(&t);
    return rc;
}

int sonde_load_bytes(const char *path, const unsigned char *data, size_t len, sonde_profile *p,
                     sonde_stats *s, sonde_jtree *doc, enum sonde_load_kind *kind, char *err,
                     size_t errlen)
{
    int rc = -1;
    if (kind)
        *kind = SONDE_LOADED_PROFILE;
    if (len == 0) {
        snprintf(err, errlen, "'%s' is empty: it holds no profile", path);
    } else if (is_json(data, len)) {
        rc = load_json(path, data, len, p, s, doc, kind, err, errlen);
    } else if (sonde_collapsed_is(data, len)) {
        char why[200];
        rc = sonde_collapsed_read(data, len, p, why, sizeof why);
        if (rc < 0)
            snprintf(err, errlen, "cannot read '%s' as collapsed stacks: %s", path, why);
        else if ((rc = sonde_stats_from_profile(s, p)) < 0)
            snprintf(err, errlen, "out of memory reading '%s'", path);
    } else if ((data[0] & 0x7f) == '{') {
        char why[200];
        rc = sonde_pstats_read(data, len, p, s, why, sizeof why);
        if (rc < 0)
            snprintf(err, errlen, "cannot read '%s': %s", path, why);
    } else if (sonde_pprof_is(data, len)) {
        char why[200];
        rc = sonde_pprof_read(data, len, p, why, sizeof why);
        if (rc < 0)
            snprintf(err, errlen, "cannot read '%s' as a pprof profile: %s", path, why);
        else if ((rc = sonde_stats_from_profile(s, p)) < 0)
            snprintf(err, errlen, "out of memory reading '%s'", path);
    } else {
        snprintf(err, errlen, "'%s' is not a profile file sonde can read "
                 "(expected a .prof written by sonde run or cProfile, sonde's JSON, a pprof file "
                 "or collapsed stacks)", path);
    }
    return rc;
}

int sonde_load_any(const char *path, sonde_profile *p, sonde_stats *s, sonde_jtree *doc,
                   enum sonde_load_kind *kind, char *err, size_t errlen)
{
    size_t len = 0;
    unsigned char *data = slurp(path, &len, err, errlen);
    if (!data)
        return -1;
    int rc = sonde_load_bytes(path, data, len, p, s, doc, kind, err, errlen);
    free(data);
    return rc;
}

int sonde_load_file(const char *path, sonde_profile *p, sonde_stats *s,
                    char *err, size_t errlen)
{
    return sonde_load_any(path, p, s, NULL, NULL, err, errlen);
}
