/* objects.h - the ELF objects mapped executable in one process, each opened once.
 *
 * A native address is resolved to the object mapped there (the
 * executable, a shared library, an extension module) and the object's
 * load bias, so that its link-time address (what symbols, CFI and DWARF
 * speak of) is addr - bias.  Objects are opened by the path that leads to
 * the very file mapped (maps.h: /proc/PID/root/<path> inside containers,
 * the path itself for a chroot the host reaches), mapped read-only, and
 * kept until sonde_native_objects_free: a refresh after a dlopen or
 * dlclose re-reads /proc/PID/maps and keeps the objects it still sees
 * (same path, mapped at the same place).  The vdso, which has no file, is
 * copied out of the process's memory.  The symbols and line tables of an
 * object are loaded on first use (symbols.h); its CFI when it is opened.
 * What is read of the file is its sonde_native_file, which the processes
 * of a recording that map the same file share (files.h).
 *
 * An address in no object does not make each unwind read the maps again
 * (a read of 10,000 mappings costs milliseconds): sonde_native_objects_stale
 * says when one is worth it.  An address that was in a mapping at the last
 * read (JIT code, an anonymous or non-ELF executable mapping, the data a
 * frame pointer led to) is looked at again at most once a second; one that
 * was in none (a library loaded since) at once, in a burst of at most
 * SONDE_NATIVE_HOLE_BURST reads and one per SONDE_NATIVE_HOLE_GAP_NS after. */
#ifndef SONDE_NATIVE_OBJECTS_H
#define SONDE_NATIVE_OBJECTS_H

#include <stdint.h>

#include "../../core/u64map.h"
#include "files.h"

#define SONDE_NATIVE_MAX_OBJECTS 4096   /* distinct objects per process */
#define SONDE_NATIVE_RECHECK_NS 1000000000ull   /* an address mapped at the last read */
#define SONDE_NATIVE_HOLE_GAP_NS 50000000ull    /* an address in no mapping then ... */
#define SONDE_NATIVE_HOLE_BURST 16              /* ... after a quiet time */

typedef struct sonde_native_object {
    char *path;             /* as /proc/PID/maps names it (owned) */
    const char *name;       /* its last component */
    uint64_t anchor;        /* where its first byte is mapped: with path, its key */
    uint64_t bias;          /* process address = link-time address + bias */
    sonde_native_file *f;   /* its file, maybe shared with other processes (files.h) */
} sonde_native_object;

typedef struct sonde_native_range {   /* one executable file mapping */
    uint64_t start, end;
    uint64_t offset;                  /* the file offset mapped at start */
    uint32_t object;                  /* objects[] index */
} sonde_native_range;

typedef struct sonde_native_span {   /* mapped memory at the last read */
    uint64_t start, end;
} sonde_native_span;

typedef struct sonde_native_objects {
    int pid;
    sonde_native_range *ranges;       /* sorted by start (owned) */
    uint32_t nranges;
    sonde_native_span *mapped;        /* every mapping, neighbours joined; sorted (owned) */
    uint32_t nmapped;
    sonde_native_object *objects;     /* (owned) */
    uint32_t nobjects, objects_cap;
    sonde_u64map by_anchor;           /* anchor -> the newest objects[] index with it */
    uint64_t refreshes;               /* times the maps were read */
    uint64_t read_ns;                 /* CLOCK_MONOTONIC at the last read */
    uint64_t hole_due_ns;             /* the hole budget's next due time (a GCRA) */
} sonde_native_objects;

/* Reads pid's maps.  0, or a negative errno (from sonde_maps_read). */
int sonde_native_objects_init(sonde_native_objects *o, int pid);
/* Reads the maps again (a library was loaded or unloaded).  0, or a
 * negative errno; the objects already known stay valid either way. */
int sonde_native_objects_refresh(sonde_native_objects *o);
void sonde_native_objects_free(sonde_native_objects *o);

/* Whether the maps are worth reading again for addr, which is in no
 * usable object, at now_ns (core/clock.h's sonde_clock_ns); see the top.  1 spends the
 * hole budget: the caller then refreshes. */
int sonde_native_objects_stale(sonde_native_objects *o, uint64_t addr, uint64_t now_ns);

/* The object mapped executable at addr, or NULL (anonymous or JIT memory,
 * or a file that could not be opened). */
sonde_native_object *sonde_native_objects_find(const sonde_native_objects *o, uint64_t addr);

/* After a guarded read faulted at fault (guard.h): the object whose file
 * mapping holds that address, or else blamed (NULL: none), is given up
 * (unusable: its frames are no longer unwound or named). */
void sonde_native_objects_shrunk(sonde_native_objects *o, const void *fault,
                                 sonde_native_object *blamed);

/* The executable file mapping holding addr, or NULL. */
const sonde_native_range *sonde_native_objects_range(const sonde_native_objects *o,
                                                     uint64_t addr);

#endif
