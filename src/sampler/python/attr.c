/* attr.c - attributes and strings of objects in another process; see attr.h. */
#include "attr.h"

#include <stdlib.h>
#include <string.h>

#include "unicode.h"

#define MAX_ENTRIES 256   /* keys looked at in one dict: instance dicts are small */

static int read_u64(sonde_py_reader read, void *ctx, uint64_t addr, uint64_t *out)
{
    return read(ctx, addr, out, sizeof *out) < 0 ? -1 : 0;
}

int sonde_py_read_str(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t addr,
                      char *out, size_t outsize)
{
    uint8_t header[512];
    size_t hsize = sonde_py_str_header_size(l);
    sonde_py_str_plan plan;
    if (hsize == 0 || hsize > sizeof header || read(ctx, addr, header, hsize) < 0 ||
        sonde_py_str_plan_for(l, header, hsize, &plan) < 0)
        return -1;
    uint8_t *data = malloc(plan.nbytes ? plan.nbytes : 1);
    int rc = -1;
    if (data && read(ctx, addr + plan.data_offset, data, plan.nbytes) == 0)
        rc = sonde_py_str_decode(plan.kind, data, plan.nbytes, out, outsize);
    free(data);
    return rc < 0 ? -1 : 0;
}

/* Where entry i's key and value pointers are in a keys object, and how
 * many entries it has.  0, or -1. */
typedef struct keys_shape {
    uint64_t entries;      /* address of entry 0 */
    uint64_t entry_size, key_at, value_at;
    uint64_t count;
} keys_shape;

static int shape_of(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t keys,
                    keys_shape *k)
{
    if (l->keys_311) {
        /* dk_log2_size (u8) +8, dk_log2_index_bytes +9, dk_kind +10,
         * dk_nentries +24, dk_indices +32; kind 0 entries are (hash, key,
         * value), others (key, value). */
        uint8_t head[40];
        if (read(ctx, keys, head, sizeof head) < 0 || head[9] > 40)
            return -1;
        int general = head[10] == 0;
        memcpy(&k->count, head + 24, sizeof k->count);
        k->entries = keys + 32 + ((uint64_t)1 << head[9]);
        k->entry_size = general ? 24 : 16;
        k->key_at = general ? 8 : 0;
        k->value_at = general ? 16 : 8;
    } else {
        /* dk_size +8, dk_nentries +32, dk_indices +40 (1, 2, 4 or 8 bytes
         * each by dk_size), then (hash, key, value) entries. */
        uint64_t size;
        if (read_u64(read, ctx, keys + 8, &size) < 0 || read_u64(read, ctx, keys + 32, &k->count) < 0 ||
            size > (1u << 20))
            return -1;
        uint64_t width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
        k->entries = keys + 40 + size * width;
        k->entry_size = 24;
        k->key_at = 8;
        k->value_at = 16;
    }
    return k->count <= MAX_ENTRIES ? 0 : -1;
}

/* Where a split dict's values array (ma_values) keeps value 0: 3.13 put a header before them
 * (_PyDictValues: capacity, size, embedded, valid). */
static uint64_t split_values(const sonde_py_layout *l, uint64_t values)
{
    return values + (l->attrs == SONDE_PY_ATTRS_INLINE_313 ? 8 : 0);
}

/* The index of key `name` in keys (its entry's value pointer too). */
static int64_t find_key(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t keys,
                        const char *name, uint64_t *entry_value)
{
    keys_shape k;
    if (shape_of(l, read, ctx, keys, &k) < 0)
        return -1;
    for (uint64_t i = 0; i < k.count; i++) {
        uint64_t at = k.entries + i * k.entry_size, key;
        char text[64];
        if (read_u64(read, ctx, at + k.key_at, &key) < 0)
            return -1;
        if (key && sonde_py_read_str(l, read, ctx, key, text, sizeof text) == 0 &&
            strcmp(text, name) == 0)
            return read_u64(read, ctx, at + k.value_at, entry_value) < 0 ? -1 : (int64_t)i;
    }
    return -1;
}

int sonde_py_dict_get(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t dict,
                      const char *name, uint64_t *value)
{
    uint64_t keys, values, entry_value;
    if (!dict || read_u64(read, ctx, dict + l->dict_keys, &keys) < 0 ||
        read_u64(read, ctx, dict + l->dict_values, &values) < 0)
        return -1;
    int64_t i = find_key(l, read, ctx, keys, name, &entry_value);
    if (i < 0)
        return -1;
    if (!values) {
        *value = entry_value;
        return 0;
    }
    return read_u64(read, ctx, split_values(l, values) + 8 * (uint64_t)i, value);
}

uint32_t sonde_py_dict_items(const sonde_py_layout *l, sonde_py_reader read, void *ctx,
                            uint64_t dict, uint64_t *keys_out, uint64_t *values_out, uint32_t max)
{
    uint64_t keys, values;
    keys_shape k;
    if (!dict || read_u64(read, ctx, dict + l->dict_keys, &keys) < 0 ||
        read_u64(read, ctx, dict + l->dict_values, &values) < 0 ||
        shape_of(l, read, ctx, keys, &k) < 0)
        return 0;
    uint32_t n = 0;
    for (uint64_t i = 0; i < k.count && n < max; i++) {
        uint64_t at = k.entries + i * k.entry_size, key, value;
        uint64_t value_at = values ? split_values(l, values) + 8 * i : at + k.value_at;
        if (read_u64(read, ctx, at + k.key_at, &key) < 0 ||
            read_u64(read, ctx, value_at, &value) < 0)
            break;
        if (key && value) { /* a deleted entry keeps neither */
            keys_out[n] = key;
            values_out[n++] = value;
        }
    }
    return n;
}

/* name's value in a values array laid out against the type's shared keys. */
static int values_get(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t type,
                      uint64_t values, const char *name, uint64_t *value)
{
    uint64_t keys, unused;
    if (read_u64(read, ctx, type + l->heaptype_cached_keys, &keys) < 0 || !keys)
        return -1;
    int64_t i = find_key(l, read, ctx, keys, name, &unused);
    return i < 0 ? -1 : read_u64(read, ctx, values + 8 * (uint64_t)i, value);
}

#define MANAGED_DICT (1u << 4)  /* Py_TPFLAGS_MANAGED_DICT, 3.11+ */
#define INLINE_VALUES (1u << 2) /* Py_TPFLAGS_INLINE_VALUES, 3.13+ */

int sonde_py_attr(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t obj,
                  const char *name, uint64_t *value)
{
    uint64_t type, slot, flags;
    int64_t basicsize;
    uint8_t header[8];
    if (!obj || read_u64(read, ctx, obj + l->ob_type, &type) < 0 || !type ||
        read_u64(read, ctx, type + l->type_flags, &flags) < 0)
        return -1;
    uint64_t attrs = l->attrs;
    if (attrs != SONDE_PY_ATTRS_DICT && !(flags & MANAGED_DICT))
        attrs = SONDE_PY_ATTRS_DICT; /* a type that keeps a plain __dict__ */
    switch (attrs) {
    case SONDE_PY_ATTRS_DICT: {
        int64_t offset;
        if (read(ctx, type + l->type_dictoffset, &offset, sizeof offset) < 0 || offset <= 0 ||
            offset > 4096 || read_u64(read, ctx, obj + (uint64_t)offset, &slot) < 0)
            return -1;
        return sonde_py_dict_get(l, read, ctx, slot, name, value);
    }
    case SONDE_PY_ATTRS_VALUES_311:
        if (read_u64(read, ctx, obj - 32, &slot) < 0)
            return -1;
        if (slot)
            return values_get(l, read, ctx, type, slot, name, value);
        return read_u64(read, ctx, obj - 24, &slot) < 0
                   ? -1
                   : sonde_py_dict_get(l, read, ctx, slot, name, value);
    case SONDE_PY_ATTRS_TAGGED_312:
        if (read_u64(read, ctx, obj - 24, &slot) < 0)
            return -1;
        /* 3.12's _PyDictOrValues: values pointer - 1 (odd), or a dict */
        return slot & 1 ? values_get(l, read, ctx, type, slot + 1, name, value)
                        : sonde_py_dict_get(l, read, ctx, slot, name, value);
    case SONDE_PY_ATTRS_INLINE_313:
        /* _PyDictValues {capacity, size, embedded, valid; values[] at +8} */
        if (!(flags & INLINE_VALUES))
            return read_u64(read, ctx, obj - 24, &slot) < 0
                       ? -1
                       : sonde_py_dict_get(l, read, ctx, slot, name, value);
        if (read(ctx, type + l->type_basicsize, &basicsize, sizeof basicsize) < 0 ||
            basicsize <= 0 || basicsize > 4096 ||
            read(ctx, obj + (uint64_t)basicsize, header, sizeof header) < 0)
            return -1;
        if (header[3])
            return values_get(l, read, ctx, type, obj + (uint64_t)basicsize + 8, name, value);
        return read_u64(read, ctx, obj - 24, &slot) < 0
                   ? -1
                   : sonde_py_dict_get(l, read, ctx, slot, name, value);
    }
    return -1;
}
