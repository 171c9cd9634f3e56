/* load.h - reads a profile file of any kind sonde understands. */
#ifndef SONDE_LOAD_H
#define SONDE_LOAD_H

#include <stddef.h>

#include "../core/profile.h"
#include "../core/stats.h"

/* Files larger than this are refused rather than read into memory. */
#define SONDE_LOAD_MAX_BYTES (1u << 30)

/* Loads path (a .prof from sonde, cProfile or profile) into p and s, which
 * must be initialised.  0, or -1 with a message naming the file. */
int sonde_load_file(const char *path, sonde_profile *p, sonde_stats *s,
                    char *err, size_t errlen);

#endif
