/* options.c - argument helpers and error lines; see options.h. */
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_flag(const char *arg, const char *short_name, const char *long_name)
{
    return (short_name && strcmp(arg, short_name) == 0) ||
           (long_name && strcmp(arg, long_name) == 0);
}

int cli_option(int argc, char **argv, int *i, const char *short_name,
               const char *long_name, const char **value)
{
    const char *arg = argv[*i];
    size_t n;
    if (cli_flag(arg, short_name, long_name)) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "sonde: option %s needs a value\n", arg);
            return -1;
        }
        *value = argv[++*i];
        return 1;
    }
    if (long_name && strncmp(arg, long_name, n = strlen(long_name)) == 0 && arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (short_name && strncmp(arg, short_name, 2) == 0 && arg[2] && arg[1] != '-') {
        *value = arg + 2;
        return 1;
    }
    return 0;
}

int cli_count(const char *cmd, const char *flag, const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0) {
        cli_usage_error(cmd, "%s needs a whole number of 0 or more, not '%s'", flag, text);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_pid(const char *cmd, const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v <= 0 || v > INT32_MAX) {
        cli_usage_error(cmd, "'%s' is not a process id", text);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sonde %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'sonde %s --help')\n", cmd);
    va_end(ap);
    return SONDE_EXIT_USAGE;
}

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sonde: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int cli_one_file(const char *cmd, const char *arg, const char **file)
{
    if (arg[0] == '-' && arg[1])
        return cli_usage_error(cmd, "unknown option '%s'", arg);
    if (*file)
        return cli_usage_error(cmd, "one file at a time ('%s' and '%s')", *file, arg);
    *file = arg;
    return 0;
}

int cli_check_writable(const char *path)
{
    struct stat st;
    int existed = stat(path, &st) == 0, fd = -1;
    if (existed && S_ISDIR(st.st_mode))
        errno = EISDIR;
    else
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot write '%s': %s", path, strerror(errno));
    close(fd);
    if (!existed)
        unlink(path);
    return 0;
}

void cli_report(const sonde_buf *b)
{
    fflush(stdout);
    if (b->len)
        fwrite(b->data, 1, b->len, stderr);
    fflush(stderr);
}

int cli_write(const sonde_buf *b, const char *path)
{
    if (sonde_buf_write_file(b, path) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

int cli_sibling_path(const char *file, const char *suffix, char *out, size_t len)
{
    const char *slash = strrchr(file, '/'), *dot = strrchr(file, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - file) : strlen(file);
    if ((size_t)snprintf(out, len, "%.*s%s", (int)stem, file, suffix) >= len)
        return cli_fail(SONDE_EXIT_USAGE, "the file name '%s' is too long", file);
    return 0;
}
