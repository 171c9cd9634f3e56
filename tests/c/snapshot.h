/* snapshot.h - the memory of a process as the sampler read it: recorded, replayed, mutated.
 *
 * Recording: attached to a sonde_proc (its source), a snapshot reads the
 * live process and keeps a copy of every range read.  Sealed, the copies
 * become disjoint ranges sorted by address (where reads overlap, the
 * later one wins).  Replaying: attached again, it serves reads from those
 * ranges alone; a read that leaves them fails with -EFAULT, as a hole in
 * a process's memory would.  Mutations change bytes and shorten ranges
 * with an undo log, so a fuzzer can try thousands of variants of one
 * snapshot without copying it. */
#ifndef SONDE_TEST_SNAPSHOT_H
#define SONDE_TEST_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "sampler/proc/mem.h"

typedef struct snapshot_range {
    uint64_t addr;
    size_t len;          /* bytes served now (a mutation may shorten it) */
    size_t full;         /* bytes held */
    uint8_t *data;
} snapshot_range;

typedef struct snapshot_undo {
    uint8_t *bytes;      /* where bytes were changed, or NULL */
    uint8_t old[16];
    size_t n;
    size_t *len;         /* a range length that was changed, or NULL */
    size_t old_len;
} snapshot_undo;

#define SNAPSHOT_UNDO_MAX 64

typedef struct snapshot {
    sonde_proc live;     /* recording: the process read */
    snapshot_range *ranges;
    uint32_t nranges, cap;
    int sealed;
    uint64_t reads;      /* reads served (replay) or made (record) */
    uint64_t bytes;      /* bytes held once sealed */
    snapshot_undo undo[SNAPSHOT_UNDO_MAX];
    uint32_t nundo;
} snapshot;

/* An empty snapshot that records pid's memory. */
void snapshot_init(snapshot *s, int pid);
/* Makes p read through s: recording before snapshot_seal, replaying after. */
void snapshot_attach(snapshot *s, sonde_proc *p);
/* Reads len bytes at addr through s as its source would (recording too). */
int snapshot_read(void *ctx, uint64_t addr, void *buf, size_t len);
/* Turns what was recorded into disjoint sorted ranges.  0, or -1 (memory). */
int snapshot_seal(snapshot *s);
void snapshot_free(snapshot *s);

/* Mutations, undone together by snapshot_undo_all.  `rnd` gives random
 * numbers; each call changes one thing: a bit, a byte, a 4- or 8-byte
 * field (to a boundary value or to a pointer into some range, so that
 * chains loop and overlap), a splice of bytes from elsewhere, or a range
 * cut short. */
void snapshot_mutate(snapshot *s, uint64_t (*rnd)(void));
void snapshot_undo_all(snapshot *s);

#endif
