/* outfile.c - checking and writing a file a user named; see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *name, const char *why)
{
    if (strcmp(name, "-") == 0)
        snprintf(err, errlen, "cannot write to the standard output: %s", why);
    else
        snprintf(err, errlen, "cannot write '%s': %s", name, why);
    return -1;
}

/* 1 when path names something written in place: a device, a pipe or a
 * socket, which is what the name leads to (a link to one included, as
 * /dev/stdout is).  A regular file, a link to one and a name not there
 * yet are written through a new file instead (open_new). */
static int in_place(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* A new file beside path, never there before (O_EXCL: nothing at its
 * name is followed), its name into tmp.  The descriptor, or -1 (errno). */
static int open_new(const char *path, char *tmp, size_t tmplen)
{
    static unsigned serial;
    for (int tries = 0; tries < 100; tries++) {
        int n = snprintf(tmp, tmplen, "%s.sonde-%ld-%u", path, (long)getpid(), serial++);
        if (n < 0 || (size_t)n >= tmplen) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int sonde_outfile_check(const char *path, const char *name, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return 0;
    struct stat st;
    char tmp[4200];
    int fd;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fd = -1;
        errno = EISDIR;
    } else if (in_place(path)) {
        /* O_NONBLOCK: a named pipe nobody reads is refused, not waited on */
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    } else if ((fd = open_new(path, tmp, sizeof tmp)) >= 0) {
        unlink(tmp);   /* the folder takes a new file: that is what writing needs */
    }
    if (fd < 0)
        return fail(err, errlen, name ? name : path, strerror(errno));
    close(fd);
    return 0;
}

int sonde_outfile_write(const char *path, const char *name, sonde_outfile_fill fill, void *ctx,
                        char *err, size_t errlen)
{
    name = name ? name : path;
    int to_stdout = strcmp(path, "-") == 0, direct = to_stdout || in_place(path);
    char tmp[4200] = "";
    FILE *out = to_stdout ? stdout : NULL;
    if (!to_stdout && direct) {
        out = fopen(path, "wb");
    } else if (!to_stdout) {
        /* Written whole to a new file, then renamed over the name: a link
         * there is replaced, never followed (it could point anywhere), and
         * a file that was there keeps its permissions. */
        int fd = open_new(path, tmp, sizeof tmp);
        struct stat old;
        if (fd >= 0 && lstat(path, &old) == 0 && S_ISREG(old.st_mode))
            fchmod(fd, old.st_mode & 07777);
        if (fd >= 0 && !(out = fdopen(fd, "wb")))
            close(fd);
    }
    if (!out) {
        int e = errno;
        if (tmp[0])
            unlink(tmp);
        return fail(err, errlen, name, strerror(e));
    }
    sonde_buf b;
    sonde_buf_init_stream(&b, out);
    int rc = fill(&b, ctx);
    int finished = sonde_buf_finish(&b);
    int e = errno;
    if (!to_stdout && fclose(out) != 0 && finished == 0) {
        finished = -1;
        e = errno;
    }
    if (rc == 0 && finished == 0 && !direct && rename(tmp, path) != 0) {
        finished = -1;
        e = errno;
    }
    if (rc < 0 && b.why[0])
        snprintf(err, errlen, "%s", b.why);
    else if (rc < 0 || finished < 0)
        fail(err, errlen, name, rc < 0 && !b.write_errno ? "out of memory" : strerror(e));
    if ((rc < 0 || finished < 0) && !direct)
        unlink(tmp);
    sonde_buf_free(&b);
    return rc < 0 || finished < 0 ? -1 : 0;
}

typedef struct bytes {
    const void *data;
    size_t len;
} bytes;

static int put_bytes(sonde_buf *b, void *ctx)
{
    const bytes *what = ctx;
    if (what->len)
        sonde_buf_put(b, what->data, what->len);
    return sonde_buf_ok(b) ? 0 : -1;
}

int sonde_outfile_write_bytes(const char *path, const char *name, const void *data, size_t len,
                              char *err, size_t errlen)
{
    bytes what = { data, len };
    return sonde_outfile_write(path, name, put_bytes, &what, err, errlen);
}
