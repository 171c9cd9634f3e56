/* tool_args.c - the line tools' shared command line; see tool_args.h. */
#include "tool_args.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../formats/load.h"
#include "run_children.h"

int tool_args_function(const char *cmd, void *dest, const char *value)
{
    (void)cmd;
    sonde_buf *functions = dest;
    sonde_buf_puts(functions, functions->len ? ", " : "");
    sonde_buf_json_str(functions, value);
    return 0;
}

int tool_args_parse(tool_args *a, const cli_command *cmd, int argc, char **argv, void *opts)
{
    sonde_buf_init(&a->functions);
    a->deliver = NULL;
    cli_words words;
    int rc = cli_parse(cmd, argc, argv, opts, &words);
    if (rc == 0)
        rc = cli_program_take(&a->prog, cmd->name, &words);
    if (rc == 0)
        rc = cli_output_open(&a->output, a->out);
    return rc;
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
    sonde_profile p;
    sonde_stats s;
    int rc = launcher_prepare_load(run, "out", path, sizeof path, &p, &s);
    if (rc != 0)
        return rc;
    sonde_jtree doc;
    enum sonde_load_kind kind;
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
        sonde_about about;
        sonde_about_init(&about);
        int children = 0;
        if ((prog->children || (a->output.name && !a->deliver)) &&
            launcher_about(&run, prog, &about) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        if (rc == 0 && prog->children)
            rc = run_children_sum_documents(&run, &about, strcmp(prog->tool, "mem") == 0,
                                            &children);
        if (rc == 0)
            rc = draw_document(&run, draw, ctx);
        if (rc == 0 && prog->children) {
            fprintf(stderr, "\nprocesses: %d, the program and %d child%s it started, each "
                    "part listed in -o's \"parts\"\n", children + 1, children,
                    children == 1 ? "" : "ren");
            about.processes = (uint32_t)children + 1;
        }
        if (rc == 0 && a->output.name) {
            int failed = a->deliver ? launcher_deliver(&run, a->deliver, &a->output)
                                    : launcher_deliver_about(&run, "out", &about, &a->output);
            if (failed)
                rc = SONDE_EXIT_FAILED;
        }
        sonde_about_clear(&about);
    }
    launcher_close(&run);
    int code = launcher_exit_code(&run);
    return code == 0 ? rc : code;
}
