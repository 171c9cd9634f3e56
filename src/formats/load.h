/* load.h - reads a profile file of any kind sonde understands. */
#ifndef SONDE_LOAD_H
#define SONDE_LOAD_H

#include <stddef.h>

#include "../core/profile.h"
#include "../core/stats.h"
#include "json_read.h"

/* Files larger than this are refused rather than read into memory. */
#define SONDE_LOAD_MAX_BYTES (1u << 30)

enum sonde_load_kind {
    SONDE_LOADED_PROFILE,  /* a .prof, sonde's JSON profile, a Gecko, pprof or collapsed file */
    SONDE_LOADED_LINES,    /* a sonde lines -o document */
    SONDE_LOADED_MEM,      /* a sonde mem -o document */
};

/* Loads path, read and decoded once: a profile of calls (a .prof from
 * sonde, cProfile or profile, sonde's JSON profile, a Firefox Profiler
 * file (gecko.h), a pprof file, gzipped or not, or collapsed stacks:
 * collapsed_read.h) into p and s, which must be initialised; or, when
 * doc is not NULL, a lines or mem document into *doc (the caller frees
 * it with sonde_jtree_free).  *kind (when not NULL) says which.  0, or
 * -1 with a message naming the file.  Only a regular file is read (a
 * FIFO is refused at once, never waited on). */
int sonde_load_any(const char *path, sonde_profile *p, sonde_stats *s, sonde_jtree *doc,
                   enum sonde_load_kind *kind, char *err, size_t errlen);

/* sonde_load_any for a file's bytes already in memory (path names it in
 * messages). */
int sonde_load_bytes(const char *path, const unsigned char *data, size_t len, sonde_profile *p,
                     sonde_stats *s, sonde_jtree *doc, enum sonde_load_kind *kind, char *err,
                     size_t errlen);

/* sonde_load_any for a profile of calls only. */
int sonde_load_file(const char *path, sonde_profile *p, sonde_stats *s,
                    char *err, size_t errlen);

/* 1 when a loaded profile has its calling-context tree (sonde's JSON,
 * pprof, Gecko, collapsed stacks), 0 when it has only the stats (a .prof
 * file, or sonde's JSON converted from one). */
static inline int sonde_load_has_tree(const sonde_profile *p)
{
    return p->nthreads > 0;
}

#endif
