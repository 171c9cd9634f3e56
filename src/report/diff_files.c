/* diff_files.c - a relative file name on one side of a diff given the
 * other side's absolute name for the same file; see diff.h. */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/u64map.h"

/* Whether a function's file is a relative path ("prog.py", "./tools/x.py"):
 * not absolute, nor a label ("~", "<frozen os>", "<string>"). */
static int relative(const char *file)
{
    return file[0] && file[0] != '/' && file[0] != '<' && file[0] != '~';
}

/* The distinct absolute files of p's functions, as string ids, into a new
 * array *out (NULL when there are none) of *n.  0, or -1 on out of memory. */
static int absolute_files(const sonde_profile *p, uint32_t **out, size_t *n)
{
    sonde_u64map seen;
    sonde_u64map_init(&seen);
    uint32_t *ids = NULL;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        uint32_t file = p->funcs[f].file;
        if (sonde_profile_str(p, file)[0] != '/' ||
            sonde_u64map_get(&seen, file) != SONDE_U64MAP_NONE)
            continue;
        uint32_t *grown = sonde_grow(ids, &cap, *n + 1, sizeof *ids, UINT32_MAX);
        if (!grown || !sonde_u64map_slot(&seen, file, 1)) {
            free(grown ? grown : ids);
            sonde_u64map_free(&seen);
            *n = 0;
            return -1;
        }
        ids = grown;
        ids[(*n)++] = file;
    }
    sonde_u64map_free(&seen);
    *out = ids;
    return 0;
}

/* The one absolute file of other (among ids) that ends in "/" + rel (a
 * leading "./" left out), or NULL where none or several do. */
static const char *only_match(const sonde_profile *other, const uint32_t *ids, size_t n,
                              const char *rel)
{
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    size_t len = strlen(rel);
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *abs = sonde_profile_str(other, ids[i]);
        size_t alen = strlen(abs);
        if (alen > len && abs[alen - len - 1] == '/' && memcmp(abs + alen - len, rel, len) == 0) {
            if (found)
                return NULL;
            found = abs;
        }
    }
    return found;
}

/* p's relative files that name one of other's absolute files take its
 * name.  0, or -1 on out of memory. */
static int adopt_names(sonde_profile *p, const sonde_profile *other)
{
    size_t n;
    uint32_t *ids;
    if (absolute_files(other, &ids, &n) < 0)
        return -1;
    if (n == 0)
        return 0;
    sonde_u64map named; /* p's relative file id -> the id it becomes (itself: none) */
    sonde_u64map_init(&named);
    int rc = 0;
    for (uint32_t f = 0; rc == 0 && f < p->nfuncs; f++) {
        uint32_t file = p->funcs[f].file, to = sonde_u64map_get(&named, file);
        if (to == SONDE_U64MAP_NONE) {
            const char *name = sonde_profile_str(p, file);
            const char *abs = relative(name) ? only_match(other, ids, n, name) : NULL;
            int64_t id = abs ? sonde_strtab_intern_cstr(&p->strings, abs) : (int64_t)file;
            if (id < 0 || !sonde_u64map_slot(&named, file, (uint32_t)id)) {
                rc = -1;
                break;
            }
            to = (uint32_t)id;
        }
        p->funcs[f].file = to;
    }
    sonde_u64map_free(&named);
    free(ids);
    return rc;
}

int sonde_diff_match_files(sonde_profile *before, sonde_profile *after)
{
    return adopt_names(before, after) < 0 || adopt_names(after, before) < 0 ? -1 : 0;
}
