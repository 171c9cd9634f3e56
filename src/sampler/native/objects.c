/* objects.c - the executable mappings of a process and their ELF files; see objects.h. */
#include "objects.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/clock.h"
#include "../proc/maps.h"

/* Where the file's first byte is mapped (its offset-0 mapping: base, or
 * SONDE_MAPS_NO_BASE), or, when that is not mapped, where it would be for
 * executable mapping m: what tells two loads of one file apart. */
static uint64_t anchor_of(const sonde_maps *maps, const sonde_map *m, uint32_t base)
{
    return base != SONDE_MAPS_NO_BASE ? maps->v[base].start : m->start - m->offset;
}

#define VDSO "[vdso]"

/* The objects[] index of path anchored at anchor (its mapping ends at
 * end), opened on first sight; -1 when the table is full or out of memory. */
static int64_t object_for(sonde_native_objects *o, const sonde_map *m, uint64_t anchor)
{
    const char *path = m->path;
    uint32_t known = sonde_u64map_get(&o->by_anchor, anchor);
    if (known < o->nobjects && strcmp(o->objects[known].path, path) == 0)
        return known;
    for (uint32_t i = 0; known != SONDE_U64MAP_NONE && i < o->nobjects; i++)
        if (o->objects[i].anchor == anchor && strcmp(o->objects[i].path, path) == 0)
            return i;   /* another file was mapped there since: rare */
    if (o->nobjects == SONDE_NATIVE_MAX_OBJECTS)
        return -1;
    if (o->nobjects == o->objects_cap) {
        uint32_t cap = o->objects_cap ? o->objects_cap * 2 : 64;
        sonde_native_object *v = realloc(o->objects, cap * sizeof *v);
        if (!v)
            return -1;
        o->objects = v;
        o->objects_cap = cap;
    }
    sonde_native_object *ob = &o->objects[o->nobjects];
    memset(ob, 0, sizeof *ob);
    int vdso = strcmp(path, VDSO) == 0;
    char file[4200];
    if (vdso || sonde_maps_file(o->pid, m, file, sizeof file) < 0)
        file[0] = '\0';
    if (!(ob->path = strdup(path)))
        return -1;
    if (!(ob->f = sonde_native_files_get(file, vdso, o->pid, anchor, m->end))) {
        free(ob->path);
        return -1;
    }
    /* Indexed once it is whole: a failure leaves no index to a slot a
     * later object takes. */
    uint32_t *slot = sonde_u64map_slot(&o->by_anchor, anchor, o->nobjects);
    if (!slot) {
        sonde_native_files_put(ob->f);
        free(ob->path);
        return -1;
    }
    *slot = o->nobjects;   /* the newest with this anchor, usable or not */
    const char *slash = strrchr(ob->path, '/');
    ob->name = slash ? slash + 1 : ob->path;
    ob->anchor = anchor;
    ob->bias = anchor - ob->f->link;
    return o->nobjects++;
}

int sonde_native_objects_refresh(sonde_native_objects *o)
{
    sonde_maps maps;
    int rc = sonde_maps_read(o->pid, &maps);
    if (rc < 0)
        return rc;
    o->refreshes++;
    o->read_ns = sonde_clock_ns();
    size_t cap = maps.count ? maps.count : 1;
    sonde_native_range *ranges = calloc(cap, sizeof *ranges);
    sonde_native_span *mapped = calloc(cap, sizeof *mapped);
    uint32_t *base = calloc(cap, sizeof *base);
    uint32_t n = 0, nm = 0;
    if (!ranges || !mapped || !base || sonde_maps_bases(&maps, base) < 0) {
        free(ranges);
        free(mapped);
        free(base);
        sonde_maps_free(&maps);
        return -ENOMEM;
    }
    for (size_t i = 0; i < maps.count; i++) {
        const sonde_map *m = &maps.v[i];
        if (nm && mapped[nm - 1].end == m->start)
            mapped[nm - 1].end = m->end;
        else
            mapped[nm++] = (sonde_native_span){ m->start, m->end };
        int vdso = strcmp(m->path, VDSO) == 0;
        if (m->perms[2] != 'x' || (m->path[0] != '/' && !vdso))
            continue;
        int64_t ob = object_for(o, m, vdso ? m->start : anchor_of(&maps, m, base[i]));
        if (ob >= 0)
            ranges[n++] = (sonde_native_range){ m->start, m->end, m->offset, (uint32_t)ob };
    }
    free(base);
    sonde_maps_free(&maps);
    free(o->ranges);
    o->ranges = ranges;   /* the kernel lists mappings by address: sorted */
    o->nranges = n;
    free(o->mapped);
    o->mapped = mapped;
    o->nmapped = nm;
    return 0;
}

_Static_assert(offsetof(sonde_native_range, start) == 0 && offsetof(sonde_native_span, start) == 0,
               "starting_by reads start first");

/* How many of the n entries of v (each size bytes, sorted by a uint64_t
 * start as their first member: sonde_native_range, sonde_native_span)
 * start at or below addr: the one that may hold addr is the last of them. */
static uint32_t starting_by(const void *v, uint32_t n, size_t size, uint64_t addr)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint64_t start;
        memcpy(&start, (const char *)v + (size_t)mid * size, sizeof start);
        if (start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 when addr was in a mapping at the last read. */
static int was_mapped(const sonde_native_objects *o, uint64_t addr)
{
    uint32_t k = starting_by(o->mapped, o->nmapped, sizeof *o->mapped, addr);
    return k > 0 && addr < o->mapped[k - 1].end;
}

int sonde_native_objects_stale(sonde_native_objects *o, uint64_t addr, uint64_t now_ns)
{
    if (addr < 65536 || addr >> 57)   /* below mmap_min_addr, or no user address */
        return 0;
    if (was_mapped(o, addr))
        return now_ns >= o->read_ns + SONDE_NATIVE_RECHECK_NS;
    uint64_t tau = (SONDE_NATIVE_HOLE_BURST - 1) * SONDE_NATIVE_HOLE_GAP_NS;
    if (o->hole_due_ns > now_ns + tau)
        return 0;
    o->hole_due_ns = (o->hole_due_ns > now_ns ? o->hole_due_ns : now_ns) + SONDE_NATIVE_HOLE_GAP_NS;
    return 1;
}

int sonde_native_objects_init(sonde_native_objects *o, int pid)
{
    memset(o, 0, sizeof *o);
    o->pid = pid;
    int rc = sonde_native_objects_refresh(o);
    if (rc < 0)
        sonde_native_objects_free(o);
    return rc;
}

void sonde_native_objects_free(sonde_native_objects *o)
{
    for (uint32_t i = 0; i < o->nobjects; i++) {
        sonde_native_files_put(o->objects[i].f);
        free(o->objects[i].path);
    }
    free(o->objects);
    free(o->ranges);
    free(o->mapped);
    sonde_u64map_free(&o->by_anchor);
    memset(o, 0, sizeof *o);
}

const sonde_native_range *sonde_native_objects_range(const sonde_native_objects *o,
                                                     uint64_t addr)
{
    uint32_t k = starting_by(o->ranges, o->nranges, sizeof *o->ranges, addr);
    return k == 0 || addr >= o->ranges[k - 1].end ? NULL : &o->ranges[k - 1];
}

sonde_native_object *sonde_native_objects_find(const sonde_native_objects *o, uint64_t addr)
{
    const sonde_native_range *r = sonde_native_objects_range(o, addr);
    sonde_native_object *ob = r ? &o->objects[r->object] : NULL;
    return ob && ob->f->usable ? ob : NULL;
}

void sonde_native_objects_shrunk(sonde_native_objects *o, const void *fault,
                                 sonde_native_object *blamed)
{
    const uint8_t *at = fault;
    sonde_native_file *f = blamed ? blamed->f : NULL;
    for (uint32_t i = 0; i < o->nobjects; i++) {
        sonde_native_file *g = o->objects[i].f;
        if (g->elf.data && at >= g->elf.data && at < g->elf.data + g->elf.size)
            f = g;
    }
    if (f) {
        f->usable = 0;
        f->shrunk = 1;
    }
}
