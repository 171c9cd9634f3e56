/* output.h - where a command's results go: the files its user named (-o,
 * --plot, a page beside its input), checked before any work starts and
 * made absolute before a program runs, then written through the one
 * writer (core/outfile.h); and the standard error. */
#ifndef SONDE_OUTPUT_H
#define SONDE_OUTPUT_H

#include <limits.h>
#include <stddef.h>

#include "../core/buf.h"
#include "../core/outfile.h"

typedef struct cli_output {
    const char *name;       /* as its user gave it, for messages; NULL: none */
    char path[PATH_MAX];    /* absolute, where it is written ("-" stays "-") */
} cli_output;

/* Checks that the file name (NULL: none; "-": standard output) can be
 * written, leaving no new file behind, and keeps it in *o.  0, or
 * SONDE_EXIT_FAILED after printing why not. */
int cli_output_open(cli_output *o, const char *name);

/* Writes what fill(b, ctx) appends / the bytes of b to o.  0, or
 * SONDE_EXIT_FAILED after printing why not (the incomplete file is
 * removed). */
int cli_output_fill(const cli_output *o, sonde_outfile_fill fill, void *ctx);
int cli_output_write(const cli_output *o, const sonde_buf *b);

/* Prints b on standard error: the descriptor sonde was given, never
 * reopened (a log opened for appending keeps its contents; a socket
 * works). */
void cli_report(const sonde_buf *b);

/* file with its extension (if any) replaced by suffix, into out: where a
 * command writes beside its input.  0, or SONDE_EXIT_USAGE after printing
 * that the name is too long. */
int cli_sibling_path(const char *file, const char *suffix, char *out, size_t len);

#endif
