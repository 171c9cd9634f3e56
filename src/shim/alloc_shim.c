/* alloc_shim.c - libsonde_alloc.so, preloaded (LD_PRELOAD) into programs
 * `sonde mem` runs: malloc and its family, anonymous mmap and munmap, so
 * that memory native code allocates -- C extensions, ctypes, numpy-style
 * buffers -- is seen too.  Every call goes to glibc's own function; while
 * sonde's extension has attached a sink, it is also reported there (see
 * alloc_shim.h).  Without a sink the shim only forwards.
 *
 * glibc exports its allocator as __libc_malloc and friends, so forwarding
 * needs no dlsym() (which itself allocates); the few functions without
 * such a name are looked up once, in the constructor.
 *
 * A program may also reach the allocator through a handle to the C
 * library itself (ctypes.CDLL("libc.so.6").malloc), whose lookups do not
 * pass through the shim: dlsym() is the shim's too, and answers those
 * names with the shim's functions (x86-64).
 *
 * pthread_create is wrapped too: each new thread learns the token of the
 * thread that started it (alloc_shim.h), so that sonde can give what a
 * worker allocates to the line that started it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* The C library's functions without a __libc_ name: set by the
 * constructor, or by a call that comes before it (another library's
 * constructor: still one thread, the program's threads start later);
 * read-only from then on, any thread. */
static mmap_fn real_mmap;
static munmap_fn real_munmap;
static posix_memalign_fn real_posix_memalign;
static aligned_alloc_fn real_aligned_alloc;
static pthread_create_fn real_pthread_create;

/* Where reports go, or NULL: atomic (attach stores it, every report loads
 * it with acquire). */
static _Atomic(const sonde_alloc_sink *) sink;

#if defined(__x86_64__)
#define SHIM_DLSYM 1
typedef void *(*dlsym_fn)(void *, const char *);
/* glibc's dlsym (reached through dlvsym, which the shim leaves alone);
 * hidden, read by the entry point below.  Set by the constructor. */
__attribute__((visibility("hidden"))) dlsym_fn shim_real_dlsym;
static void resolve_dlsym(void);
#endif

static void resolve(void)
{
#ifdef SHIM_DLSYM
    resolve_dlsym();
    dlsym_fn lookup = shim_real_dlsym;
#else
    void *(*lookup)(void *, const char *) = dlsym;
#endif
    real_mmap = (mmap_fn)lookup(RTLD_NEXT, "mmap");
    real_munmap = (munmap_fn)lookup(RTLD_NEXT, "munmap");
    real_posix_memalign = (posix_memalign_fn)lookup(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = (aligned_alloc_fn)lookup(RTLD_NEXT, "aligned_alloc");
    real_pthread_create = (pthread_create_fn)lookup(RTLD_NEXT, "pthread_create");
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
    const sonde_alloc_sink *s = atomic_load_explicit(&sink, memory_order_acquire);
    if (s && p != MAP_FAILED && (flags & MAP_ANONYMOUS))
        s->map(p, len);
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

/* ---- threads ---- */

/* The tokens of the threads that started this one, nearest first, NULL
 * past the last (alloc_shim.h). */
static _Thread_local const void *starters[SONDE_ALLOC_STARTERS_MAX]
    __attribute__((tls_model("initial-exec")));

/* What a new thread needs before it runs the program's start routine. */
typedef struct thread_start {
    void *(*routine)(void *);
    void *arg;
    const void *starters[SONDE_ALLOC_STARTERS_MAX];
} thread_start;

static void *start_with_starters(void *p)
{
    thread_start start = *(thread_start *)p;
    __libc_free(p);
    memcpy(starters, start.starters, sizeof starters);
    return start.routine(start.arg);
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                          void *(*routine)(void *), void *arg)
{
    if (!real_pthread_create)
        resolve();
    const sonde_alloc_sink *s = atomic_load_explicit(&sink, memory_order_acquire);
    const void *token = s ? s->thread_token() : NULL;
    thread_start *start = token || starters[0] ? __libc_malloc(sizeof *start) : NULL;
    if (!start)
        return real_pthread_create(thread, attr, routine, arg);
    *start = (thread_start){ .routine = routine, .arg = arg };
    int n = 0;
    if (token)
        start->starters[n++] = token;
    for (int i = 0; n < SONDE_ALLOC_STARTERS_MAX && starters[i]; i++)
        start->starters[n++] = starters[i];
    int rc = real_pthread_create(thread, attr, start_with_starters, start);
    if (rc != 0)
        __libc_free(start);
    return rc;
}

EXPORT int sonde_alloc_shim_starters(const void **out, int max)
{
    int n = 0;
    for (; n < max && n < SONDE_ALLOC_STARTERS_MAX && starters[n]; n++)
        out[n] = starters[n];
    return n;
}

#ifdef SHIM_DLSYM
/* ---- dlsym ---- */

/* The allocator functions the shim stands in for: each name, the shim's
 * function and the C library's (what a lookup in the library's own handle
 * finds).  The C library's column is filled once, before shim_real_dlsym
 * is published (release): read-only from then on. */
static struct {
    const char *name;
    void *shim, *libc;
} wrapped[] = {
    { "malloc", (void *)malloc, NULL },       { "free", (void *)free, NULL },
    { "calloc", (void *)calloc, NULL },       { "realloc", (void *)realloc, NULL },
    { "reallocarray", (void *)reallocarray, NULL },
    { "memalign", (void *)memalign, NULL },   { "valloc", (void *)valloc, NULL },
    { "pvalloc", (void *)pvalloc, NULL },     { "posix_memalign", (void *)posix_memalign, NULL },
    { "aligned_alloc", (void *)aligned_alloc, NULL },
    { "mmap", (void *)mmap, NULL },           { "mmap64", (void *)mmap64, NULL },
    { "munmap", (void *)munmap, NULL },
};
#define NWRAPPED (sizeof wrapped / sizeof wrapped[0])

__attribute__((visibility("hidden"), used)) void shim_resolve_dlsym(void);

static void resolve_dlsym(void)
{
    if (shim_real_dlsym)
        return;
    dlsym_fn real = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real)
        real = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    for (size_t i = 0; real && i < NWRAPPED; i++)
        wrapped[i].libc = real(RTLD_NEXT, wrapped[i].name);
    __atomic_store_n(&shim_real_dlsym, real, __ATOMIC_RELEASE);
}

void shim_resolve_dlsym(void)
{
    resolve_dlsym();
}

/* dlsym for any handle but RTLD_NEXT (see the entry point): glibc's
 * answer, unless it is one of the C library's allocator functions. */
__attribute__((visibility("hidden"), used)) void *shim_dlsym(void *handle, const char *name)
{
    if (!shim_real_dlsym)
        resolve_dlsym();
    if (!shim_real_dlsym)
        return NULL;
    void *p = shim_real_dlsym(handle, name);
    for (size_t i = 0; p && name && i < NWRAPPED; i++)
        if (p == wrapped[i].libc && strcmp(name, wrapped[i].name) == 0)
            return wrapped[i].shim;
    return p;
}

/* The exported dlsym.  RTLD_NEXT means "after the caller's object", which
 * glibc reads from its return address: that lookup is a jump straight to
 * glibc's dlsym, never a call (found first if another library's
 * constructor asks before the shim's ran). */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    .cfi_startproc\n"
        "    cmpq $-1, %rdi\n"                    /* RTLD_NEXT */
        "    jne 2f\n"
        "    movq shim_real_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jne 1f\n"
        "    pushq %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"                     /* the call's stack alignment */
        "    .cfi_adjust_cfa_offset 8\n"
        "    call shim_resolve_dlsym\n"
        "    addq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    movq shim_real_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    je 2f\n"
        "1:  jmpq *%rax\n"
        "2:  jmp shim_dlsym\n"
        "    .cfi_endproc\n"
".size dlsym, .-dlsym\n");
#endif
