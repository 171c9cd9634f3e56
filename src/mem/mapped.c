/* mapped.c - anonymous mappings and their touched part; see mapped.h. */
#include "mapped.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "../core/grow.h"

int mem_mapped_add(mem_mappings *ms, uint64_t addr, uint64_t len, uint32_t node)
{
    if (ms->n == ms->cap) {
        mem_mapping *bigger = sonde_grow(ms->items, &ms->cap, (size_t)ms->n + 1, sizeof *bigger,
                                         MEM_MAX_MAPPINGS);
        if (!bigger)
            return -1;
        ms->items = bigger;
    }
    ms->items[ms->n++] = (mem_mapping){ .addr = addr, .len = len, .node = node };
    return 0;
}

int mem_mapped_take(mem_mappings *ms, uint64_t addr, mem_mapping *out)
{
    for (uint32_t i = 0; i < ms->n; i++)
        if (ms->items[i].addr == addr) {
            *out = ms->items[i];
            ms->items[i] = ms->items[--ms->n];
            return 1;
        }
    return 0;
}

/* Resident bytes of [addr, addr + len), a page-aligned mapping; a part
 * that is no longer mapped (the program unmapped a piece) counts none. */
static uint64_t resident(uint64_t addr, uint64_t len, long page_size)
{
    unsigned char vec[4096];
    uint64_t chunk = sizeof vec * (uint64_t)page_size, pages = 0;
    for (uint64_t off = 0; off < len; off += chunk) {
        uint64_t n = len - off < chunk ? len - off : chunk;
        if (mincore((void *)(uintptr_t)(addr + off), n, vec) != 0)
            continue;
        for (uint64_t i = 0; i < (n + (uint64_t)page_size - 1) / (uint64_t)page_size; i++)
            pages += vec[i] & 1;
    }
    uint64_t bytes = pages * (uint64_t)page_size;
    return bytes < len ? bytes : len;
}

int64_t mem_mapped_measure(mem_mappings *ms, long page_size)
{
    int64_t change = 0;
    for (uint32_t i = 0; i < ms->n; i++) {
        mem_mapping *mp = &ms->items[i];
        uint64_t now = resident(mp->addr, mp->len, page_size);
        change += (int64_t)now - (int64_t)mp->touched;
        mp->touched = now;
    }
    return change;
}

void mem_mapped_free(mem_mappings *ms)
{
    free(ms->items);
    ms->items = NULL;
    ms->n = ms->cap = 0;
}
