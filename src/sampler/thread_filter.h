/* thread_filter.h - which threads a sampling command reads (--thread NAME|TID).
 *
 * A filter holds the names and kernel thread ids the user gave.  A thread
 * matches when its id is one of the ids, or one of the names is its
 * kernel name (/proc/PID/task/TID/comm) or its Python name (threading's
 * name, read from its stack by the walker).  Each thread is decided once
 * and the answer kept, by its thread state (Python threads) or its id
 * (threads without Python, --native): the walker reads only the frames
 * of threads that match, and the native sampler stops only them.  A
 * thread whose Python name is needed is read once, to learn it.  The
 * filter owns its table; the names stay the caller's. */
#ifndef SONDE_SAMPLER_THREAD_FILTER_H
#define SONDE_SAMPLER_THREAD_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "../core/u64map.h"

#define SONDE_THREAD_FILTER_MAX 64   /* --thread options kept */

typedef struct sonde_thread_filter {
    const char *names[SONDE_THREAD_FILTER_MAX];   /* as given; borrowed */
    uint32_t n;
    int python_names;        /* some entry is not a thread id: Python names count */
    sonde_u64map decided;    /* thread key -> 1 kept, 2 left out */
    uint64_t kept;           /* threads that matched, in all */
    uint64_t seen;           /* threads decided, in all */
} sonde_thread_filter;

/* An empty filter (it keeps every thread until a name is added). */
void sonde_thread_filter_init(sonde_thread_filter *f);
void sonde_thread_filter_free(sonde_thread_filter *f);

/* Adds a name or an id.  0, or -1 when SONDE_THREAD_FILTER_MAX are held
 * already or the name is empty. */
int sonde_thread_filter_add(sonde_thread_filter *f, const char *name);

/* The key a thread is decided under: its thread state, pthread id and
 * kernel id (all known before its frames are read: give tid 0 where the
 * interpreter keeps no kernel id, up to 3.10), or for a thread without
 * Python state its kernel id.  A new thread that reuses an ended one's
 * thread state and pthread (glibc and CPython reuse both) has another
 * kernel id, so it is decided anew. */
uint64_t sonde_thread_filter_key(uint64_t tstate, uint64_t thread_id, uint64_t tid);

/* What was decided for the thread with this key: 1 kept, 0 left out, -1
 * not decided yet. */
int sonde_thread_filter_known(const sonde_thread_filter *f, uint64_t key);

/* Decides the thread of process pid with this key from its kernel id
 * tid (0 when unknown) and its Python name (NULL when it has none, or it
 * is not known yet: then a thread that matches neither id nor kernel
 * name is left undecided while Python names count, -1, unless final: it
 * has no Python name to wait for).  1 kept, 0 left out, -1 undecided;
 * an answer is kept (out of memory: it is decided again next time). */
int sonde_thread_filter_decide(sonde_thread_filter *f, int pid, uint64_t key, uint64_t tid,
                               const char *python_name, int final);

/* The entries as given, comma-separated, into out. */
void sonde_thread_filter_describe(const sonde_thread_filter *f, char *out, size_t outlen);

#endif
