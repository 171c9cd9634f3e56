/* json_read.h - a bounded JSON reader for sonde's own files.
 *
 * Decodes a whole document into a flat tree (flat.h, as marshal.h's):
 * objects and arrays list their members' value indexes, strings are decoded to
 * UTF-8 into one pool (\udc80..\udcff, Python's escapes for bytes that
 * are not UTF-8, into the bytes: see utf8.h).  Input is untrusted: nesting
 * is capped, counts are bounded by the input's size, numbers must be
 * finite, and malformed text yields a message. */
#ifndef SONDE_JSON_READ_H
#define SONDE_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "flat.h"

enum sonde_jtype { SONDE_J_NULL, SONDE_J_BOOL, SONDE_J_NUM, SONDE_J_STR, SONDE_J_ARR, SONDE_J_OBJ };

typedef struct sonde_jval {
    uint8_t type;
    double num;          /* NUM, BOOL (0 or 1) */
    uint32_t off, len;   /* STR: bytes in pool; ARR: first item, count; OBJ: first
                            item, entry count (2 items an entry: key string, value) */
} sonde_jval;

typedef struct sonde_jtree {
    sonde_jval *vals;
    uint32_t nvals;
    size_t vals_cap;
    sonde_flat_ids items; /* value indexes of container members */
    char *pool;          /* every string, NUL-terminated */
    size_t pool_len, pool_cap;
    uint32_t root;
} sonde_jtree;

/* Decodes text[0..len).  0, or -1 with a message; free with sonde_jtree_free. */
int sonde_json_read(sonde_jtree *t, const char *text, size_t len, char *err, size_t errlen);
void sonde_jtree_free(sonde_jtree *t);

/* The member `key` of an object, or NULL. */
const sonde_jval *sonde_json_get(const sonde_jtree *t, const sonde_jval *obj, const char *key);
/* Item i of an array. */
const sonde_jval *sonde_json_item(const sonde_jtree *t, const sonde_jval *arr, uint32_t i);
/* A string value's text, or "" for anything else. */
const char *sonde_json_str(const sonde_jtree *t, const sonde_jval *v);
/* A number member of obj, or fallback. */
double sonde_json_num(const sonde_jtree *t, const sonde_jval *obj, const char *key, double fallback);

/* A number of an untrusted file as an integer in [lo, hi], truncated
 * toward zero; values outside the range become the nearest end, NaN
 * becomes lo (a C cast of an out-of-range double is undefined). */
int64_t sonde_num_to_int(double v, int64_t lo, int64_t hi);
/* The same for counts: [0, UINT64_MAX]. */
uint64_t sonde_num_to_count(double v);

#endif
