/* pstats.h - the .prof file: pstats' marshal format, keyed like cProfile.
 *
 * The file is one marshalled dict {(file, line, name): (pcalls, ncalls,
 * tottime, cumtime, callers)}, where callers maps each caller's key to
 * (ncalls, pcalls, tottime, cumtime) -- note the order differs from the
 * function's own tuple, exactly as cProfile writes it.  C functions are
 * keyed ('~', 0, label).  pstats.Stats(path), snakeviz and gprof2dot read
 * what sonde_pstats_write (format.h) produces. */
#ifndef SONDE_PSTATS_H
#define SONDE_PSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/profile.h"
#include "../core/stats.h"

/* Reads a .prof file's bytes into p's function table and s.  Accepts
 * cProfile's, profile's and sonde's files.  0, or -1 with a message. */
int sonde_pstats_read(const uint8_t *data, size_t len, sonde_profile *p,
                      sonde_stats *s, char *err, size_t errlen);

#endif
