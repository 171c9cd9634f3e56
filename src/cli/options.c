/* options.c - the option tables' parser, their --help, and the error
 * lines; see options.h. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path_search.h"

/* Labels ("  -o, --output FILE") wider than this push their help along
 * instead of setting the column where every help starts. */
#define LABEL_MAX 21

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

static int is_end(const cli_opt *o)
{
    return !o->short_name && !o->long_name;
}

/* How messages name an option: its short name if it has one. */
static void name_of(const cli_opt *o, char *out, size_t len)
{
    if (o->short_name)
        snprintf(out, len, "-%c", o->short_name);
    else
        snprintf(out, len, "--%s", o->long_name);
}

/* The option arg (a word starting with '-', not "-" nor "--") names, with
 * its value in the same word when it has one ("-oFILE", "--output=FILE")
 * in *inline_value; NULL when the table has none. */
static const cli_opt *find(const cli_opt *opts, const char *arg, const char **inline_value)
{
    *inline_value = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        for (const cli_opt *o = opts; !is_end(o); o++)
            if (o->long_name && strlen(o->long_name) == n && strncmp(o->long_name, name, n) == 0) {
                *inline_value = eq ? eq + 1 : NULL;
                return o;
            }
        return NULL;
    }
    for (const cli_opt *o = opts; !is_end(o); o++)
        if (o->short_name == arg[1]) {
            if (arg[2] && !o->arg)
                return NULL; /* "-xyz" where -x is a flag: flags are not bundled */
            *inline_value = arg[2] ? arg + 2 : NULL;
            return o;
        }
    return NULL;
}

static int take_count(const char *cmd, const cli_opt *o, long *dest, const char *value)
{
    char name[64], *end;
    name_of(o, name, sizeof name);
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < 0)
        return cli_usage_error(cmd, "%s needs a whole number of 0 or more, not '%s'", name, value);
    if (o->what && ((double)v < o->min || (double)v > o->max))
        return cli_usage_error(cmd, "%s %s", name, o->what);
    *dest = v;
    return 0;
}

static int take_real(const char *cmd, const cli_opt *o, double *dest, const char *value)
{
    char name[64], *end;
    name_of(o, name, sizeof name);
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !(v >= o->min && v <= o->max))
        return cli_usage_error(cmd, "%s %s, not '%s'", name, o->what, value);
    *dest = v;
    return 0;
}

static int take_pid(const char *cmd, long *dest, const char *value)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v <= 0 || v > INT32_MAX)
        return cli_usage_error(cmd, "'%s' is not a process id", value);
    *dest = v;
    return 0;
}

/* CLI_OUTPUT: value with each "{rank}" the RANK torchrun gives each of
 * its processes, into *dest (value itself when it has none).  0, or an
 * exit code after printing why not. */
static int take_output(const char *cmd, const cli_opt *o, const char **dest, const char *value)
{
    static char expanded[2][PATH_MAX]; /* a command has at most two such options */
    static int next;
    if (!strstr(value, "{rank}")) {
        *dest = value;
        return 0;
    }
    char name[64];
    name_of(o, name, sizeof name);
    const char *rank = getenv("RANK");
    size_t digits = rank ? strspn(rank, "0123456789") : 0;
    if (!rank || !digits || rank[digits] || digits > 9)
        return cli_usage_error(cmd, "%s %s: {rank} is the process's rank in a torch.distributed "
                               "job, and RANK is not set here (run sonde under torchrun "
                               "--no-python)", name, value);
    char *out = expanded[next++ % 2];
    size_t len = 0;
    for (const char *at = value; *at;) {
        const char *piece = strncmp(at, "{rank}", 6) == 0 ? rank : NULL;
        size_t n = piece ? strlen(piece) : 1;
        if (len + n >= PATH_MAX)
            return cli_usage_error(cmd, "%s %s: the file name is too long", name, value);
        memcpy(out + len, piece ? piece : at, n);
        len += n;
        at += piece ? 6 : 1;
    }
    out[len] = '\0';
    *dest = out;
    return 0;
}

/* Stores what option o says into the options struct.  0, or an exit
 * code after printing why its value is wrong. */
static int take(const char *cmd, const cli_opt *o, void *opts, const char *value)
{
    void *dest = (char *)opts + o->offset;
    switch (o->type) {
    case CLI_FLAG:
        *(int *)dest = o->set;
        return 0;
    case CLI_IGNORED:
        return 0;
    case CLI_STRING:
        *(const char **)dest = value;
        return 0;
    case CLI_OUTPUT:
        return take_output(cmd, o, (const char **)dest, value);
    case CLI_COUNT:
        return take_count(cmd, o, dest, value);
    case CLI_REAL:
        return take_real(cmd, o, dest, value);
    case CLI_PID:
        return take_pid(cmd, dest, value);
    case CLI_CALL:
        return o->call(cmd, dest, value);
    case CLI_PROGRAM:
        ((cli_program *)dest)->mode = o->what;
        ((cli_program *)dest)->target = value;
        return 0;
    }
    return 0;
}

static void print_help(const cli_command *cmd)
{
    sonde_buf b;
    sonde_buf_init(&b);
    cli_help_write(&b, cmd);
    if (b.len)
        fwrite(b.data, 1, b.len, stdout);
    fflush(stdout);
    sonde_buf_free(&b);
}

int cli_parse(const cli_command *cmd, int argc, char **argv, void *opts, cli_words *words)
{
    int i, k = 1, dashes = -1; /* argv[k]: where the next word goes */
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        if (strcmp(arg, "--") == 0) {
            dashes = k - 1;
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (cmd->words == CLI_WORDS_END)
                break;
            argv[k++] = argv[i];
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(cmd);
            return CLI_DONE;
        }
        const cli_opt *o = find(cmd->opts, arg, &value);
        if (!o)
            return cli_usage_error(cmd->name, "unknown option '%s'", arg);
        if (!o->arg && value)
            return cli_usage_error(cmd->name, "option --%s takes no value", o->long_name);
        if (o->arg && !value) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd->name, "option %s needs a value", arg);
            value = argv[++i];
        }
        int rc = take(cmd->name, o, opts, value);
        if (rc != 0)
            return rc;
        if (o->type == CLI_PROGRAM) {
            i++;
            break;
        }
    }
    for (; i < argc; i++)
        argv[k++] = argv[i];
    argv[k] = NULL;
    words->word = argv + 1;
    words->count = k - 1;
    words->before_dashes = dashes < 0 ? words->count : dashes;
    return 0;
}

/* "  -o, --output FILE": how the help shows an option. */
static void label_of(const cli_opt *o, char *out, size_t len)
{
    char name[8] = "  ";
    if (o->short_name)
        snprintf(name, sizeof name, "-%c", o->short_name);
    const char *sep = !o->long_name ? "" : o->short_name ? ", --" : "  --";
    snprintf(out, len, "  %s%s%s%s%s", name, sep, o->long_name ? o->long_name : "",
             o->arg ? " " : "", o->arg ? o->arg : "");
}

void cli_help_write(sonde_buf *b, const cli_command *cmd)
{
    int indent = (int)strlen("usage: sonde  ") + (int)strlen(cmd->name);
    sonde_buf_printf(b, "usage: sonde %s ", cmd->name);
    for (const char *s = cmd->synopsis; *s; s++) {
        sonde_buf_putc(b, *s);
        if (*s == '\n')
            sonde_buf_printf(b, "%*s", indent, "");
    }
    sonde_buf_printf(b, "\n\n%s\n", cmd->about);
    char label[128];
    int column = 0;
    for (const cli_opt *o = cmd->opts; !is_end(o); o++) {
        label_of(o, label, sizeof label);
        int n = (int)strlen(label);
        if (n <= LABEL_MAX && n > column)
            column = n;
    }
    if (!is_end(cmd->opts))
        sonde_buf_putc(b, '\n');
    for (const cli_opt *o = cmd->opts; !is_end(o); o++) {
        label_of(o, label, sizeof label);
        int n = (int)strlen(label);
        sonde_buf_printf(b, "%s%*s", label, n <= column ? column - n + 2 : 2, "");
        for (const char *s = o->help; *s; s++) {
            sonde_buf_putc(b, *s);
            if (*s == '\n')
                sonde_buf_printf(b, "%*s", column + 2, "");
        }
        sonde_buf_putc(b, '\n');
    }
}

/* The file the shell would run for command `name` (no '/'), searched in
 * PATH, into out: 1 when it is a Python script (its first line a "#!"
 * naming python), -1 when it is something else, 0 when there is none. */
static int command_on_path(const char *name, char *out, size_t len)
{
    if (cli_find_on_path(name, out, len) < 0)
        return 0;
    char head[256] = "";
    FILE *f = fopen(out, "rb");
    size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f)
        fclose(f);
    head[got] = '\0';
    char *eol = strchr(head, '\n');
    if (eol)
        *eol = '\0';
    return strncmp(head, "#!", 2) == 0 && strstr(head, "python") ? 1 : -1;
}

int cli_program_take(cli_program *p, const char *cmd, const cli_words *words)
{
    static char on_path[PATH_MAX]; /* a command found on PATH: p->target, for the run */
    p->args = words->word;
    p->nargs = words->count;
    if (!p->mode) {
        if (words->count == 0)
            return cli_usage_error(cmd, "what should run? give a script, -m MODULE or -c CODE");
        p->mode = "script";
        p->target = words->word[0];
        p->args++;
        p->nargs--;
    }
    if (strcmp(p->mode, "script") != 0)
        return 0;
    struct stat st;
    if (stat(p->target, &st) < 0 && errno == ENOENT && !strchr(p->target, '/')) {
        /* a command's name, as kernprof takes it: its script on PATH */
        int found = command_on_path(p->target, on_path, sizeof on_path);
        if (found < 0)
            return cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': no such file here, and the "
                            "command %s is not a Python script (sonde record -- %s ... samples "
                            "the Python processes any command starts)", p->target, on_path,
                            p->target);
        if (found > 0)
            p->target = on_path;
    }
    if (stat(p->target, &st) < 0)
        return cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': %s", p->target, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': it is a folder; give a script, or "
                        "-m MODULE", p->target);
    if (access(p->target, R_OK) < 0)
        return cli_fail(SONDE_EXIT_USAGE, "cannot read '%s': %s", p->target, strerror(errno));
    return 0;
}
