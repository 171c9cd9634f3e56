/* attr.h - reading a Python object's attributes and strings from outside.
 *
 * For thread names (a threading.Thread's _name) and asyncio's module dict and futures (up to
 * 3.13), found through the instance's attribute storage of that version (layout.h, enum
 * sonde_py_attrs): a dict, or values laid out against the type's shared keys.  The caller
 * supplies the reads (another process's memory); every count read is bounded, and any failure
 * is -1, never a guess. */
#ifndef SONDE_SAMPLER_PYTHON_ATTR_H
#define SONDE_SAMPLER_PYTHON_ATTR_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* Reads len bytes at addr into buf: 0, or negative. */
typedef int (*sonde_py_reader)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The text of the str object at addr, as UTF-8, into out.  0, or -1. */
int sonde_py_read_str(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t addr,
                      char *out, size_t outsize);

/* The value of key `name` (a str) in the dict object at dict.  0, or -1 when absent or
 * unreadable. */
int sonde_py_dict_get(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t dict,
                      const char *name, uint64_t *value);

/* The keys and values of the dict object at dict (at most max, and at most a small dict's
 * count) into keys and values: how many were read. */
uint32_t sonde_py_dict_items(const sonde_py_layout *l, sonde_py_reader read, void *ctx,
                            uint64_t dict, uint64_t *keys, uint64_t *values, uint32_t max);

/* The value (an object's address) of attribute `name` stored on the
 * instance obj (not on its type).  0, or -1 when absent or unreadable. */
int sonde_py_attr(const sonde_py_layout *l, sonde_py_reader read, void *ctx, uint64_t obj,
                  const char *name, uint64_t *value);

#endif
