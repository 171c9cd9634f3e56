/* livemap.c - allocations followed by address; see livemap.h. */
#include "livemap.h"

#include <stdlib.h>
#include <string.h>

void sonde_livemap_init(sonde_livemap *m) { memset(m, 0, sizeof *m); }

void sonde_livemap_free(sonde_livemap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->count = m->nslots = 0;
    memset(m->filter, 0, sizeof m->filter);
}

static uint64_t slot_of(uint64_t addr, uint64_t mask)
{
    uint64_t k = addr >> 4;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k & mask;
}

static void place(sonde_livemap_entry *slots, uint64_t mask, const sonde_livemap_entry *e)
{
    uint64_t i = slot_of(e->addr, mask);
    while (slots[i].addr)
        i = (i + 1) & mask;
    slots[i] = *e;
}

static int grow(sonde_livemap *m)
{
    uint64_t n = m->nslots ? m->nslots * 2 : 1024;
    sonde_livemap_entry *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (uint64_t i = 0; i < m->nslots; i++)
        if (m->slots[i].addr)
            place(slots, n - 1, &m->slots[i]);
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
    return 0;
}

static void filter_add(sonde_livemap *m, uint64_t addr, int delta)
{
    uint8_t *c = &m->filter[sonde_livemap_filter_index(addr)];
    uint8_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
    if (v == UINT8_MAX)
        return; /* saturated: stays "maybe" for good */
    __atomic_store_n(c, (uint8_t)(v + delta), __ATOMIC_RELAXED);
}

int sonde_livemap_put(sonde_livemap *m, const sonde_livemap_entry *e)
{
    if (!e->addr)
        return 0;
    if ((m->count + 1) * 2 > m->nslots && grow(m) < 0)
        return -1;
    uint64_t mask = m->nslots - 1, i = slot_of(e->addr, mask);
    while (m->slots[i].addr && m->slots[i].addr != e->addr)
        i = (i + 1) & mask;
    if (!m->slots[i].addr) {
        m->count++;
        filter_add(m, e->addr, 1);
    }
    m->slots[i] = *e;
    return 0;
}

int sonde_livemap_take(sonde_livemap *m, uint64_t addr, sonde_livemap_entry *out)
{
    if (!m->nslots || !addr)
        return 0;
    uint64_t mask = m->nslots - 1, i = slot_of(addr, mask);
    while (m->slots[i].addr != addr) {
        if (!m->slots[i].addr)
            return 0;
        i = (i + 1) & mask;
    }
    *out = m->slots[i];
    m->count--;
    filter_add(m, addr, -1);
    /* Backward-shift deletion: pull later entries of the run into the hole
     * when their home slot is not between the hole and them. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & mask; m->slots[j].addr; j = (j + 1) & mask) {
        uint64_t home = slot_of(m->slots[j].addr, mask);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].addr = 0;
    return 1;
}
