/* cmd_timeit.c - sonde timeit: calibrated multi-process benchmarks
 * (replaces timeit, %timeit, pyperf timeit and compare_to).
 *
 * This side reads and checks the command line against the table below,
 * then hands the options, as JSON in a file of its private folder (an
 * argument stops at 128 KB, and a setup may be longer), to the driver in
 * Python
 * (python/sonde/_timeit_cli.py, then _timeit.py), which starts the worker processes, does the
 * statistics and prints the lines: sonde.timeit() uses the same driver,
 * so the command and the API cannot drift apart.  The driver's exit code
 * is the command's. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/buf.h"
#include "../core/outfile.h"
#include "commands.h"
#include "launch.h"
#include "launcher.h"
#include "options.h"
#include "path_search.h"
#include "output.h"
#include "tool_args.h"

/* The --python values: as JSON strings, ", "-separated, the first, and
 * how many. */
typedef struct pythons {
    sonde_buf json;
    const char *first;
    int count;
} pythons;

typedef struct timeit_opts {
    sonde_buf setup;     /* the -s values as JSON strings, ", "-separated
                            (tool_args_function appends them) */
    pythons python;
    const char *out, *profile_out;
    long loops, runs, processes;
    int fast, rigorous, compare, profile, lines, subtract_wait;
    double timeout;
} timeit_opts;

static int add_python(const char *cmd, void *dest, const char *value)
{
    pythons *p = dest;
    if (!p->first)
        p->first = value;
    p->count++;
    return tool_args_function(cmd, &p->json, value);
}

static const cli_opt option_table[] = {
    { .short_name = 's', .long_name = "setup", .arg = "SETUP", .type = CLI_CALL,
      .offset = offsetof(timeit_opts, setup), .call = tool_args_function,
      .help = "run once before each value, not timed (repeat it\n"
              "for several lines)" },
    { .short_name = 'n', .long_name = "loops", .arg = "LOOPS", .type = CLI_COUNT,
      .offset = offsetof(timeit_opts, loops), .min = 1, .max = 1e12,
      .what = "takes a number of loops from 1",
      .help = "loops per value (default: calibrated so a value lasts\n"
              "5 ms --fast, 10 ms, 20 ms --rigorous)" },
    { .short_name = 'r', .long_name = "runs", .arg = "RUNS", .type = CLI_COUNT,
      .offset = offsetof(timeit_opts, runs), .min = 1, .max = 1000,
      .what = "takes a number of values from 1 to 1000",
      .help = "values per process (default 3, 5 --rigorous)" },
    { .short_name = 'p', .long_name = "processes", .arg = "P", .type = CLI_COUNT,
      .offset = offsetof(timeit_opts, processes), .min = 1, .max = 1000,
      .what = "takes a number of processes from 1 to 1000",
      .help = "worker processes per statement (default: from 10 until\n"
              "the 95% interval is within 1% of the mean, at most 150\n"
              "or about 8 s a statement; --fast 6-10, 2%, 1 s;\n"
              "--rigorous 20-250, 0.5%, 60 s)" },
    { .long_name = "fast", .type = CLI_FLAG, .offset = offsetof(timeit_opts, fast), .set = 1,
      .help = "a usable answer quickly (within 2 s for 1 us)" },
    { .long_name = "rigorous", .type = CLI_FLAG, .offset = offsetof(timeit_opts, rigorous),
      .set = 1, .help = "a tighter interval, more processes" },
    { .long_name = "python", .arg = "PY", .type = CLI_CALL,
      .offset = offsetof(timeit_opts, python), .call = add_python,
      .help = "interpreter to time under (default: $SONDE_PYTHON,\n"
              "else python3); repeat it to compare interpreters" },
    { .short_name = 'o', .long_name = "output", .arg = "FILE", .type = CLI_STRING,
      .offset = offsetof(timeit_opts, out),
      .help = "write the values as pyperf's JSON (pyperf stats,\n"
              "pyperf compare_to and sonde timeit --compare read it)" },
    { .long_name = "compare", .type = CLI_FLAG, .offset = offsetof(timeit_opts, compare),
      .set = 1, .help = "compare two pyperf JSON files (BEFORE AFTER) instead\n"
                        "of timing statements" },
    { .long_name = "profile", .type = CLI_FLAG, .offset = offsetof(timeit_opts, profile),
      .set = 1, .help = "then profile one value's loop of each statement with\n"
                        "sonde run's engine: the top of its table, on stderr" },
    { .long_name = "lines", .type = CLI_FLAG, .offset = offsetof(timeit_opts, lines),
      .set = 1, .help = "then count one value's loop per line with sonde lines'\n"
                        "engine (the loop and the functions it calls in your\n"
                        "files): its table, on stderr" },
    { .long_name = "profile-output", .arg = "FILE", .type = CLI_STRING,
      .offset = offsetof(timeit_opts, profile_out),
      .help = "write --profile's pstats file or --lines' JSON there\n"
              "(one statement, one of the two)" },
    { .long_name = "subtract-wait", .type = CLI_FLAG,
      .offset = offsetof(timeit_opts, subtract_wait), .set = 1,
      .help = "take the time a worker waited for a CPU (its run\n"
              "delay) off each value: steadier on a busy machine,\n"
              "but lower than other tools' figures" },
    { .long_name = "timeout", .arg = "SECS", .type = CLI_REAL,
      .offset = offsetof(timeit_opts, timeout), .min = 0.001, .max = 1e6,
      .what = "takes seconds from 0.001",
      .help = "give up when a worker process runs longer than this" },
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_timeit = {
    .name = "timeit",
    .summary = "benchmark statements, compare them (replaces timeit, pyperf)",
    .synopsis = "[-s SETUP]... [-n LOOPS] [-r RUNS] [-p P] [--fast | --rigorous]\n"
                "[--python PY]... [-o FILE] [--timeout SECS] [--subtract-wait]\n"
                "[--profile] [--lines] [--profile-output FILE] STMT...\n"
                "--compare BEFORE.json AFTER.json",
    .about = "Times each statement in fresh worker processes (warmups discarded, the\n"
             "garbage collector left on, as the program has it) and prints one line\n"
             "each: mean and std. dev., median, the 95% interval of the mean and the\n"
             "empty loop's cost, with pyperf's warnings.  Two or more statements, or\n"
             "interpreters, are compared with the first: the ratio with its bootstrap\n"
             "interval, and whether a rank test calls the difference significant\n"
             "(statements share each process and are compared process by process:\n"
             "Wilcoxon's signed-rank test; interpreters and files: Mann-Whitney's).\n"
             "Lines go to stdout, warnings to stderr.",
    .words = CLI_WORDS_ANYWHERE,
    .opts = option_table,
    .run = cmd_main,
};

/* The driver's options: {"words": [...], "setup": [...], ...}; output and
 * profile_output are where the driver writes the pyperf file and the
 * profile (NULL: none). */
static void options_json(sonde_buf *b, const timeit_opts *o, const cli_words *w,
                         const char *output, const char *profile_output)
{
    sonde_buf_puts(b, "{\"words\": [");
    for (int i = 0; i < w->count; i++) {
        sonde_buf_puts(b, i ? ", " : "");
        sonde_buf_json_str(b, w->word[i]);
    }
    sonde_buf_printf(b, "], \"setup\": [%s], \"python\": [%s]",
                     o->setup.data ? o->setup.data : "",
                     o->python.json.data ? o->python.json.data : "");
    sonde_buf_printf(b, ", \"loops\": %ld, \"runs\": %ld, \"processes\": %ld, \"timeout\": %g",
                     o->loops, o->runs, o->processes, o->timeout);
    sonde_buf_printf(b, ", \"mode\": \"%s\", \"compare\": %s, \"profile\": %s, "
                     "\"lines\": %s, \"subtract_wait\": %s",
                     o->fast ? "fast" : o->rigorous ? "rigorous" : "default",
                     o->compare ? "true" : "false", o->profile ? "true" : "false",
                     o->lines ? "true" : "false", o->subtract_wait ? "true" : "false");
    const char *keys[] = { "output", "profile_output", "profile_output_name" };
    const char *values[] = { output, profile_output, profile_output ? o->profile_out : NULL };
    for (int i = 0; i < 3; i++) {
        sonde_buf_printf(b, ", \"%s\": ", keys[i]);
        if (values[i])
            sonde_buf_json_str(b, values[i]);
        else
            sonde_buf_puts(b, "null");
    }
    sonde_buf_puts(b, "}");
}

/* Checks what the table cannot.  0, or an exit code after printing why. */
static int check(const timeit_opts *o, const cli_words *w)
{
    if (o->fast && o->rigorous)
        return cli_usage_error("timeit", "--fast or --rigorous, not both");
    if (o->compare && (o->profile || o->lines))
        return cli_usage_error("timeit", "--%s profiles statements, not --compare's files",
                               o->profile ? "profile" : "lines");
    if (o->profile_out && o->profile == o->lines)
        return cli_usage_error("timeit", "--profile-output writes the file of --profile or of "
                               "--lines: give one of the two");
    if (o->profile_out && w->count > 1)
        return cli_usage_error("timeit", "--profile-output writes one statement's profile: "
                               "give one statement");
    if (o->compare && w->count != 2)
        return cli_usage_error("timeit", "--compare takes two pyperf files: BEFORE.json "
                               "AFTER.json");
    if (!o->compare && w->count == 0)
        return cli_usage_error("timeit", "which statement? give one or more to time");
    return 0;
}

/* 1 when name can be run: a path to an executable, or such a file in a
 * folder of PATH. */
static int runnable(const char *name)
{
    char file[PATH_MAX];
    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    return cli_find_on_path(name, file, sizeof file) == 0;
}

/* The interpreter the driver runs under: the one --python that is timed,
 * when there is one and it can be run (it may be the only Python there
 * is, as in a container); else $SONDE_PYTHON or python3, from where it
 * reaches each interpreter compared (and says which cannot be found). */
static const char *driver_python(const sonde_env *env, const pythons *p)
{
    return launch_python(env, p->count == 1 && runnable(p->first) ? p->first : NULL);
}

/* The driver, run in the interpreter sonde launches (not necessarily one
 * the extension was built for: the package's __init__ is not loaded). */
static const char boot[] =
    "import sys, types\n"
    "pkg = types.ModuleType('sonde')\n"
    "pkg.__path__ = [sys.argv[1] + '/sonde']\n"
    "sys.modules['sonde'] = pkg\n"
    "from sonde._timeit_cli import main\n"
    "sys.exit(main(sys.argv[2]))\n";

/* Writes the driver's options (JSON) to the folder's file "options.json",
 * its path into path.  0, or SONDE_EXIT_FAILED after printing why. */
static int write_options(const launcher_session *folder, const sonde_buf *opts, char *path,
                         size_t len)
{
    char err[PATH_MAX + 128];
    if (launcher_path(folder, "options.json", path, len) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "the temporary folder's name (TMPDIR) is too long");
    if (sonde_outfile_write_bytes(path, NULL, opts->data, opts->len, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    timeit_opts o = { .loops = 0 };
    sonde_buf_init(&o.setup);
    sonde_buf_init(&o.python.json);
    sonde_buf opts;
    sonde_buf_init(&opts);
    cli_words words;
    char pkg[PATH_MAX], file[PATH_MAX], profile_file[PATH_MAX], options_file[PATH_MAX];
    cli_output out = { .name = NULL }, profile_out = { .name = NULL };
    launcher_session folder = { .dir = "" }; /* where the driver leaves the files */
    int rc = cli_parse(&cmd_timeit, argc, argv, &o, &words);
    if (rc == 0)
        rc = check(&o, &words);
    if (rc == 0 && o.out) /* checked before any timing, delivered after */
        rc = cli_output_open(&out, o.out);
    if (rc == 0 && o.profile_out)
        rc = cli_output_open(&profile_out, o.profile_out);
    if (rc == 0 &&
        (launcher_open(&folder) < 0 || launcher_path(&folder, "out.json", file, sizeof file) < 0 ||
         launcher_path(&folder, "profile", profile_file, sizeof profile_file) < 0))
        rc = SONDE_EXIT_FAILED;
    if (rc == 0 && launch_package_dir(env, pkg, sizeof pkg) < 0)
        rc = SONDE_EXIT_FAILED;
    if (rc == 0) {
        options_json(&opts, &o, &words, o.out ? file : NULL,
                     o.profile_out ? profile_file : NULL);
        if (!sonde_buf_ok(&opts) || !sonde_buf_ok(&o.setup) || !sonde_buf_ok(&o.python.json))
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
    }
    if (rc == 0)
        rc = write_options(&folder, &opts, options_file, sizeof options_file);
    if (rc == 0) {
        char *run[] = { (char *)driver_python(env, &o.python), "-c", (char *)boot, pkg,
                        options_file, NULL };
        launch_result r;
        fflush(stdout);
        rc = launch_run(run, &r) < 0 ? SONDE_EXIT_FAILED : launch_exit_code(r.status);
    }
    if (rc == 0 && o.out)
        rc = launcher_deliver(&folder, "out.json", &out);
    if (rc == 0 && o.profile_out)
        rc = launcher_deliver(&folder, "profile", &profile_out);
    launcher_close(&folder);
    sonde_buf_free(&opts);
    sonde_buf_free(&o.python.json);
    sonde_buf_free(&o.setup);
    return cli_exit(rc);
}
