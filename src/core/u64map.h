/* u64map.h - a hash map from 64-bit keys to 32-bit values.
 *
 * Used for pointer identities (code object -> function id) and for pairs
 * packed into one key (caller << 32 | callee).  The map owns its arrays. */
#ifndef SONDE_U64MAP_H
#define SONDE_U64MAP_H

#include <stdint.h>

#define SONDE_U64MAP_NONE UINT32_MAX

typedef struct sonde_u64map {
    uint64_t *keys;
    uint32_t *values;   /* SONDE_U64MAP_NONE marks an empty slot */
    uint32_t count, nslots;
} sonde_u64map;

void sonde_u64map_init(sonde_u64map *m);
void sonde_u64map_free(sonde_u64map *m);
/* The value for key, or SONDE_U64MAP_NONE. */
uint32_t sonde_u64map_get(const sonde_u64map *m, uint64_t key);
/* Pointer to the value slot for key, inserting `initial` (never
 * SONDE_U64MAP_NONE) when absent;
 * NULL on out of memory.  Valid until the next insertion. */
uint32_t *sonde_u64map_slot(sonde_u64map *m, uint64_t key, uint32_t initial);

#endif
