/* test_options.c - the command line's one option parser (cli/options.h):
 * every spelling of an option, the words that are not options, "--", the
 * errors (unknown option, missing value, bad number) and --help; and the
 * help of every registered command lists every option in its table. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "harness.h"

typedef struct test_opts {
    const char *out;
    long limit, pid;
    double rate;
    int idle;
    char seen[64];   /* the -f values, one letter each */
    cli_program prog;
} test_opts;

static int take_f(const char *cmd, void *dest, const char *value)
{
    (void)cmd;
    char *seen = dest;
    size_t n = strlen(seen);
    if (n + 1 < 64) {
        seen[n] = value[0];
        seen[n + 1] = '\0';
    }
    return 0;
}

static const cli_opt table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "FILE", .type = CLI_STRING,
      .offset = offsetof(test_opts, out), .help = "where it goes" },
    { .short_name = 'l', .long_name = "limit", .arg = "N", .type = CLI_COUNT,
      .offset = offsetof(test_opts, limit), .help = "rows\nand a second line" },
    { .short_name = 'r', .arg = "HZ", .type = CLI_REAL, .offset = offsetof(test_opts, rate),
      .min = 1, .max = 100, .what = "needs a rate from 1 to 100", .help = "rate" },
    { .short_name = 'p', .long_name = "pid", .arg = "PID", .type = CLI_PID,
      .offset = offsetof(test_opts, pid), .help = "process" },
    { .long_name = "idle", .type = CLI_FLAG, .offset = offsetof(test_opts, idle), .set = 1,
      .help = "idle too" },
    { .long_name = "busy", .type = CLI_FLAG, .offset = offsetof(test_opts, idle), .set = 0,
      .help = "not idle" },
    { .short_name = 'f', .long_name = "function", .arg = "FUNC", .type = CLI_CALL,
      .offset = offsetof(test_opts, seen), .call = take_f, .help = "each one" },
    { .long_name = "nonblocking", .type = CLI_IGNORED, .help = "for py-spy's sake" },
    CLI_PROGRAM_OPTIONS(test_opts, prog),
    { 0 },
};

static const cli_command files_cmd = {
    .name = "t", .summary = "a test", .synopsis = "[-o FILE]\nFILE...", .about = "Tests.",
    .words = CLI_WORDS_ANYWHERE, .opts = table,
};

static const cli_command program_cmd = {
    .name = "p", .summary = "a test", .synopsis = "(SCRIPT | -m MODULE)", .about = "Runs.",
    .words = CLI_WORDS_END, .opts = table,
};

/* What one cli_parse said on stdout and stderr. */
typedef struct said {
    int rc;
    char out[4096], err[1024];
    char *argv[32];       /* what was parsed: words point into it */
    cli_words words;
} said;

/* What was written to tmp, into text; closes tmp. */
static void read_back(FILE *tmp, char *text, size_t len)
{
    rewind(tmp);
    size_t n = fread(text, 1, len - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
}

/* Parses the NULL-ended words (after argv[0]) against cmd into *o, with
 * the standard output and error caught into s. */
static void parse(const cli_command *cmd, test_opts *o, said *s, char **args)
{
    char **argv = s->argv;
    argv[0] = (char *)cmd->name;
    int argc = 1;
    while (args[argc - 1] && argc < 31) {
        argv[argc] = args[argc - 1];
        argc++;
    }
    argv[argc] = NULL;
    memset(o, 0, sizeof *o);
    o->limit = 30;
    FILE *out = tmpfile(), *err = tmpfile();
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    s->rc = cli_parse(cmd, argc, argv, o, &s->words);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    read_back(out, s->out, sizeof s->out);
    read_back(err, s->err, sizeof s->err);
}

#define PARSE(cmd, o, s, ...) parse(cmd, o, s, (char *[]){ __VA_ARGS__, NULL })

static void test_spellings(void)
{
    test_opts o;
    said s;
    PARSE(&files_cmd, &o, &s, "-oa", "--limit=5", "x", "--idle", "-r", "2.5", "y");
    check_u64(s.rc, 0);
    check_str(o.out, "a");
    check_u64(o.limit, 5);
    check_dbl(o.rate, 2.5);
    check_u64(o.idle, 1);
    check_u64(s.words.count, 2);
    check_str(s.words.word[0], "x");
    check_str(s.words.word[1], "y");
    check(s.words.word[2] == NULL, "the words end with NULL");
    check_str(s.err, "");

    PARSE(&files_cmd, &o, &s, "-o", "a", "--output", "b", "--limit", "7", "--busy");
    check_str(o.out, "b"); /* given twice, the last counts */
    check_u64(o.limit, 7);
    check_u64(o.idle, 0);
    check_u64(s.words.count, 0);

    /* -f each time it is given, in order; --nonblocking changes nothing */
    PARSE(&files_cmd, &o, &s, "-f", "alpha", "--function=beta", "-fgamma", "--nonblocking",
          "--function", "delta");
    check_u64(s.rc, 0);
    check_str(o.seen, "abgd");

    /* a value is the next word whatever it looks like; "-" is a word */
    PARSE(&files_cmd, &o, &s, "-o", "-x", "-", "-p", "42");
    check_str(o.out, "-x");
    check_u64(o.pid, 42);
    check_u64(s.words.count, 1);
    check_str(s.words.word[0], "-");

    /* "--" ends the options: what follows are words, counted apart */
    PARSE(&files_cmd, &o, &s, "a", "--", "--idle", "-o", "b");
    check_u64(s.rc, 0);
    check_u64(o.idle, 0);
    check(o.out == NULL, "-o after -- is a word");
    check_u64(s.words.count, 4);
    check_u64(s.words.before_dashes, 1);
    check_str(s.words.word[1], "--idle");
}

static void test_program_words(void)
{
    test_opts o;
    said s;
    /* the first word ends the options: the rest is the program's */
    PARSE(&program_cmd, &o, &s, "-l", "3", "script.py", "-l", "4", "--help");
    check_u64(s.rc, 0);
    check_u64(o.limit, 3);
    check_u64(s.words.count, 4);
    check_str(s.words.word[0], "script.py");
    check_str(s.words.word[3], "--help");
    check_str(s.out, "");

    /* -m and -c end them too */
    PARSE(&program_cmd, &o, &s, "-m", "json.tool", "--idle", "in.json");
    check_u64(s.rc, 0);
    check_str(o.prog.mode, "module");
    check_str(o.prog.target, "json.tool");
    check_u64(o.idle, 0);
    check_u64(s.words.count, 2);
    check_str(s.words.word[0], "--idle");
    check_u64(cli_program_take(&o.prog, "p", &s.words), 0);
    check_u64(o.prog.nargs, 2);

    PARSE(&program_cmd, &o, &s, "-cprint(1)", "x");
    check_str(o.prog.mode, "code");
    check_str(o.prog.target, "print(1)");
    check_u64(s.words.count, 1);

    /* "--" before a script that looks like an option */
    PARSE(&program_cmd, &o, &s, "--python", "py", "--", "-odd.py", "a");
    check_u64(s.rc, 0);
    check_str(o.prog.python, "py");
    check_u64(s.words.count, 2);
    check_str(s.words.word[0], "-odd.py");
}

/* One usage error: the exit code, one line naming the command and its help. */
static void check_usage_error(const said *s, const char *want, int line)
{
    harness_check(s->rc == SONDE_EXIT_USAGE, __FILE__, line, "exit code %d, want 2", s->rc);
    char full[512];
    snprintf(full, sizeof full, "sonde t: %s (see 'sonde t --help')\n", want);
    check_str_at(s->err, full, "stderr", __FILE__, line);
}

static void test_errors(void)
{
    test_opts o;
    said s;
    PARSE(&files_cmd, &o, &s, "a", "--bogus");
    check_usage_error(&s, "unknown option '--bogus'", __LINE__);
    PARSE(&files_cmd, &o, &s, "-x");
    check_usage_error(&s, "unknown option '-x'", __LINE__);
    PARSE(&files_cmd, &o, &s, "--out=a"); /* no abbreviations */
    check_usage_error(&s, "unknown option '--out=a'", __LINE__);
    PARSE(&files_cmd, &o, &s, "-o");
    check_usage_error(&s, "option -o needs a value", __LINE__);
    PARSE(&files_cmd, &o, &s, "x", "--limit");
    check_usage_error(&s, "option --limit needs a value", __LINE__);
    PARSE(&files_cmd, &o, &s, "--idle=1");
    check_usage_error(&s, "option --idle takes no value", __LINE__);
    PARSE(&files_cmd, &o, &s, "--limit", "many");
    check_usage_error(&s, "-l needs a whole number of 0 or more, not 'many'", __LINE__);
    PARSE(&files_cmd, &o, &s, "-l-1");
    check_usage_error(&s, "-l needs a whole number of 0 or more, not '-1'", __LINE__);
    PARSE(&files_cmd, &o, &s, "-l", "99999999999999999999");
    check_usage_error(&s, "-l needs a whole number of 0 or more, not '99999999999999999999'",
                      __LINE__);
    PARSE(&files_cmd, &o, &s, "-r", "0.5");
    check_usage_error(&s, "-r needs a rate from 1 to 100, not '0.5'", __LINE__);
    PARSE(&files_cmd, &o, &s, "-r", "nan");
    check_usage_error(&s, "-r needs a rate from 1 to 100, not 'nan'", __LINE__);
    PARSE(&files_cmd, &o, &s, "-r", "5x");
    check_usage_error(&s, "-r needs a rate from 1 to 100, not '5x'", __LINE__);
    PARSE(&files_cmd, &o, &s, "--pid", "0");
    check_usage_error(&s, "'0' is not a process id", __LINE__);
    PARSE(&files_cmd, &o, &s, "--pid", "3000000000");
    check_usage_error(&s, "'3000000000' is not a process id", __LINE__);
    check(o.limit == 30, "a failed parse keeps the default");
}

static void test_help(void)
{
    test_opts o;
    said s;
    PARSE(&files_cmd, &o, &s, "-o", "a", "--help", "--bogus");
    check_u64(s.rc, CLI_DONE);
    check_u64(cli_exit(s.rc), 0);
    check_str(s.err, "");
    check_str(s.out,
              "usage: sonde t [-o FILE]\n"
              "               FILE...\n"
              "\n"
              "Tests.\n"
              "\n"
              "  -o, --output FILE    where it goes\n"
              "  -l, --limit N        rows\n"
              "                       and a second line\n"
              "  -r HZ                rate\n"
              "  -p, --pid PID        process\n"
              "      --idle           idle too\n"
              "      --busy           not idle\n"
              "  -f, --function FUNC  each one\n"
              "      --nonblocking    for py-spy's sake\n"
              "  -m MODULE            run a library module as a script, as python -m does\n"
              "  -c CODE              run the code given, as python -c does\n"
              "      --python PY      interpreter to run the program with (default:\n"
              "                       $SONDE_PYTHON, else python3)\n");
    PARSE(&program_cmd, &o, &s, "-h");
    check_u64(s.rc, CLI_DONE);
    check(strncmp(s.out, "usage: sonde p (SCRIPT | -m MODULE)\n\nRuns.\n", 41) == 0,
          "-h prints the help");
}

/* Every registered command's --help names each option of its table:
 * short and long spellings and the value's name, on the option's line. */
static void test_every_command_help(void)
{
    check(cli_ncommands == 11, "eleven commands");
    for (size_t i = 0; i < cli_ncommands; i++) {
        const cli_command *cmd = cli_commands[i];
        sonde_buf b;
        sonde_buf_init(&b);
        cli_help_write(&b, cmd);
        check(b.data && strncmp(b.data, "usage: sonde ", 13) == 0, "%s: usage line", cmd->name);
        int nopts = 0;
        for (const cli_opt *o = cmd->opts; o->short_name || o->long_name; o++, nopts++) {
            char want[128], shortname[4] = "";
            if (o->short_name)
                snprintf(shortname, sizeof shortname, "-%c", o->short_name);
            snprintf(want, sizeof want, "\n  %s%s%s%s%s%s ", o->short_name ? shortname : "  ",
                     o->short_name && o->long_name ? ", " : o->long_name ? "  " : "",
                     o->long_name ? "--" : "", o->long_name ? o->long_name : "",
                     o->arg ? " " : "", o->arg ? o->arg : "");
            check(b.data && strstr(b.data, want), "%s --help lacks '%s'", cmd->name, want + 1);
            check(o->help && o->help[0], "%s: an option without help", cmd->name);
        }
        check(nopts > 0, "%s has options", cmd->name);
        sonde_buf_free(&b);
    }
}

void test_options(void)
{
    test_spellings();
    test_program_words();
    test_errors();
    test_help();
    test_every_command_help();
}
