/* flat.h - what the two flat-tree decoders share (marshal.c for .prof
 * files, json_read.c for sonde's JSON).
 *
 * Each decodes a whole document into one array of values (of its own
 * type) and one array of items: a container's members are the value
 * indexes items[off .. off + len).  Members nest, so a container gathers
 * its members' indexes in a list of its own while they are decoded, then
 * adds them to the items as one run.  Input is untrusted: nesting stops at
 * SONDE_FLAT_MAX_DEPTH, no count passes UINT32_MAX, and the first error's
 * message is the one the caller sees. */
#ifndef SONDE_FLAT_H
#define SONDE_FLAT_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_FLAT_MAX_DEPTH 64

/* A growable list of value indexes (a tree's items, or one container's
 * members while they are decoded); owns its array. */
typedef struct sonde_flat_ids {
    uint32_t *at;
    uint32_t n;
    size_t cap;
} sonde_flat_ids;

/* Appends id.  0, or -1 on out of memory. */
int sonde_flat_ids_push(sonde_flat_ids *l, uint32_t id);
/* Appends the indexes of run to items as one run, its start into *first.
 * 0, or -1 on out of memory (or past UINT32_MAX items). */
int sonde_flat_ids_add_run(sonde_flat_ids *items, const sonde_flat_ids *run, uint32_t *first);
void sonde_flat_ids_free(sonde_flat_ids *l);

/* Writes the message into err (errlen bytes) unless an earlier error
 * wrote one there; returns -1, so a decoder can `return sonde_flat_fail(...)`. */
int sonde_flat_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
