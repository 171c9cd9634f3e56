/* flat.c - the flat-tree decoders' shared machinery; see flat.h. */
#include "flat.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"

int sonde_flat_ids_push(sonde_flat_ids *l, uint32_t id)
{
    uint32_t *at = sonde_grow(l->at, &l->cap, (size_t)l->n + 1, sizeof *at, UINT32_MAX);
    if (!at)
        return -1;
    l->at = at;
    l->at[l->n++] = id;
    return 0;
}

int sonde_flat_ids_add_run(sonde_flat_ids *items, const sonde_flat_ids *run, uint32_t *first)
{
    *first = items->n;
    if (run->n == 0)
        return 0;
    uint32_t *at = sonde_grow(items->at, &items->cap, (size_t)items->n + run->n, sizeof *at,
                              UINT32_MAX);
    if (!at)
        return -1;
    items->at = at;
    memcpy(items->at + items->n, run->at, (size_t)run->n * sizeof *run->at);
    items->n += run->n;
    return 0;
}

void sonde_flat_ids_free(sonde_flat_ids *l)
{
    free(l->at);
    memset(l, 0, sizeof *l);
}

int sonde_flat_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen && err[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
