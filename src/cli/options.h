/* options.h - one table of options per command, read by one parser that
 * also prints the command's --help; and the lines errors are told in.
 *
 * Each cmd_<name>.c describes itself in a cli_command: its synopsis, what
 * it does, and a table of cli_opt -- short and long name, the value's
 * name, its type, where it goes (an offset into the command's own options
 * struct), its help.  cli_parse() reads argv against the table, as git's
 * parse-options and austin's argparse do:
 *
 *   -o FILE, -oFILE, --output FILE, --output=FILE  an option with a value
 *   --idle                                         a flag (takes none)
 *   -h, --help                                     prints the help
 *   --                                             ends the options
 *
 * Every helper here returns an exit code: 0 to go on, SONDE_EXIT_USAGE or
 * SONDE_EXIT_FAILED after printing one line that says what is wrong, or
 * CLI_DONE after printing what was asked (--help), which cli_exit() turns
 * into 0.  Usage errors read "sonde CMD: WHAT (see 'sonde CMD --help')",
 * the others "sonde: WHAT". */
#ifndef SONDE_OPTIONS_H
#define SONDE_OPTIONS_H

#include <stddef.h>

#include "../core/buf.h"
#include "cli.h"

/* Exit codes of sonde's own errors (the profiled program's pass through). */
#define SONDE_EXIT_USAGE 2     /* bad command line */
#define SONDE_EXIT_FAILED 1    /* could not profile / read / write */
#define CLI_DONE (-1)          /* done, nothing else to do: exit 0 */

/* The exit code of a step's return value. */
static inline int cli_exit(int rc) { return rc == CLI_DONE ? 0 : rc; }

enum cli_opt_type {
    CLI_FLAG,     /* no value: (int) = .set */
    CLI_IGNORED,  /* no value; accepted for another tool's sake, changes nothing */
    CLI_STRING,   /* (const char *) = the value; given twice, the last counts */
    CLI_OUTPUT,   /* a file to write, as CLI_STRING, each "{rank}" in it the
                   * process's rank in a torch.distributed job (RANK): what
                   * sonde writes under `torchrun --no-python sonde ...` */
    CLI_COUNT,    /* (long) = a whole number from .min to .max, else "NAME .what" */
    CLI_REAL,     /* (double) = a number from .min to .max, else "NAME .what, not 'V'" */
    CLI_PID,      /* (long) = a process id */
    CLI_CALL,     /* .call(cmd, dest, value) each time it is given (-f F -f G) */
    CLI_PROGRAM,  /* (cli_program) runs the value in mode .what; the options end */
};

/* A CLI_CALL option's reader: 0, or an exit code after printing why. */
typedef int (*cli_call_fn)(const char *cmd, void *dest, const char *value);

typedef struct cli_opt {
    char short_name;          /* 'o' for -o, or 0 */
    const char *long_name;    /* "output" for --output, or NULL; NULL with no
                                 short name ends the table */
    const char *arg;          /* the value's name in the help ("FILE"); NULL:
                                 a flag, which takes no value */
    enum cli_opt_type type;
    size_t offset;            /* where in the options struct the value goes */
    const char *help;         /* its help; '\n' starts a line under the last */
    int set;                  /* CLI_FLAG: the value set */
    double min, max;          /* CLI_COUNT, CLI_REAL: the range */
    const char *what;         /* CLI_COUNT, CLI_REAL: the message when out of
                                 range; CLI_PROGRAM: the mode */
    cli_call_fn call;         /* CLI_CALL */
} cli_opt;

/* How the words that are not options are read. */
enum cli_words_rule {
    CLI_WORDS_ANYWHERE,   /* among the options (FILE ...) */
    CLI_WORDS_END,        /* the first one ends the options (SCRIPT ARGS...) */
};

typedef struct cli_command {
    const char *name;       /* "run" */
    const char *summary;    /* its line in `sonde --help` */
    const char *synopsis;   /* after "usage: sonde NAME "; '\n' continues it */
    const char *about;      /* what it does: paragraphs after the usage */
    enum cli_words_rule words;
    const cli_opt *opts;    /* the table, ended by an entry with no name */
    int (*run)(int argc, char **argv, const sonde_env *env);
} cli_command;

/* The words that are not options, moved in order to the front of argv
 * (after argv[0]), with a NULL after them (an exec takes them as they are). */
typedef struct cli_words {
    char **word;
    int count;
    int before_dashes;  /* how many came before a "--" (count if none) */
} cli_words;

/* What run, lines and mem start: a script, -m MODULE or -c CODE, with its
 * own arguments; filled by CLI_PROGRAM options and cli_program_take(). */
typedef struct cli_program {
    const char *mode;       /* "script", "module" or "code"; NULL until given */
    const char *target;     /* the script, module or code */
    const char *python;     /* --python, or NULL */
    char **args;            /* the program's own arguments */
    int nargs;
} cli_program;

/* The options every command that starts a program has, in its table:
 * -m, -c and --python into the cli_program `field` of struct T. */
#define CLI_PROGRAM_OPTIONS(T, field)                                                         \
    { .short_name = 'm', .arg = "MODULE", .type = CLI_PROGRAM,                                \
      .offset = offsetof(T, field), .what = "module",                                         \
      .help = "run a library module as a script, as python -m does" },                        \
    { .short_name = 'c', .arg = "CODE", .type = CLI_PROGRAM, .offset = offsetof(T, field),    \
      .what = "code", .help = "run the code given, as python -c does" },                      \
    { .long_name = "python", .arg = "PY", .type = CLI_STRING,                                 \
      .offset = offsetof(T, field.python),                                                    \
      .help = "interpreter to run the program with (default:\n"                               \
              "$SONDE_PYTHON, else python3)" }

/* The options of the commands that read native frames (record, dump, top):
 * --native (its help says what it adds there), --native-all, and py-spy's
 * --nonblocking, accepted. */
#define CLI_NATIVE_OPTIONS(T, native_field, all_field, native_help)                         \
    { .long_name = "native", .type = CLI_FLAG, .offset = offsetof(T, native_field), .set = 1, \
      .help = native_help },                                                                 \
    { .long_name = "native-all", .type = CLI_FLAG, .offset = offsetof(T, all_field), .set = 1, \
      .help = "--native, keeping the interpreter's own frames" },                            \
    { .long_name = "nonblocking", .type = CLI_IGNORED,                                        \
      .help = "accepted for py-spy's sake: without --native sonde never\n"                    \
              "stops the target" }

/* Reads argv (argv[0]: the command's name; argv[argc] NULL, as main's)
 * against cmd's table into the struct at opts, which holds the defaults.  The other words go to
 * *words.  0 to go on, CLI_DONE after printing the help (-h, --help), or
 * SONDE_EXIT_USAGE after printing what is wrong. */
int cli_parse(const cli_command *cmd, int argc, char **argv, void *opts, cli_words *words);

/* The command's --help into b: usage, what it does, the options. */
void cli_help_write(sonde_buf *b, const cli_command *cmd);

/* After cli_parse of a command whose words end the options: the script
 * (unless -m or -c gave what runs) and the program's arguments from
 * words, checked.  0, or an exit code after printing why it cannot run. */
int cli_program_take(cli_program *p, const char *cmd, const cli_words *words);

/* "sonde CMD: MESSAGE (see 'sonde CMD --help')" on stderr; returns
 * SONDE_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "sonde: MESSAGE" on stderr; returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
