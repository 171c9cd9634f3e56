/* cmd_merge.c - sonde merge: profiles of one kind from several processes
 * or machines summed into one file, each part under a frame naming its
 * process (inputs.h reads and sums them). */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../core/time_tree_graft.h"
#include "../formats/format.h"
#include "commands.h"
#include "inputs.h"
#include "options.h"
#include "output.h"

typedef struct merge_opts {
    const char *out, *format;
} merge_opts;

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "OUT", .type = CLI_STRING,
      .offset = offsetof(merge_opts, out),
      .help = "the merged file (\"-\": standard output)" },
    { .short_name = 'f', .long_name = "format", .arg = "FMT", .type = CLI_STRING,
      .offset = offsetof(merge_opts, format),
      .help = "profiles of calls: pstats, json, pprof, collapsed, ...\n"
              "(default: by OUT's name: .prof pstats, .pb.gz or .pprof\n"
              "pprof, .collapsed or .folded collapsed, else json);\n"
              "lines and mem documents: json" },
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_merge = {
    .name = "merge",
    .summary = "sum profiles of one kind from several processes or machines into one",
    .synopsis = "FILE... -o OUT [-f FORMAT]",
    .about = "Sums profiles of one kind: deterministic ones (sonde run's .prof or JSON,\n"
             "cProfile's .prof), sampled ones (sonde record's JSON or pprof, collapsed\n"
             "stacks), sonde lines's JSON or line_profiler's .lprof, sonde mem's JSON.\n"
             "Per function, call path and line, the figures are the files' sums; each\n"
             "file's part stays under a frame naming its process, \"process PID\n"
             "(command)\" (the file's name when it does not say), as record\n"
             "--subprocesses makes, and a lines or mem file lists each part under\n"
             "\"parts\".  Files of different kinds, or sampled at different rates, are\n"
             "refused.  sonde report, view and diff take several files as if merged.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* The format a profile of calls is written in: -f, else by OUT's name. */
static const char *profile_format(const merge_opts *o)
{
    if (o->format)
        return o->format;
    if (ends_with(o->out, ".prof") || ends_with(o->out, ".pstats"))
        return "pstats";
    if (ends_with(o->out, ".pb.gz") || ends_with(o->out, ".pprof") || ends_with(o->out, ".pb"))
        return "pprof";
    if (ends_with(o->out, ".collapsed") || ends_with(o->out, ".folded"))
        return "collapsed";
    return "json";
}

/* The merged profile of calls written to out.  0, or an exit code. */
static int write_profile(const merge_opts *o, cli_inputs *in, const cli_output *out)
{
    const char *name = profile_format(o);
    const sonde_format *fmt = sonde_format_find(name);
    if (!fmt)
        return cli_usage_error("merge", "unknown format '%s' (use %s)", name,
                               sonde_format_names());
    /* A timeline (gecko, chrome) keeps each file's samples at their time
     * since the earliest start (core/merge.c); files without one have none. */
    if (fmt->needs_timeline && !in->p.nevents)
        return cli_fail(SONDE_EXIT_FAILED, "the files have no timeline, so they cannot become "
                        "'%s': record them with sonde record (or sonde run -f %s -o FILE)", name,
                        name);
    int cut = 0;
    if (fmt->needs_tree && !fmt->needs_timeline && !sonde_load_has_tree(&in->p) &&
        sonde_time_tree_graft(&in->p, &in->s, &cut) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    if (cut)
        fprintf(stderr, "sonde: the call tree rebuilt from the .prof files' callers was cut at "
                "%u frames or %d deep\n", SONDE_TIME_TREE_MAX_NODES, SONDE_TIME_TREE_MAX_DEPTH);
    char cwd[PATH_MAX];
    sonde_format_opts fopts = *sonde_format_opts_or_default(NULL);
    fopts.cwd = getcwd(cwd, sizeof cwd);
    sonde_format_job job = { .format = fmt, .profile = &in->p, .stats = &in->s, .opts = &fopts };
    return cli_output_fill(out, sonde_format_fill, &job);
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    merge_opts o = { 0 };
    cli_words words;
    cli_output out;
    int rc = cli_parse(&cmd_merge, argc, argv, &o, &words);
    if (rc != 0)
        return cli_exit(rc);
    if (words.count == 0)
        return cli_usage_error("merge", "which files? give the profiles to sum");
    if (!o.out)
        return cli_usage_error("merge", "where to? give -o OUT");
    if (ends_with(o.out, ".lprof"))
        return cli_usage_error("merge", "merged lines are written as sonde's JSON, not as a "
                               ".lprof: give -o FILE.json");
    if ((rc = cli_output_open(&out, o.out)) != 0)
        return rc;
    cli_inputs in;
    rc = cli_inputs_load(env, "merge", words.word, words.count, NULL, &in);
    if (rc == 0 && in.kind != SONDE_LOADED_PROFILE) {
        if (o.format && strcmp(o.format, "json") != 0)
            rc = cli_usage_error("merge", "merged %s figures are written as json, not '%s'",
                                 in.kind == SONDE_LOADED_MEM ? "mem" : "lines", o.format);
        else if (!in.merged)
            rc = cli_usage_error("merge", "give at least two files to merge");
        else
            rc = cli_output_write(&out, &in.text);
    } else if (rc == 0) {
        rc = write_profile(&o, &in, &out);
    }
    if (rc == 0 && strcmp(o.out, "-") != 0)
        fprintf(stderr, "sonde: merged %d file%s into %s\n", words.count,
                words.count == 1 ? "" : "s", out.name);
    cli_inputs_free(&in);
    return rc;
}
