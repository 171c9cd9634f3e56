/* livemap.h - the allocations a memory profile is following, by address.
 *
 * An open-addressing map from a block's address to what is known about it
 * (its weight in bytes, the stack node that allocated it, its kind), with
 * removal, plus a counting filter: a small table of counters indexed by
 * the address's hash that is never zero for an address in the map, so a
 * release of an address not followed -- almost all of them when
 * allocations are sampled -- is told apart with one load and no lock.
 *
 * Not thread-safe except sonde_livemap_maybe(), which may race with insertions
 * and removals of other addresses (the caller's lock orders the rest). */
#ifndef SONDE_LIVEMAP_H
#define SONDE_LIVEMAP_H

#include <stdint.h>

typedef struct sonde_livemap_entry {
    uint64_t addr;      /* 0: an empty slot */
    uint64_t bytes;     /* what the block counts for */
    uint32_t node;      /* the allocating stack */
    uint32_t kind;
} sonde_livemap_entry;

#define LIVEMAP_FILTER_BITS 20

typedef struct sonde_livemap {
    sonde_livemap_entry *slots;
    uint64_t count, nslots;
    uint8_t filter[1u << LIVEMAP_FILTER_BITS]; /* saturated counters stay */
} sonde_livemap;

void sonde_livemap_init(sonde_livemap *m);
void sonde_livemap_free(sonde_livemap *m);

static inline uint32_t sonde_livemap_filter_index(uint64_t addr)
{
    return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - LIVEMAP_FILTER_BITS));
}

/* 0 when addr is certainly not in the map. */
static inline int sonde_livemap_maybe(const sonde_livemap *m, const void *addr)
{
    return __atomic_load_n(&m->filter[sonde_livemap_filter_index((uint64_t)(uintptr_t)addr)],
                           __ATOMIC_RELAXED) != 0;
}

/* Adds (or replaces) the entry for e->addr.  0, or -1 on out of memory. */
int sonde_livemap_put(sonde_livemap *m, const sonde_livemap_entry *e);

/* Takes the entry for addr out into *out.  1 when there was one, else 0. */
int sonde_livemap_take(sonde_livemap *m, uint64_t addr, sonde_livemap_entry *out);

#endif
