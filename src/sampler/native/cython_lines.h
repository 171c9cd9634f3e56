/* cython_lines.h - the Cython source line of a line of the C file Cython
 * generated.  Before each statement's code Cython writes a comment naming
 * the statement's file and line, then the statement:
 *
 *       /\* "pkg/mod.pyx":12
 *      *     return _fib(n - 1) + _fib(n - 2)      # <<<<<<<<<<<<<<
 *      *\/
 *
 * so every C line up to the next such comment comes from that line.  The C
 * file is the program's, untrusted: its size, its lines and the markers
 * kept are bounded, and a file with no marker is not Cython's. */
#ifndef SONDE_NATIVE_CYTHON_LINES_H
#define SONDE_NATIVE_CYTHON_LINES_H

#include <stdint.h>

#define SONDE_CYTHON_C_MAX (256u << 20)    /* bytes of a C file read, at most */
#define SONDE_CYTHON_MARKERS_MAX (1u << 22)

typedef struct sonde_cython_marker {
    uint32_t c_line;     /* the C line the comment starts on */
    uint32_t line;       /* the Cython line it names */
    uint32_t file;       /* index into files */
} sonde_cython_marker;

typedef struct sonde_cython_lines {
    char *c_path;                  /* the C file these are of; NULL before a load */
    sonde_cython_marker *markers;  /* by c_line, ascending */
    uint32_t n;
    char **files;                  /* the Cython files the markers name */
    uint32_t nfiles;
} sonde_cython_lines;

/* Reads the markers of the C file c_path, opened as open_path (the
 * target's file seen from here: /proc/PID/root/...), into t, freeing what
 * t held before.  0; -1 when the file cannot be read, is too large, or has
 * no marker (t then knows c_path, and holds none).  Out of memory: -1. */
int sonde_cython_lines_load(sonde_cython_lines *t, const char *c_path, const char *open_path);

/* The Cython file and line C line c_line of t's file comes from: 1, or 0
 * when no marker comes before it. */
int sonde_cython_lines_find(const sonde_cython_lines *t, uint32_t c_line, const char **file,
                            int *line);

void sonde_cython_lines_free(sonde_cython_lines *t);

#endif
