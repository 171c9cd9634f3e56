/* pprof_build.h - assembles a pprof profile (profile.proto, gzipped) for
 * the writers of pprof.c and pprof_mem.c.
 *
 * Samples stream through gzip into the output as they are added; the
 * string, function and location tables grow beside them and are written
 * at the end, strings last (index 0 is ""), as Go's runtime writes them.
 * Functions and locations are numbered from 1 in the order they are
 * added; the caller keeps its own map from what it names to their ids.
 *
 * Strings are UTF-8 in profile.proto: a byte of a name that is not
 * (a file name of the file system) is written as the text "\xNN", as
 * sonde's tables show it.
 *
 * A Location of native code (record --native) has a Mapping (the object
 * file: its address range, offset, file name and build id) and an
 * address besides its Line; Python and C functions' Locations have a Line
 * only. */
#ifndef SONDE_PPROF_BUILD_H
#define SONDE_PPROF_BUILD_H

#include <stdint.h>

#include "../core/buf.h"
#include "../core/strtab.h"
#include "../core/u64map.h"
#include "gzip.h"

/* A sample type or the period type: ("samples", "count"), ("cpu",
 * "nanoseconds"), ("alloc_space", "bytes"). */
typedef struct sonde_pprof_type {
    const char *type, *unit;
} sonde_pprof_type;

typedef struct sonde_pprof_build {
    sonde_gz *gz;          /* the output, compressed */
    sonde_buf field;       /* one top-level field being encoded */
    sonde_buf msg;         /* a nested message being encoded */
    sonde_buf functions;   /* Function messages, encoded */
    sonde_buf locations;   /* Location messages, encoded */
    sonde_buf mappings;    /* Mapping messages, encoded */
    uint64_t nfunctions, nlocations, nmappings;
    sonde_strtab strings;  /* id = index in the string table */
    sonde_buf text;        /* a string made valid UTF-8 */
    sonde_u64map loc_index; /* (function << 32 | line) -> location id */
    uint32_t ntypes;
    int failed;            /* out of memory, or the output failed */
} sonde_pprof_build;

/* Starts a profile into out with these sample types (at most 8) and
 * period; default_type names the type pprof shows first (NULL: the last
 * one, pprof's own default).  0, or -1 on out of memory (then free it
 * with sonde_pprof_build_finish all the same). */
int sonde_pprof_build_init(sonde_pprof_build *o, sonde_buf *out, const sonde_pprof_type *types,
                           uint32_t ntypes, sonde_pprof_type period_type, int64_t period,
                           const char *default_type);

/* A new Function: its id.  name is what pprof shows (the qualified name),
 * system_name the plain one (written only when it differs), file "" for
 * a function with no source file (C functions), start_line its first
 * line (0 when unknown). */
uint64_t sonde_pprof_function(sonde_pprof_build *o, const char *name, const char *system_name,
                              const char *file, int64_t start_line);

/* The Location of one line of a function (made on first use): its id. */
uint64_t sonde_pprof_line_location(sonde_pprof_build *o, uint64_t function, int64_t line);

/* A new Mapping (an object file mapped at [start, limit) from file
 * offset offset; build_id in hex, "" when unknown): its id. */
uint64_t sonde_pprof_mapping(sonde_pprof_build *o, uint64_t start, uint64_t limit,
                             uint64_t offset, const char *file, const char *build_id);

/* The Location of one line of a native function, in mapping (0: none)
 * at address (made on first use for the function and line): its id. */
uint64_t sonde_pprof_native_location(sonde_pprof_build *o, uint64_t mapping, uint64_t address,
                                     uint64_t function, int64_t line);

/* A sample's label: a string (str) or, when str is NULL, a number. */
typedef struct sonde_pprof_label {
    const char *key, *str;
    int64_t num;
} sonde_pprof_label;

/* One Sample: its locations leaf first, one value per sample type, and
 * its labels. */
void sonde_pprof_sample(sonde_pprof_build *o, const uint64_t *locations, uint32_t n,
                        const uint64_t *values, const sonde_pprof_label *labels,
                        uint32_t nlabels);

/* The profile's time_nanos (when it was taken, ns since the epoch) and
 * duration_nanos; each left out when 0. */
void sonde_pprof_times(sonde_pprof_build *o, int64_t time_nanos, int64_t duration_nanos);

/* A comment (pprof -comments lists them). */
void sonde_pprof_comment(sonde_pprof_build *o, const char *text);

/* Writes the tables, ends the stream and frees o.  0, or -1 when
 * anything failed (out->oom or out's write error says which). */
int sonde_pprof_build_finish(sonde_pprof_build *o);

#endif
