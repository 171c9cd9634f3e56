/* cmd_diff.c - sonde diff: two profiles of one program (before and after
 * a change): the functions whose own time changed most, and a page with
 * the newer profile's flame graph coloured by how much each frame grew
 * (red) or shrank (blue). */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/diff.h"
#include "../formats/load.h"
#include "../page/view.h"
#include "commands.h"
#include "options.h"
#include "output.h"

typedef struct diff_opts {
    const char *out;
    long limit;
    char sibling[PATH_MAX];   /* the page's default name */
} diff_opts;

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "OUT", .type = CLI_STRING,
      .offset = offsetof(diff_opts, out),
      .help = "the page (default: AFTER with .diff.html for its extension)" },
    { .short_name = 'l', .long_name = "limit", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(diff_opts, limit), .help = "rows to print (default 20; 0 = all)" },
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_diff = {
    .name = "diff",
    .summary = "what changed between two profiles, as a table and a flame graph",
    .synopsis = "BEFORE AFTER [-o OUT.html] [-l N]",
    .about = "Compares two profiles of the same program (.prof files from sonde run or\n"
             "cProfile, or sonde's JSON): prints the functions whose own time changed\n"
             "most, and writes a page (as sonde view does) whose flame graph is AFTER's,\n"
             "each frame coloured by how much it grew (red) or shrank (blue) against the\n"
             "same call path in BEFORE.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

typedef struct loaded {
    sonde_profile p;
    sonde_stats s;
} loaded;

static int load(const char *file, loaded *l)
{
    char err[512];
    if (sonde_load_file(file, &l->p, &l->s, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

/* The command line into *o and files, checked, the page's file included.
 * 0, or an exit code. */
static int parse(int argc, char **argv, diff_opts *o, const char *files[2], cli_output *out)
{
    cli_words words;
    int rc = cli_parse(&cmd_diff, argc, argv, o, &words);
    if (rc != 0)
        return rc;
    if (words.count > 2)
        return cli_usage_error("diff", "two profiles: BEFORE and AFTER");
    if (words.count < 2)
        return cli_usage_error("diff", "give two profiles: BEFORE and AFTER");
    files[0] = words.word[0];
    files[1] = words.word[1];
    if (!o->out && (rc = cli_sibling_path(files[1], ".diff.html", o->sibling,
                                          sizeof o->sibling)) != 0)
        return rc;
    return cli_output_open(out, o->out ? o->out : o->sibling);
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    (void)env;
    diff_opts o = { .limit = 20 };
    const char *files[2] = { NULL, NULL };
    cli_output out;
    int rc = parse(argc, argv, &o, files, &out);
    if (rc != 0)
        return cli_exit(rc);
    long limit = o.limit;
    loaded before, after;
    sonde_stats_init(&before.s);
    sonde_stats_init(&after.s);
    if (sonde_profile_init(&before.p) < 0 || sonde_profile_init(&after.p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    rc = load(files[0], &before);
    if (rc == 0)
        rc = load(files[1], &after);
    sonde_buf table, page;
    sonde_buf_init(&table);
    sonde_buf_init(&page);
    sonde_diff d;
    memset(&d, 0, sizeof d);
    if (rc == 0 && sonde_diff_compute(&d, &before.p, &before.s, &after.p, &after.s) < 0)
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (rc == 0) {
        char title[2 * PATH_MAX];
        snprintf(title, sizeof title, "%s -> %s", files[0], files[1]);
        sonde_diff_table_write(&table, &d, (uint32_t)limit);
        sonde_view_side sides[2] = {
            { .p = &before.p, .s = &before.s, .has_tree = sonde_load_has_tree(&before.p) },
            { .p = &after.p, .s = &after.s, .has_tree = sonde_load_has_tree(&after.p) },
        };
        if (sonde_view_diff_write(&page, title, &sides[0], &sides[1], &d) < 0 ||
            !sonde_buf_ok(&table))
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    if (rc == 0)
        rc = cli_output_write(&out, &page);
    if (rc == 0) {
        if (table.len)
            fwrite(table.data, 1, table.len, stdout);
        fflush(stdout);
        fprintf(stderr, "sonde: wrote %s (the flame graph of %s, coloured by change)\n",
                out.name, files[1]);
    }
    sonde_diff_free(&d);
    sonde_buf_free(&table);
    sonde_buf_free(&page);
    sonde_stats_free(&before.s);
    sonde_profile_free(&before.p);
    sonde_stats_free(&after.s);
    sonde_profile_free(&after.p);
    return rc;
}
