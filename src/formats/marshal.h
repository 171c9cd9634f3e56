/* marshal.h - the subset of CPython's marshal format that .prof files use.
 *
 * Writing: dicts, tuples, str, int, float, in format version 4 (readable
 * by every Python 3).  Reading: a bounded decoder into a flat value tree
 * (flat.h, as json_read.h's) that accepts what cProfile, profile and sonde
 * write, including back-references (FLAG_REF / 'r').  Input is untrusted: every count is
 * checked against the bytes left, nesting is capped, and a malformed file
 * yields an error message, never a crash.  Strings in a decoded tree point
 * into the input buffer, which must outlive the tree. */
#ifndef SONDE_MARSHAL_H
#define SONDE_MARSHAL_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"
#include "flat.h"

/* Writing. */
void sonde_marshal_dict_begin(sonde_buf *b);
void sonde_marshal_dict_end(sonde_buf *b);
void sonde_marshal_tuple_begin(sonde_buf *b, uint32_t n);
void sonde_marshal_str(sonde_buf *b, const char *s);
void sonde_marshal_int(sonde_buf *b, int64_t v);
void sonde_marshal_float(sonde_buf *b, double v);

/* Reading. */
enum sonde_mtype {
    SONDE_M_NONE, SONDE_M_BOOL, SONDE_M_INT, SONDE_M_FLOAT, SONDE_M_STR,
    SONDE_M_BYTES, SONDE_M_TUPLE, SONDE_M_LIST, SONDE_M_DICT, SONDE_M_SET,
};

typedef struct sonde_mval {
    uint8_t type;
    uint8_t latin1;     /* STR: one byte a character (marshal's ASCII types),
                           else UTF-8 with Python's escaped bytes (utf8.h) */
    int64_t i;          /* INT, BOOL */
    double f;           /* FLOAT */
    uint32_t off, len;  /* STR/BYTES: bytes in the input; containers: first
                           item index and item count (a dict has 2 items
                           per entry: key, value) */
} sonde_mval;

typedef struct sonde_mtree {
    const uint8_t *data;
    sonde_mval *vals;
    uint32_t nvals;
    size_t vals_cap;
    sonde_flat_ids items;   /* value indexes of container members */
    uint32_t root;
} sonde_mtree;

/* Decodes one object from data[0..len).  0 on success; -1 with a message
 * in err (errlen bytes) otherwise.  Free the tree with sonde_mtree_free. */
int sonde_marshal_read(sonde_mtree *t, const uint8_t *data, size_t len,
                       char *err, size_t errlen);
void sonde_mtree_free(sonde_mtree *t);

static inline const sonde_mval *sonde_mtree_item(const sonde_mtree *t,
                                                 const sonde_mval *v, uint32_t i)
{
    return &t->vals[t->items.at[v->off + i]];
}

/* A STR value as the profile's bytes (utf8.h), NUL-terminated, malloc'd;
 * NULL on out of memory. */
char *sonde_mval_str(const sonde_mtree *t, const sonde_mval *v);

/* A number value as a double (INT, BOOL or FLOAT); 0 when not a number. */
int sonde_mval_number(const sonde_mval *v, double *out);

#endif
