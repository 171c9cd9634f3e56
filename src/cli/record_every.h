/* record_every.h - sonde record --every's folder: one profile per interval,
 * each named by its start time (sonde-PID-YYYYMMDDTHHMMSSZ.EXT, UTC, so that
 * names sort in time order), and --keep / --keep-bytes: once more than N of
 * the files this run wrote, or more than SIZE bytes of them, stay, the
 * oldest are removed (the newest always stays).  Files the folder held
 * before the run are never touched. */
#ifndef SONDE_RECORD_EVERY_H
#define SONDE_RECORD_EVERY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

typedef struct cli_every_file {
    char *path;
    unsigned long long size;
} cli_every_file;

typedef struct cli_every {
    const char *dir;                /* the folder, as given */
    const char *ext;                /* the files' extension, without its dot */
    long pid;                       /* the process sampled, for the files' names */
    long keep;                      /* --keep N; 0: no bound */
    unsigned long long keep_bytes;  /* --keep-bytes SIZE; 0: no bound */
    cli_every_file *files;          /* the files written and still there, oldest first */
    size_t nfiles, cap;
    unsigned long long bytes;       /* their sizes, in all */
    uint64_t written;               /* files written */
    uint64_t removed, by_bytes;     /* removed for the bounds; of them for --keep-bytes */
    int made;                       /* sonde made the folder */
    char newest[PATH_MAX];          /* the last file written, as named to its user */
} cli_every;

/* --keep-bytes's reader: a size in bytes, with K, M or G (powers of 1024)
 * after it, more than 0, into the unsigned long long at dest. */
int cli_take_size(const char *cmd, void *dest, const char *value);

/* Checks that e->dir is a folder sonde may write in, making it when it
 * is not there (its parent must be).  0, or SONDE_EXIT_USAGE /
 * SONDE_EXIT_FAILED after printing why not. */
int cli_every_check_dir(cli_every *e);

/* Where the interval starting at start_ns (since the epoch) goes, opened
 * (output.h).  0, or SONDE_EXIT_FAILED after printing why not. */
int cli_every_next(cli_every *e, int64_t start_ns, cli_output *out);

/* After out was written: counts it, and removes the oldest files past the
 * bounds (a file that cannot be removed is said once and forgotten).  0,
 * or SONDE_EXIT_FAILED on out of memory. */
int cli_every_written(cli_every *e, const cli_output *out);

/* Frees e; a folder sonde made and wrote nothing in goes too. */
void cli_every_free(cli_every *e);

#endif
