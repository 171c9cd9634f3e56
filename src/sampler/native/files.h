/* files.h - the ELF files behind native objects, opened once per recording.
 *
 * A file is what sonde reads of an object: its mapped image, its CFI
 * index and, on first use, its symbols and line tables (symbols.h).  All
 * the processes of one recording that map the same file (the same device,
 * inode, size and modification time) share one: a pool's new worker finds
 * libpython and libc already open, their symbols already loaded.  A file
 * no process holds any more stays open for the next (the pool's next
 * worker), at most SONDE_NATIVE_FILES_IDLE of them, the least recently
 * released closed first.  The vdso, and a file that cannot be stat'ed,
 * are each their own, closed with their object.  Single-threaded, as the
 * sampler is. */
#ifndef SONDE_NATIVE_FILES_H
#define SONDE_NATIVE_FILES_H

#include <stdint.h>

#include "../proc/elf.h"
#include "cfi.h"

#define SONDE_NATIVE_FILES_IDLE 64   /* files kept open that no process maps */

typedef struct sonde_native_symbols sonde_native_symbols;   /* symbols.h */

typedef struct sonde_native_file {
    char *file;             /* where sonde opened it (owned; "" for the vdso) */
    int usable;             /* 1 when it was opened and is ELF, and has not
                               shrunk under sonde since (guard.h) */
    int shrunk;             /* 1 when a read of it faulted: the file changed on disk */
    sonde_elf elf;
    sonde_cfi cfi;
    uint64_t link;          /* its link-time load address (usable files) */
    sonde_native_symbols *symbols;   /* NULL until first asked (owned) */
    /* the registry's: */
    int shared;             /* found by its key; else its one object's own */
    uint64_t dev, ino, size, mtime_ns;
    uint32_t refs;          /* objects holding it */
    uint64_t released;      /* when refs last fell to 0 (a counter) */
} sonde_native_file;

typedef struct sonde_native_files_counts {
    uint64_t opened;        /* files opened from disk (image mapped, CFI indexed) */
    uint64_t shared;        /* objects given a file another process had opened */
    uint64_t symbols;       /* symbol tables loaded (symbols.c counts them) */
} sonde_native_files_counts;

extern sonde_native_files_counts sonde_native_files_count;

/* The file at path file (NULL or "": none could be named), opened or
 * shared; the vdso is copied out of process pid at [start, end).  NULL
 * only when out of memory; a file that could not be read comes back
 * unusable. */
sonde_native_file *sonde_native_files_get(const char *file, int vdso, int pid, uint64_t start,
                                          uint64_t end);
/* One object fewer holds f (NULL is fine). */
void sonde_native_files_put(sonde_native_file *f);

#endif
