/* output.c - the files a command writes, and its standard error; see
 * output.h. */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

int cli_output_open(cli_output *o, const char *name)
{
    char err[PATH_MAX + 128], cwd[PATH_MAX] = "";
    o->name = name;
    o->path[0] = '\0';
    if (!name)
        return 0;
    int relative = name[0] != '/' && strcmp(name, "-") != 0;
    if (relative && !getcwd(cwd, sizeof cwd))
        return cli_fail(SONDE_EXIT_FAILED, "cannot tell the current folder: %s", strerror(errno));
    if ((size_t)snprintf(o->path, sizeof o->path, "%s%s%s", cwd, relative ? "/" : "", name) >=
        sizeof o->path)
        return cli_fail(SONDE_EXIT_FAILED, "the file name '%s' is too long", name);
    if (sonde_outfile_check(o->path, name, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

int cli_output_fill(const cli_output *o, sonde_outfile_fill fill, void *ctx)
{
    char err[PATH_MAX + 128];
    if (sonde_outfile_write(o->path, o->name, fill, ctx, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

int cli_output_write(const cli_output *o, const sonde_buf *b)
{
    char err[PATH_MAX + 128];
    if (!sonde_buf_ok(b))
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (sonde_outfile_write_bytes(o->path, o->name, b->data, b->len, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

void cli_report(const sonde_buf *b)
{
    fflush(stdout);
    if (b->len)
        fwrite(b->data, 1, b->len, stderr);
    fflush(stderr);
}

int cli_sibling_path(const char *file, const char *suffix, char *out, size_t len)
{
    const char *slash = strrchr(file, '/'), *dot = strrchr(file, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - file) : strlen(file);
    if ((size_t)snprintf(out, len, "%.*s%s", (int)stem, file, suffix) >= len)
        return cli_fail(SONDE_EXIT_USAGE, "the file name '%s' is too long", file);
    return 0;
}
