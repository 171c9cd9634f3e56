/* tool_args.c - the line tools' shared command line; see tool_args.h. */
#include "tool_args.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../formats/load.h"
#include "options.h"

static int check(const tool_args *a, const char *cmd)
{
    struct stat st;
    if (!a->target)
        return cli_usage_error(cmd, "what should run? give a script or -m MODULE");
    if (strcmp(a->mode, "script") == 0 && stat(a->target, &st) < 0)
        return cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': %s", a->target, strerror(errno));
    return a->out ? cli_check_writable(a->out) : 0;
}

int tool_args_parse(tool_args *a, int argc, char **argv, const char *usage,
                    tool_option_fn own, void *ctx)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    sonde_buf_init(&a->functions);
    int i;
    for (i = 1; i < argc && !a->target; i++) {
        const char *arg = argv[i], *value;
        int r;
        if (cli_flag(arg, "-h", "--help")) {
            fputs(usage, stdout);
            return -1;
        }
        if (cli_flag(arg, "-m", NULL)) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd, "-m needs a module name");
            a->mode = "module";
            a->target = argv[++i];
            continue;
        }
        if ((r = cli_option(argc, argv, &i, "-f", "--function", &value)) > 0) {
            sonde_buf_puts(&a->functions, a->functions.len ? ", " : "");
            sonde_buf_json_str(&a->functions, value);
            continue;
        }
        if (r < 0 || (r = cli_option(argc, argv, &i, "-o", "--output", &a->out)) ||
            (r = cli_option(argc, argv, &i, NULL, "--python", &a->python))) {
            if (r < 0)
                return SONDE_EXIT_USAGE;
            continue;
        }
        if ((r = own(argc, argv, &i, ctx)) == 1)
            continue;
        if (r > 1)
            return r;
        if (strcmp(arg, "--") == 0 && i + 1 < argc)
            arg = argv[++i];
        else if (arg[0] == '-' && arg[1])
            return cli_usage_error(cmd, "unknown option '%s'", arg);
        a->mode = "script";
        a->target = arg;
    }
    a->args = argv + i;
    a->nargs = argc - i;
    return check(a, cmd);
}

void tool_args_free(tool_args *a)
{
    sonde_buf_free(&a->functions);
}

/* Prints the table of the document the launcher left.  0, or an exit
 * code after printing why. */
static int draw_document(const launcher_session *run, tool_draw_fn draw, void *ctx)
{
    char path[PATH_MAX], err[512];
    if (launcher_path(run, "out", path, sizeof path) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "the temporary folder's name is too long");
    sonde_profile p;
    sonde_stats s;
    if (sonde_profile_init(&p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_stats_init(&s);
    sonde_jtree doc;
    enum sonde_load_kind kind;
    int rc = 0;
    if (sonde_load_any(path, &p, &s, &doc, &kind, err, sizeof err) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", err);
    } else {
        sonde_buf table;
        sonde_buf_init(&table);
        if (kind == SONDE_LOADED_PROFILE)
            rc = cli_fail(SONDE_EXIT_FAILED, "the launcher left no lines or mem document");
        else
            rc = draw(&table, &doc, ctx);
        if (!sonde_buf_ok(&table))
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        else
            cli_report(&table); /* also when what else draw() makes failed */
        sonde_buf_free(&table);
        if (kind != SONDE_LOADED_PROFILE)
            sonde_jtree_free(&doc);
    }
    sonde_stats_free(&s);
    sonde_profile_free(&p);
    return rc;
}

int tool_args_run(const tool_args *a, const sonde_env *env, const launcher_program *prog,
                  tool_draw_fn draw, void *ctx)
{
    launcher_session run;
    int rc = 0;
    if (launcher_run(env, prog, "out", &run) == LAUNCHER_PROFILE) {
        rc = draw_document(&run, draw, ctx);
        if (a->out && launcher_deliver(&run, "out", a->out) < 0)
            rc = SONDE_EXIT_FAILED;
    }
    launcher_close(&run);
    int code = launcher_exit_code(&run);
    return code == 0 ? rc : code;
}
