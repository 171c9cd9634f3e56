/* u64map.c - 64-bit key hash map; see u64map.h. */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

void sonde_u64map_init(sonde_u64map *m) { memset(m, 0, sizeof *m); }

void sonde_u64map_free(sonde_u64map *m)
{
    free(m->keys);
    free(m->values);
    sonde_u64map_init(m);
}

static uint32_t hash_key(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

uint32_t sonde_u64map_get(const sonde_u64map *m, uint64_t key)
{
    if (m->nslots == 0)
        return SONDE_U64MAP_NONE;
    uint32_t mask = m->nslots - 1;
    for (uint32_t i = hash_key(key) & mask;; i = (i + 1) & mask) {
        if (m->values[i] == SONDE_U64MAP_NONE)
            return SONDE_U64MAP_NONE;
        if (m->keys[i] == key)
            return m->values[i];
    }
}

static int grow(sonde_u64map *m)
{
    uint32_t n = m->nslots ? m->nslots * 2 : 64;
    if (n < m->nslots)
        return -1;
    uint64_t *keys = malloc((size_t)n * sizeof *keys);
    uint32_t *values = malloc((size_t)n * sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    memset(values, 0xff, (size_t)n * sizeof *values);
    for (uint32_t i = 0; i < m->nslots; i++) {
        if (m->values[i] == SONDE_U64MAP_NONE)
            continue;
        uint32_t j = hash_key(m->keys[i]) & (n - 1);
        while (values[j] != SONDE_U64MAP_NONE)
            j = (j + 1) & (n - 1);
        keys[j] = m->keys[i];
        values[j] = m->values[i];
    }
    free(m->keys);
    free(m->values);
    m->keys = keys;
    m->values = values;
    m->nslots = n;
    return 0;
}

uint32_t *sonde_u64map_slot(sonde_u64map *m, uint64_t key, uint32_t initial)
{
    if ((m->count + 1) * 2 > m->nslots && grow(m) < 0)
        return NULL;
    uint32_t mask = m->nslots - 1;
    uint32_t i = hash_key(key) & mask;
    while (m->values[i] != SONDE_U64MAP_NONE) {
        if (m->keys[i] == key)
            return &m->values[i];
        i = (i + 1) & mask;
    }
    m->keys[i] = key;
    m->values[i] = initial;
    m->count++;
    return &m->values[i];
}
