/* lines_doc.h - the lines document (what sonde lines -o writes and
 * sonde.LineProfiler.results() reads back; docs/formats.md), written
 * from its figures.
 *
 * {"sonde": 1, "mode": "lines", "functions": [{"file", "name",
 *  "first_line", "total_ns", "lines": [{"line", "hits", "iterations",
 *  "time_ns", "source"}], and with instructions counted "instructions": [{"offset",
 *  "opname", "arg", "line", "hits", "time_ns"}]}]}
 *
 * The keys are doc.h's.  Strings are profile bytes (see code_name.h):
 * what is not UTF-8 is written as \udcXX. */
#ifndef SONDE_LINES_DOC_H
#define SONDE_LINES_DOC_H

#include <stdint.h>

#include "../core/buf.h"

typedef struct sonde_lines_doc_line {
    int line;
    uint64_t hits, iterations, time_ns;
    const char *source;
} sonde_lines_doc_line;

typedef struct sonde_lines_doc_instr {
    int offset, line;
    const char *opname, *arg;
    uint64_t hits, time_ns;
} sonde_lines_doc_instr;

/* A function; the caller owns everything it points to. */
typedef struct sonde_lines_doc_function {
    const char *file, *name;
    int first_line;
    const sonde_lines_doc_line *lines;   /* first_line .. first_line + nlines - 1 */
    uint32_t nlines;
    int has_instrs;                      /* instructions were counted */
    const sonde_lines_doc_instr *instrs;
    uint32_t ninstrs;
} sonde_lines_doc_function;

/* Writes the document of n functions (total_ns is their lines' time added
 * up).  0, or -1 when b ran out of memory. */
int sonde_lines_doc_write(sonde_buf *b, const sonde_lines_doc_function *fns, uint32_t n);

#endif
