/* objects.c - the executable mappings of a process and their ELF files; see objects.h. */
#include "objects.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "../proc/maps.h"
#include "guard.h"
#include "symbols.h"

/* Where the file's first byte is mapped (its offset-0 mapping), or, when
 * that is not mapped, where it would be for executable mapping m: what
 * tells two loads of one file apart. */
static uint64_t anchor_of(const sonde_maps *maps, const sonde_map *m)
{
    const sonde_map *base = sonde_maps_find_base(maps, m->path);
    return base ? base->start : m->start - m->offset;
}

#define VDSO "[vdso]"
#define VDSO_MAX (1u << 20)   /* the kernel's is two to four pages */

/* The vdso mapped at [start, end) of process pid, copied out of it: the
 * kernel's own small ELF image (clock_gettime, gettimeofday ...), with
 * symbols and CFI like any library's but no file behind it. */
static int open_vdso(sonde_elf *e, int pid, uint64_t start, uint64_t end)
{
    size_t size = (size_t)(end - start);
    if (end <= start || size > VDSO_MAX)
        return -ENOEXEC;
    void *image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (image == MAP_FAILED)
        return -ENOMEM;
    struct iovec local = { image, size }, remote = { (void *)(uintptr_t)start, size };
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)size) {
        munmap(image, size);
        return -EIO;
    }
    return sonde_elf_adopt(e, image, size);
}

/* The objects[] index of path anchored at anchor (its mapping ends at
 * end), opened on first sight; -1 when the table is full or out of memory. */
static int64_t object_for(sonde_native_objects *o, const sonde_map *m, uint64_t anchor)
{
    const char *path = m->path;
    for (uint32_t i = 0; i < o->nobjects; i++)
        if (o->objects[i].anchor == anchor && strcmp(o->objects[i].path, path) == 0)
            return i;
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
    char file[4200];
    if (strcmp(path, VDSO) == 0 || sonde_maps_file(o->pid, m, file, sizeof file) < 0)
        file[0] = '\0';
    if (!(ob->path = strdup(path)) || !(ob->file = strdup(file))) {
        free(ob->path);
        free(ob->file);
        return -1;
    }
    const char *slash = strrchr(ob->path, '/');
    ob->name = slash ? slash + 1 : ob->path;
    ob->anchor = anchor;
    uint64_t link = 0;
    sonde_native_guard g;
    if (sigsetjmp(g.jump, 1)) {   /* the file shrank while its headers were read */
        sonde_native_guard_end(&g);
        ob->usable = 0;
        ob->shrunk = 1;
        return o->nobjects++;
    }
    sonde_native_guard_begin(&g);
    int opened = strcmp(path, VDSO) == 0 ? open_vdso(&ob->elf, o->pid, anchor, m->end)
                 : file[0]               ? sonde_elf_open(&ob->elf, file)
                                         : -ENAMETOOLONG;
    ob->usable = opened == 0 && sonde_elf_load_base(&ob->elf, &link) == 0 &&
                 sonde_cfi_init(&ob->cfi, &ob->elf) == 0;
    sonde_native_guard_end(&g);
    ob->bias = anchor - link;
    return o->nobjects++;
}

int sonde_native_objects_refresh(sonde_native_objects *o)
{
    sonde_maps maps;
    int rc = sonde_maps_read(o->pid, &maps);
    if (rc < 0)
        return rc;
    o->refreshes++;
    sonde_native_range *ranges = calloc(maps.count ? maps.count : 1, sizeof *ranges);
    uint32_t n = 0;
    for (size_t i = 0; ranges && i < maps.count; i++) {
        const sonde_map *m = &maps.v[i];
        int vdso = strcmp(m->path, VDSO) == 0;
        if (m->perms[2] != 'x' || (m->path[0] != '/' && !vdso))
            continue;
        int64_t ob = object_for(o, m, vdso ? m->start : anchor_of(&maps, m));
        if (ob >= 0)
            ranges[n++] = (sonde_native_range){ m->start, m->end, m->offset, (uint32_t)ob };
    }
    sonde_maps_free(&maps);
    if (!ranges)
        return -ENOMEM;
    free(o->ranges);
    o->ranges = ranges;   /* the kernel lists mappings by address: sorted */
    o->nranges = n;
    return 0;
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
        sonde_native_object *ob = &o->objects[i];
        sonde_native_symbols_free(ob->symbols);
        sonde_cfi_free(&ob->cfi);
        sonde_elf_close(&ob->elf);
        free(ob->path);
        free(ob->file);
    }
    free(o->objects);
    free(o->ranges);
    memset(o, 0, sizeof *o);
}

const sonde_native_range *sonde_native_objects_range(const sonde_native_objects *o,
                                                     uint64_t addr)
{
    uint32_t lo = 0, hi = o->nranges;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (o->ranges[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 || addr >= o->ranges[lo - 1].end ? NULL : &o->ranges[lo - 1];
}

sonde_native_object *sonde_native_objects_find(const sonde_native_objects *o, uint64_t addr)
{
    const sonde_native_range *r = sonde_native_objects_range(o, addr);
    sonde_native_object *ob = r ? &o->objects[r->object] : NULL;
    return ob && ob->usable ? ob : NULL;
}

void sonde_native_objects_shrunk(sonde_native_objects *o, const void *fault,
                                 sonde_native_object *blamed)
{
    const uint8_t *at = fault;
    for (uint32_t i = 0; i < o->nobjects; i++) {
        sonde_native_object *ob = &o->objects[i];
        if (ob->elf.data && at >= ob->elf.data && at < ob->elf.data + ob->elf.size)
            blamed = ob;
    }
    if (blamed) {
        blamed->usable = 0;
        blamed->shrunk = 1;
    }
}
