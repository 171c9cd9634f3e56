/* record_every.c - sonde record --every's folder of interval files; see
 * record_every.h. */
#include "record_every.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "options.h"

int cli_take_size(const char *cmd, void *dest, const char *value)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    int shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    }
    if (shift && !end[1])
        end++;
    v *= (double)(1ull << shift);
    if (*end || errno || !(v >= 1 && v < 1e18))
        return cli_usage_error(cmd, "--keep-bytes needs a size in bytes, with K, M or G after "
                               "it for KiB, MiB or GiB (100M), not '%s'", value);
    *(unsigned long long *)dest = (unsigned long long)v;
    return 0;
}

int cli_every_check_dir(cli_every *e)
{
    struct stat st;
    const char *dir = e->dir;
    if (stat(dir, &st) < 0 && errno == ENOENT) {
        if (mkdir(dir, 0777) < 0)
            return cli_fail(SONDE_EXIT_FAILED, "cannot make the folder %s for --every's files: "
                            "%s", dir, strerror(errno));
        e->made = 1;
    }
    if (stat(dir, &st) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot use %s for --every's files: %s", dir,
                        strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cli_usage_error("record", "--every writes a file per interval into a folder: "
                               "-o must name one, and %s is a file", dir);
    if (access(dir, W_OK | X_OK) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot write in %s: %s", dir, strerror(errno));
    return 0;
}

int cli_every_next(cli_every *e, int64_t start_ns, cli_output *out)
{
    time_t secs = (time_t)(start_ns / 1000000000);
    struct tm tm;
    char when[32];
    if (!gmtime_r(&secs, &tm) || !strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm))
        snprintf(when, sizeof when, "%lld", (long long)secs);
    size_t len = strlen(e->dir);
    const char *slash = len && e->dir[len - 1] == '/' ? "" : "/";
    if ((size_t)snprintf(e->newest, sizeof e->newest, "%s%ssonde-%ld-%s.%s", e->dir, slash,
                         e->pid, when, e->ext) >= sizeof e->newest)
        return cli_fail(SONDE_EXIT_FAILED, "the folder name '%s' is too long", e->dir);
    return cli_output_open(out, e->newest);
}

/* Removes the oldest file, saying so when it cannot be. */
static void remove_oldest(cli_every *e)
{
    cli_every_file *f = &e->files[0];
    if (unlink(f->path) < 0 && errno != ENOENT)
        cli_fail(0, "cannot remove %s for --keep: %s (it stays)", f->path, strerror(errno));
    e->bytes -= f->size;
    e->removed++;
    e->by_bytes += !(e->keep && e->nfiles > (size_t)e->keep);
    free(f->path);
    memmove(e->files, e->files + 1, (e->nfiles - 1) * sizeof *e->files);
    e->nfiles--;
}

int cli_every_written(cli_every *e, const cli_output *out)
{
    struct stat st;
    e->written++;
    if (e->nfiles == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 16;
        cli_every_file *grown = realloc(e->files, cap * sizeof *grown);
        if (!grown)
            return cli_fail(SONDE_EXIT_FAILED, "out of memory");
        e->files = grown;
        e->cap = cap;
    }
    char *path = strdup(out->path);
    if (!path)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    unsigned long long size = stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
    e->files[e->nfiles++] = (cli_every_file){ .path = path, .size = size };
    e->bytes += size;
    while (e->nfiles > 1 && ((e->keep && e->nfiles > (size_t)e->keep) ||
                             (e->keep_bytes && e->bytes > e->keep_bytes)))
        remove_oldest(e);
    return 0;
}

void cli_every_free(cli_every *e)
{
    if (e->made && e->written == 0)
        rmdir(e->dir);
    e->made = 0;
    for (size_t i = 0; i < e->nfiles; i++)
        free(e->files[i].path);
    free(e->files);
    e->files = NULL;
    e->nfiles = e->cap = 0;
}
