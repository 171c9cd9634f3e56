/* alloc_shim.c - libsonde_alloc.so, preloaded (LD_PRELOAD) into programs
 * `sonde mem` runs: malloc and its family, anonymous mmap and munmap, so
 * that memory native code allocates -- C extensions, ctypes, numpy-style
 * buffers -- is seen too.  Every call goes to glibc's own function; while
 * sonde's extension has attached a sink, it is also reported there (see
 * alloc_shim.h).  Without a sink the shim only forwards.
 *
 * glibc exports its allocator as __libc_malloc and friends, so forwarding
 * needs no dlsym() (which itself allocates); the few functions without
 * such a name are looked up once, in the constructor. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_alloc_fn)(size_t, size_t);

static mmap_fn real_mmap;
static munmap_fn real_munmap;
static posix_memalign_fn real_posix_memalign;
static aligned_alloc_fn real_aligned_alloc;

static _Atomic(const sonde_alloc_sink *) sink;

static void resolve(void)
{
    real_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
    real_munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
    real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (aligned_alloc_fn)dlsym(RTLD_NEXT, "aligned_alloc");
}

__attribute__((constructor)) static void shim_init(void)
{
    resolve();
}

EXPORT void sonde_alloc_shim_attach(const sonde_alloc_sink *s)
{
    atomic_store(&sink, s);
}

static inline void report_alloc(void *p, size_t size)
{
    const sonde_alloc_sink *s = atomic_load_explicit(&sink, memory_order_acquire);
    if (s && p)
        s->alloc(p, size);
}

static inline void report_release(void *p)
{
    const sonde_alloc_sink *s = atomic_load_explicit(&sink, memory_order_acquire);
    if (s && p)
        s->release(p);
}

static inline void report_restore(void *p)
{
    const sonde_alloc_sink *s = atomic_load_explicit(&sink, memory_order_acquire);
    if (s && p)
        s->restore(p);
}

EXPORT void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    report_alloc(p, size);
    return p;
}

EXPORT void free(void *p)
{
    report_release(p);
    __libc_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size); /* checks n * size for overflow */
    report_alloc(p, n * size);
    return p;
}

/* Reported as a release of the old block and an allocation of the new:
 * the release first, while no other thread can be handed that address.
 * A realloc that fails (NULL for a size that is not 0) leaves the old
 * block as it was: its release is taken back. */
EXPORT void *realloc(void *p, size_t size)
{
    report_release(p);
    void *q = __libc_realloc(p, size);
    if (!q && size)
        report_restore(p);
    report_alloc(q, size);
    return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

EXPORT void *memalign(size_t alignment, size_t size)
{
    void *p = __libc_memalign(alignment, size);
    report_alloc(p, size);
    return p;
}

EXPORT void *valloc(size_t size)
{
    void *p = __libc_valloc(size);
    report_alloc(p, size);
    return p;
}

EXPORT void *pvalloc(size_t size)
{
    void *p = __libc_pvalloc(size);
    report_alloc(p, size);
    return p;
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!real_posix_memalign)
        resolve();
    int rc = real_posix_memalign(out, alignment, size);
    if (rc == 0)
        report_alloc(*out, size);
    return rc;
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    if (!real_aligned_alloc)
        resolve();
    void *p = real_aligned_alloc(alignment, size);
    report_alloc(p, size);
    return p;
}

/* Only anonymous mappings are memory a program allocates; file mappings
 * are files. */
EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    if (!real_mmap)
        resolve();
    void *p = real_mmap(addr, len, prot, flags, fd, offset);
    if (p != MAP_FAILED && (flags & MAP_ANONYMOUS))
        report_alloc(p, len);
    return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
    __attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len)
{
    if (!real_munmap)
        resolve();
    report_release(addr);
    return real_munmap(addr, len);
}
