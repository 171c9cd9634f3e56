/* mapped.h - the anonymous mappings sonde mem follows.
 *
 * A program (or a library: OpenBLAS reserves 32 MiB per thread at import)
 * may map memory it never touches; the kernel gives it pages only when
 * they are first written.  sonde mem follows each anonymous mapping the C
 * allocator shim reports whole, and counts as heap only its touched part:
 * the pages resident now, read with mincore(2) at every timeline reading
 * and at the end.  The rest is shown apart, as reserved.
 *
 * Not thread-safe: the caller holds mem_data.lock (account.h). */
#ifndef SONDE_MEM_MAPPED_H
#define SONDE_MEM_MAPPED_H

#include <stddef.h>
#include <stdint.h>

typedef struct mem_mapping {
    uint64_t addr, len;      /* the mapping */
    uint64_t touched;        /* of len, bytes resident at the last reading */
    uint32_t node;           /* the allocating stack */
} mem_mapping;

/* Past this many live mappings, more are counted as plain heap. */
#define MEM_MAX_MAPPINGS 4096u

typedef struct mem_mappings {
    mem_mapping *items;
    uint32_t n;
    size_t cap;
} mem_mappings;

/* Follows a new mapping (nothing touched yet).  0, or -1 when full or out
 * of memory. */
int mem_mapped_add(mem_mappings *ms, uint64_t addr, uint64_t len, uint32_t node);

/* Takes the mapping at addr out into *out: 1 when there was one, else 0. */
int mem_mapped_take(mem_mappings *ms, uint64_t addr, mem_mapping *out);

/* Reads each mapping's touched bytes again; returns the change of their
 * sum (the heap grows by it, the reserved bytes shrink by it). */
int64_t mem_mapped_measure(mem_mappings *ms, long page_size);

void mem_mapped_free(mem_mappings *ms);

#endif
