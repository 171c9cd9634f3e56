/* outfile.c - checking and writing a file a user named; see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *name, const char *why)
{
    snprintf(err, errlen, "cannot write '%s': %s", name, why);
    return -1;
}

int sonde_outfile_check(const char *path, const char *name, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return 0;
    struct stat st;
    int existed = stat(path, &st) == 0, fd = -1;
    if (existed && S_ISDIR(st.st_mode))
        errno = EISDIR;
    else /* O_NONBLOCK: a named pipe nobody reads is refused, not waited on */
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0)
        return fail(err, errlen, name ? name : path, strerror(errno));
    close(fd);
    if (!existed)
        unlink(path);
    return 0;
}

int sonde_outfile_write(const char *path, const char *name, sonde_outfile_fill fill, void *ctx,
                        char *err, size_t errlen)
{
    name = name ? name : path;
    int to_stdout = strcmp(path, "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    if (!out)
        return fail(err, errlen, name, strerror(errno));
    struct stat st;
    int regular = !to_stdout && fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
    sonde_buf b;
    sonde_buf_init_stream(&b, out);
    int rc = fill(&b, ctx);
    int finished = sonde_buf_finish(&b);
    int e = errno;
    if (!to_stdout && fclose(out) != 0 && finished == 0) {
        finished = -1;
        e = errno;
    }
    if (rc < 0 && b.why[0])
        snprintf(err, errlen, "%s", b.why);
    else if (rc < 0 || finished < 0)
        fail(err, errlen, name, rc < 0 && !b.write_errno ? "out of memory" : strerror(e));
    if ((rc < 0 || finished < 0) && regular)
        unlink(path);
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
