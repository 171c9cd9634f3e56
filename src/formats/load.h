/* load.h - reads a profile file of any kind sonde understands. */
#ifndef SONDE_LOAD_H
#define SONDE_LOAD_H

#include <stddef.h>

#include "../core/profile.h"
#include "../core/stats.h"

/* Files larger than this are refused rather than read into memory. */
#define SONDE_LOAD_MAX_BYTES (1u << 30)

/* The whole of a regular file (at most SONDE_LOAD_MAX_BYTES), malloc'd;
 * NULL with a message naming the file. */
unsigned char *sonde_load_bytes(const char *path, size_t *len, char *err, size_t errlen);

/* 1 when data starts like a JSON document rather than a marshal one. */
int sonde_load_is_json(const unsigned char *data, size_t len);

/* Loads path (a .prof from sonde, cProfile or profile, or sonde's JSON
 * profile) into p and s, which must be initialised.  0, or -1 with a
 * message naming the file. */
int sonde_load_file(const char *path, sonde_profile *p, sonde_stats *s,
                    char *err, size_t errlen);

/* 1 when a loaded profile has its calling-context tree (sonde's JSON), 0
 * when it has only the stats (a .prof file). */
static inline int sonde_load_has_tree(const sonde_profile *p)
{
    return p->nthreads > 0;
}

#endif
