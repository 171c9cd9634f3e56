/* alloc_shim.h - the interface between libsonde_alloc.so (alloc_shim.c,
 * preloaded into programs `sonde mem` runs) and sonde's extension.
 *
 * The shim stands in for the C allocator.  The extension finds
 * SONDE_ALLOC_ATTACH with dlsym() and hands it a sink: from then on each
 * allocation the C allocator makes is reported to sink->alloc after it
 * succeeded, and each release to sink->release before it happens (so no
 * other thread can have been given the address again); when a realloc
 * whose release was reported fails, the block is still there and
 * sink->restore says so.  An anonymous mapping is reported to sink->map
 * (its pages are the program's only once touched), its munmap to
 * sink->release.  Attaching NULL stops the reports.
 *
 * The shim also wraps pthread_create, so that each thread knows the
 * threads that started it: the new thread gets the starting thread's token
 * (sink->thread_token while a sink is attached; NULL, and so left out, for
 * a thread the sink cannot name) followed by the tokens the starting
 * thread was given, up to SONDE_ALLOC_STARTERS_MAX, and SONDE_ALLOC_STARTERS
 * copies them out there, nearest first.  What a token is belongs to the
 * sink (sonde's extension: a Python thread state). */
#ifndef SONDE_ALLOC_SHIM_H
#define SONDE_ALLOC_SHIM_H

#include <stddef.h>

typedef struct sonde_alloc_sink {
    void (*alloc)(void *p, size_t size);
    void (*release)(void *p);
    void (*restore)(void *p);   /* p's release just reported did not happen */
    void (*map)(void *p, size_t len);
    const void *(*thread_token)(void); /* in the thread calling pthread_create */
} sonde_alloc_sink;

typedef void (*sonde_alloc_attach_fn)(const sonde_alloc_sink *sink);
/* Copies up to max tokens into out, nearest starter first; the count. */
typedef int (*sonde_alloc_starters_fn)(const void **out, int max);

#define SONDE_ALLOC_ATTACH "sonde_alloc_shim_attach"
#define SONDE_ALLOC_STARTERS "sonde_alloc_shim_starters"
#define SONDE_ALLOC_STARTERS_MAX 4

#endif
