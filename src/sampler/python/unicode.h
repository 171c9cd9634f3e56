/* unicode.h - the text of a str object read from another process, as UTF-8.
 *
 * Two steps, the caller doing the remote reads in between:
 *   1. read sonde_py_str_header_size() bytes at the object; sonde_py_str_plan_for() says where
 *      its characters start and how many bytes of them to read (never more than
 *      SONDE_PY_STR_MAX_CHARS code points, whatever the length field claims);
 *   2. read plan.nbytes at object + plan.data_offset; sonde_py_str_decode() transcodes them.
 * Only compact strings (every identifier, file name and qualname) are handled: compact ASCII
 * keeps its characters after PyASCIIObject, other compact strings after PyCompactUnicodeObject,
 * 1, 2 or 4 bytes per code point (Latin-1, UCS-2, UCS-4). */
#ifndef SONDE_SAMPLER_PYTHON_UNICODE_H
#define SONDE_SAMPLER_PYTHON_UNICODE_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* The most code points a plan reads; longer strings are truncated. */
#define SONDE_PY_STR_MAX_CHARS 4096
/* An output buffer this large always holds a decoded plan whole (4 UTF-8 bytes per code
 * point, and the NUL). */
#define SONDE_PY_STR_UTF8_MAX (SONDE_PY_STR_MAX_CHARS * 4 + 1)

typedef struct sonde_py_str_plan {
    uint64_t data_offset; /* where the characters start, from the object's address */
    uint32_t nbytes;      /* bytes to read there: at most SONDE_PY_STR_MAX_CHARS * kind */
    uint32_t kind;        /* bytes per code point: 1, 2 or 4 */
    uint32_t truncated;   /* 1 when the string has more code points than the plan reads */
} sonde_py_str_plan;

/* Bytes of the object's header that sonde_py_str_plan_for() needs. */
size_t sonde_py_str_header_size(const sonde_py_layout *l);

/* Plans the read of a str's characters from `header`, `len` bytes read at the object's
 * address.  0, or -1 when the header is short or is not a compact str of a known kind. */
int sonde_py_str_plan_for(const sonde_py_layout *l, const void *header, size_t len,
                          sonde_py_str_plan *plan);

/* Transcodes nbytes of `kind`-byte code points (nbytes a multiple of kind) into `out` as
 * NUL-terminated UTF-8, stopping at a whole character when `out` (outsize > 0 bytes) is full.
 * Surrogates (lone ones are legal in str) and U+0000 become U+FFFD, so the result is valid
 * UTF-8 and a C string.  0, or -1 for a bad kind, a ragged length or a code point past
 * U+10FFFF (the bytes are not a str's). */
int sonde_py_str_decode(unsigned kind, const void *data, size_t nbytes, char *out,
                        size_t outsize);

#endif
