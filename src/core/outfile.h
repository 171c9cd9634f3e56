/* outfile.h - the one way sonde checks and writes a file a user named.
 *
 * Every output file -- the command line's -o and --plot, its pages and
 * graphs, and what the Python API writes (Profile.dump_stats and write,
 * LineProfiler and MemoryProfiler.dump_json) -- is checked and written
 * here, so a failure reads the same everywhere: "cannot write 'NAME':
 * WHY".  A write streams what a fill function appends (buf.h), so output
 * of any size needs one chunk of memory.  A file is written whole to a new
 * file beside it, then renamed over its name: a link at the name is
 * replaced, never followed (as root in a shared folder, a link could point
 * anywhere), and a write that fails leaves what was there.  A device, a
 * pipe or a socket (a link to one too: /dev/stdout) is written in place.
 * "-" is the standard output. */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stddef.h>

#include "buf.h"

/* Appends the output to b, a streaming buf.  0, or -1 when it failed or
 * refused (b->why then says why, in place of the usual message). */
typedef int (*sonde_outfile_fill)(sonde_buf *b, void *ctx);

/* In every function below, name is how the message calls the file (as
 * its user gave it), or NULL for path itself. */

/* 0 when path can be written, without leaving a file that was not there
 * (it is written at the end); else -1 with the message in err. */
int sonde_outfile_check(const char *path, const char *name, char *err, size_t errlen);

/* Writes to path what fill(b, ctx) appends.  0, or -1 with the message
 * in err (the incomplete file removed). */
int sonde_outfile_write(const char *path, const char *name, sonde_outfile_fill fill, void *ctx,
                        char *err, size_t errlen);

/* Writes the len bytes at data to path, as sonde_outfile_write. */
int sonde_outfile_write_bytes(const char *path, const char *name, const void *data, size_t len,
                              char *err, size_t errlen);

#endif
