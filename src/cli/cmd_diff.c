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
#include "inputs.h"
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
    .synopsis = "[-o OUT.html] [-l N] BEFORE AFTER\n"
                "[-o OUT.html] [-l N] BEFORE... -- AFTER...",
    .about = "Compares two profiles of the same program (.prof files from sonde run or\n"
             "cProfile, or sonde's JSON): prints the functions whose own time changed\n"
             "most, and writes a page (as sonde view does) whose flame graph is AFTER's,\n"
             "each frame coloured by how much it grew (red) or shrank (blue) against the\n"
             "same call path in BEFORE.  Several files a side (options first, the BEFORE\n"
             "files, --, the AFTER files) are summed as sonde merge sums them, every\n"
             "file's part under one frame, \"process (all)\", so the sides' paths match.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

/* The label every part of a side is summed under, so that the two sides'
 * call paths match whatever their processes' pids. */
#define SIDE_LABEL "process (all)"

/* One side's files (BEFORE... or AFTER...), summed.  0, or an exit code. */
static int load(const sonde_env *env, char *const *files, int n, cli_inputs *in)
{
    int rc = cli_inputs_load(env, "diff", files, n, SIDE_LABEL, in);
    if (rc == 0 && in->kind != SONDE_LOADED_PROFILE)
        rc = cli_fail(SONDE_EXIT_FAILED, "'%s' holds per-line figures, not a profile of calls: "
                      "diff compares profiles of calls", files[0]);
    return rc;
}

/* The command line into *o and the two sides (BEFORE AFTER, or BEFORE...
 * -- AFTER...), checked, the page's file included.  0, or an exit code. */
static int parse(int argc, char **argv, diff_opts *o, cli_words sides[2], cli_output *out)
{
    cli_words words;
    int rc = cli_parse(&cmd_diff, argc, argv, o, &words);
    if (rc != 0)
        return rc;
    int split = words.before_dashes < words.count ? words.before_dashes : 1;
    if (words.before_dashes == words.count && words.count != 2)
        return cli_usage_error("diff", words.count > 2 ? "two profiles: BEFORE and AFTER, or "
                               "several a side: BEFORE... -- AFTER..."
                               : "give two profiles: BEFORE and AFTER");
    if (split == 0 || split == words.count)
        return cli_usage_error("diff", "give the BEFORE files, then --, then the AFTER files");
    sides[0] = (cli_words){ .word = words.word, .count = split };
    sides[1] = (cli_words){ .word = words.word + split, .count = words.count - split };
    if (!o->out && (rc = cli_sibling_path(sides[1].word[0], ".diff.html", o->sibling,
                                          sizeof o->sibling)) != 0)
        return rc;
    return cli_output_open(out, o->out ? o->out : o->sibling);
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    diff_opts o = { .limit = 20 };
    cli_words sides[2] = { { 0 }, { 0 } };
    cli_output out;
    int rc = parse(argc, argv, &o, sides, &out);
    if (rc != 0)
        return cli_exit(rc);
    long limit = o.limit;
    cli_inputs before = { 0 }, after = { 0 }; /* freed as they are if never loaded */
    rc = load(env, sides[0].word, sides[0].count, &before);
    if (rc == 0)
        rc = load(env, sides[1].word, sides[1].count, &after);
    sonde_buf table, page;
    sonde_buf_init(&table);
    sonde_buf_init(&page);
    sonde_diff d;
    memset(&d, 0, sizeof d);
    if (rc == 0 && (sonde_diff_match_files(&before.p, &after.p) < 0 ||
                    sonde_diff_compute(&d, &before.p, &before.s, &after.p, &after.s) < 0))
        rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (rc == 0) {
        char title[2 * PATH_MAX + 80], names[2][PATH_MAX + 32];
        cli_inputs_title(names[0], sizeof names[0], sides[0].word, sides[0].count);
        cli_inputs_title(names[1], sizeof names[1], sides[1].word, sides[1].count);
        snprintf(title, sizeof title, "%s -> %s", names[0], names[1]);
        sonde_diff_table_write(&table, &d, (uint32_t)limit);
        sonde_view_side views[2] = {
            { .p = &before.p, .s = &before.s, .has_tree = sonde_load_has_tree(&before.p) },
            { .p = &after.p, .s = &after.s, .has_tree = sonde_load_has_tree(&after.p) },
        };
        if (sonde_view_diff_write(&page, title, &views[0], &views[1], &d) < 0 ||
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
                out.name, sides[1].count > 1 ? "the AFTER files" : sides[1].word[0]);
    }
    sonde_diff_free(&d);
    sonde_buf_free(&table);
    sonde_buf_free(&page);
    cli_inputs_free(&before);
    cli_inputs_free(&after);
    return rc;
}
