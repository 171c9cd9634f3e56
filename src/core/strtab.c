/* strtab.c - interned strings; see strtab.h. */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

void sonde_strtab_init(sonde_strtab *t) { memset(t, 0, sizeof *t); }

void sonde_strtab_free(sonde_strtab *t)
{
    free(t->bytes);
    free(t->offsets);
    free(t->slots);
    sonde_strtab_init(t);
}

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static int same(const sonde_strtab *t, uint32_t id, const char *s, size_t len)
{
    const char *have = t->bytes + t->offsets[id];
    return strncmp(have, s, len) == 0 && have[len] == '\0';
}

static int grow_slots(sonde_strtab *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t id = 0; id < t->count; id++) {
        const char *s = t->bytes + t->offsets[id];
        uint32_t i = hash_bytes(s, strlen(s)) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

static int append(sonde_strtab *t, const char *s, size_t len)
{
    if (t->len + len + 1 > UINT32_MAX)
        return -1;
    char *bytes = sonde_grow(t->bytes, &t->cap, t->len + len + 1, 1, UINT32_MAX);
    if (!bytes)
        return -1;
    t->bytes = bytes;
    uint32_t *offsets = sonde_grow(t->offsets, &t->offsets_cap, (size_t)t->count + 1,
                                   sizeof *offsets, UINT32_MAX);
    if (!offsets)
        return -1;
    t->offsets = offsets;
    t->offsets[t->count] = (uint32_t)t->len;
    memcpy(t->bytes + t->len, s, len);
    t->bytes[t->len + len] = '\0';
    t->len += len + 1;
    t->count++;
    return 0;
}

int64_t sonde_strtab_intern(sonde_strtab *t, const char *s, size_t len)
{
    const char *nul = memchr(s, '\0', len);
    if (nul)
        len = (size_t)(nul - s); /* a string never holds NUL */
    /* Keep the table at most half full. */
    if ((t->count + 1) * 2 > t->nslots && grow_slots(t) < 0)
        return -1;
    uint32_t mask = t->nslots - 1;
    uint32_t i = hash_bytes(s, len) & mask;
    while (t->slots[i]) {
        uint32_t id = t->slots[i] - 1;
        if (same(t, id, s, len))
            return id;
        i = (i + 1) & mask;
    }
    if (append(t, s, len) < 0)
        return -1;
    t->slots[i] = t->count;
    return t->count - 1;
}

int64_t sonde_strtab_intern_cstr(sonde_strtab *t, const char *s)
{
    return sonde_strtab_intern(t, s, strlen(s));
}

const char *sonde_strtab_get(const sonde_strtab *t, uint32_t id)
{
    return id < t->count ? t->bytes + t->offsets[id] : "";
}
