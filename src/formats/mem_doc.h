/* mem_doc.h - the mem document (what sonde mem -o writes and
 * sonde.MemoryProfiler.results() reads back; docs/formats.md), written
 * from its figures.
 *
 * {"sonde": 1, "mode": "mem", "sample_bytes", "native", "line_events",
 *  "interval_ms", "heap_peak_bytes", "reserved_bytes",
 *  "rss_high_water_bytes", "untracked_bytes",
 *  "functions": [{"file", "name", "first_line", "lines": [{"line", "hits",
 *    "alloc_bytes", "freed_bytes", "net_bytes", "reserved_bytes",
 *    "peak_heap_bytes", "rss_bytes", "rss_increment_bytes", "source"}]}],
 *  "leaks": [{"bytes", "native_bytes", "reserved_bytes", "objects",
 *    "stack": [{"file", "name", "line", "source"}]}],
 *  "allocations": [{"bytes", "objects", "stack": [...]}],
 *  "timeline": {"t_ns", "rss_bytes", "heap_bytes", "reserved_bytes",
 *    "spans": [{"name", "start_ns", "end_ns"}]}}
 *
 * The keys are doc.h's; "hits" is null without line events.  Strings are
 * profile bytes (see code_name.h): what is not UTF-8 is written as
 * \udcXX. */
#ifndef SONDE_MEM_DOC_H
#define SONDE_MEM_DOC_H

#include <stdint.h>

#include "../core/buf.h"

/* Leaks the document lists, largest first (the table shows fewer). */
#define SONDE_MEM_DOC_LEAKS 200
/* Allocating stacks the document lists, most bytes first. */
#define SONDE_MEM_DOC_ALLOCATIONS 2000

typedef struct sonde_mem_doc_line {
    int line;
    uint64_t hits;
    uint64_t alloc, freed, net, reserved, peak_heap, rss;
    int64_t rss_increment;
    const char *source;
} sonde_mem_doc_line;

typedef struct sonde_mem_doc_function {
    const char *file, *name;
    int first_line;
    const sonde_mem_doc_line *lines;     /* first_line .. first_line + nlines - 1 */
    uint32_t nlines;
} sonde_mem_doc_function;

typedef struct sonde_mem_doc_frame {
    const char *file, *name;
    int line;
    const char *source;
} sonde_mem_doc_frame;

/* A stack and its bytes: of a leak, what is still alive (native and
 * reserved: of those, from C and mapped but not touched); of an
 * allocation, what was allocated there in all (native, reserved: 0). */
typedef struct sonde_mem_doc_stack {
    uint64_t bytes, native, reserved;
    double objects;                      /* the allocations the bytes stand for */
    const sonde_mem_doc_frame *stack;    /* outermost first */
    uint32_t depth;
} sonde_mem_doc_stack;

typedef struct sonde_mem_doc_point {
    uint64_t t_ns, rss, heap, reserved;
} sonde_mem_doc_point;

typedef struct sonde_mem_doc_span {
    const char *name;
    uint64_t start_ns, end_ns;
} sonde_mem_doc_span;

/* The whole document; the caller owns everything it points to. */
typedef struct sonde_mem_doc {
    uint64_t sample_bytes;
    int native, line_events;
    double interval_ms;
    uint64_t heap_peak, reserved, rss_high_water, untracked;
    const sonde_mem_doc_function *functions;
    uint32_t nfunctions;
    const sonde_mem_doc_stack *leaks;    /* largest first; past SONDE_MEM_DOC_LEAKS, left out */
    uint32_t nleaks;
    const sonde_mem_doc_stack *allocations; /* most first; past SONDE_MEM_DOC_ALLOCATIONS, idem */
    uint32_t nallocations;
    const sonde_mem_doc_point *points;
    uint32_t npoints;
    const sonde_mem_doc_span *spans;
    uint32_t nspans;
} sonde_mem_doc;

/* Writes the document.  0, or -1 when b ran out of memory. */
int sonde_mem_doc_write(sonde_buf *b, const sonde_mem_doc *d);

#endif
