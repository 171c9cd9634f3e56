/* test_native_objects.c - when the object cache reads the maps again
 * (sampler/native/objects.h): never for an address mapped at the last
 * read until a second has passed, at once for one in no mapping then, in a
 * bounded burst; a library dlopened after the read is found after a
 * refresh; a second reader of the process shares the first's files.  This
 * process's own memory is the reference: a heap block (mapped, no
 * object), a page it unmapped before the read (a hole), and libshare.so's
 * sl_a, loaded after it. */
#include "harness.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/clock.h"
#include "sampler/native/objects.h"

void test_native_objects(void)
{
    void *hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *heap = malloc(1 << 20);   /* its own mapping, or the heap's */
    sonde_native_objects o;
    if (hole == MAP_FAILED || !heap || munmap(hole, 4096) < 0 ||
        sonde_native_objects_init(&o, getpid()) < 0) {
        check(0, "setting up");
        free(heap);
        return;
    }
    uint64_t t = o.read_ns, at = (uint64_t)(uintptr_t)heap, gap = (uint64_t)(uintptr_t)hole;
    check_u64(o.refreshes, 1);
    check(sonde_native_objects_find(&o, at) == NULL, "no object for the heap");
    check_u64(sonde_native_objects_stale(&o, at, t), 0);
    check_u64(sonde_native_objects_stale(&o, at, t + SONDE_NATIVE_RECHECK_NS - 1), 0);
    check_u64(sonde_native_objects_stale(&o, at, t + SONDE_NATIVE_RECHECK_NS), 1);
    check_u64(sonde_native_objects_stale(&o, 4096, t + SONDE_NATIVE_RECHECK_NS), 0);
    check_u64(sonde_native_objects_stale(&o, 1ull << 60, t + SONDE_NATIVE_RECHECK_NS), 0);
    unsigned yes = 0;
    for (int i = 0; i < 100; i++)   /* a burst at one time, then none */
        yes += (unsigned)sonde_native_objects_stale(&o, gap + (uint64_t)i, t);
    check_u64(yes, SONDE_NATIVE_HOLE_BURST);
    check_u64(sonde_native_objects_stale(&o, gap, t + SONDE_NATIVE_HOLE_GAP_NS - 1), 0);
    check_u64(sonde_native_objects_stale(&o, gap, t + SONDE_NATIVE_HOLE_GAP_NS), 1);
    check_u64(sonde_native_objects_stale(&o, gap, t + SONDE_NATIVE_HOLE_GAP_NS), 0);

    void *lib = dlopen(SONDE_TEST_NATIVE_DIR "/libshare.so", RTLD_NOW | RTLD_LOCAL);
    void *sl_a = lib ? dlsym(lib, "sl_a") : NULL;
    check(sl_a != NULL, "dlopen libshare.so: %s", lib ? "no sl_a" : dlerror());
    if (sl_a) {
        uint64_t pc = (uint64_t)(uintptr_t)sl_a;
        int fresh = sonde_native_objects_find(&o, pc) == NULL;   /* not at the first read */
        /* The burst is spent: a new library waits the gap, then is found. */
        uint64_t later = t + 30 * SONDE_NATIVE_HOLE_GAP_NS;
        check(!fresh || sonde_native_objects_stale(&o, pc, later) == 1, "a new library's pc");
        check_u64(sonde_native_objects_refresh(&o), 0);
        const sonde_native_object *ob = sonde_native_objects_find(&o, pc);
        check(ob && strcmp(ob->name, "libshare.so") == 0, "libshare.so found after a refresh");
        check_u64(o.refreshes, 2);
    }
    /* A second reader of the same process shares every file (files.h):
     * none is opened again, and each object's file is the first's. */
    uint64_t opened = sonde_native_files_count.opened;
    sonde_native_objects again;
    if (sonde_native_objects_init(&again, getpid()) == 0) {
        unsigned same = 0;
        for (uint32_t i = 0; i < again.nobjects; i++)
            for (uint32_t j = 0; j < o.nobjects; j++)
                same += again.objects[i].f == o.objects[j].f &&
                        strcmp(again.objects[i].path, "[vdso]") != 0;
        check_u64(sonde_native_files_count.opened, opened);
        check(same + 1 >= again.nobjects && same > 2, "%u of %u objects share a file", same,
              again.nobjects);
        sonde_native_objects_free(&again);
    } else {
        check(0, "reading this process's objects again");
    }
    sonde_native_objects_free(&o);
    if (lib)
        dlclose(lib);
    free(heap);
}
