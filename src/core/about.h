/* about.h - what a profile says of the run it was taken from.
 *
 * The command line as run, the interpreter (its path and sys.version),
 * the folder it ran in, when it started (UTC), its wall and CPU time, the processes sampled
 * and sonde run's resource verdict: what the commands know of a run and
 * the files keep (sonde's JSON "about", pprof's time, duration and
 * comments, speedscope's name), for the page's header.  Each field may
 * be unknown.  The struct owns its strings; sonde_about_clear() frees
 * them.  Read from untrusted files, the fields are bounded: at most
 * SONDE_ABOUT_MAX_ARGS arguments, each string at most
 * SONDE_ABOUT_MAX_TEXT bytes. */
#ifndef SONDE_ABOUT_H
#define SONDE_ABOUT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define SONDE_ABOUT_MAX_ARGS 65536u
#define SONDE_ABOUT_MAX_TEXT (1u << 20)

typedef struct sonde_about {
    char **argv;          /* the command line, argc strings; argc 0: unknown */
    uint32_t argc;
    char *executable;     /* the interpreter's path; NULL: unknown */
    char *version;        /* its sys.version; NULL: unknown */
    int64_t start_ns;     /* when the run started, ns since the epoch; 0: unknown */
    double wall;          /* seconds from start to end (record: sampled); < 0: unknown */
    double cpu;           /* seconds of CPU, user + system; < 0: unknown */
    uint32_t processes;   /* processes sampled; 0: unknown */
    char *verdict;        /* sonde run's verdict line; NULL: none */
    char *cwd;            /* the program's working directory as it started, as the program
                           * names paths (from its own root: a chroot's or container's
                           * program names its cwd as it sees it); NULL: unknown */
} sonde_about;

/* Nothing known. */
void sonde_about_init(sonde_about *a);
/* Frees the strings: nothing known again. */
void sonde_about_clear(sonde_about *a);
/* 1 when any field is known. */
int sonde_about_known(const sonde_about *a);

/* *field (one of a's strings) becomes a copy of text[0..len), cut to
 * SONDE_ABOUT_MAX_TEXT bytes.  0, or -1 on out of memory. */
int sonde_about_set(char **field, const char *text, size_t len);
/* Appends an argument (cut as above; past SONDE_ABOUT_MAX_ARGS dropped).
 * 0, or -1 on out of memory. */
int sonde_about_add_arg(sonde_about *a, const char *arg, size_t len);

/* Appends the command line as a POSIX shell would take it: arguments
 * separated by spaces, each quoted ('...') when it holds anything but
 * letters, digits and -_./=:,+@%.  Nothing when argc is 0. */
void sonde_about_command(sonde_buf *b, const sonde_about *a);

/* ns since the epoch as ISO 8601 in UTC with microseconds:
 * "2026-11-26T17:22:08.123456Z" (out holds SONDE_ABOUT_TIME_LEN bytes). */
#define SONDE_ABOUT_TIME_LEN 64
void sonde_about_time_format(int64_t ns, char *out);
/* The reverse, for "YYYY-MM-DDTHH:MM:SS[.fraction]Z".  0, or -1 when text
 * is not such a time. */
int sonde_about_time_parse(const char *text, int64_t *ns);

#endif
