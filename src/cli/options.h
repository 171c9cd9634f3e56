/* options.h - small helpers every subcommand uses to read its arguments
 * and to report errors in one consistent line. */
#ifndef SONDE_OPTIONS_H
#define SONDE_OPTIONS_H

#include <stddef.h>

#include "../core/buf.h"

/* Exit codes of sonde's own errors (the profiled program's pass through). */
#define SONDE_EXIT_USAGE 2     /* bad command line */
#define SONDE_EXIT_FAILED 1    /* could not profile / read / write */

/* Matches argv[*i] against -s / --long, with the value in the same word
 * (-sVAL, --long=VAL) or the next.  Returns 1 and sets *value when it
 * matches, 0 when it does not, -1 (after printing why) when the value is
 * missing.  short_name or long_name may be NULL. */
int cli_option(int argc, char **argv, int *i, const char *short_name,
               const char *long_name, const char **value);
/* 1 when argv[*i] is exactly one of the two flag spellings. */
int cli_flag(const char *arg, const char *short_name, const char *long_name);
/* Parses a non-negative integer option value; -1 (after printing) if bad. */
int cli_count(const char *cmd, const char *flag, const char *text, long *out);

/* arg, not an option of the command, as its one FILE argument: 0 after
 * storing it in *file, or SONDE_EXIT_USAGE (after printing) for an
 * unknown option or a second file. */
int cli_one_file(const char *cmd, const char *arg, const char **file);

/* The output check and write every command shares: 0 when path can be
 * written (a new file is not left behind: it is written at the end) /
 * when b was written to path ("-" = standard output), else
 * SONDE_EXIT_FAILED after printing why. */
int cli_check_writable(const char *path);
int cli_write(const sonde_buf *b, const char *path);

/* Prints b on standard error: the descriptor sonde was given, never
 * reopened (a log opened for appending keeps its contents; a socket
 * works). */
void cli_report(const sonde_buf *b);

/* file with its extension (if any) replaced by suffix, into out: where a
 * command writes beside its input.  0, or SONDE_EXIT_USAGE after printing
 * that the name is too long. */
int cli_sibling_path(const char *file, const char *suffix, char *out, size_t len);

/* Parses a process id; -1 (after printing) if it is not one. */
int cli_pid(const char *cmd, const char *text, long *out);

/* "sonde CMD: MESSAGE\n" plus "try 'sonde CMD --help'" on stderr;
 * returns SONDE_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "sonde: MESSAGE\n" on stderr; returns `code`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
