/* unicode.c - plans the reads of a remote str and transcodes it to UTF-8; see unicode.h. */
#include "unicode.h"

#include <string.h>

#include "../../core/utf8.h"

/* Header fields lie near the start of the object; offsets beyond this come from a bad layout. */
#define MAX_HEADER_OFFSET 4096

size_t sonde_py_str_header_size(const sonde_py_layout *l)
{
    uint64_t state_end = l->str_state + sizeof(uint32_t);
    uint64_t length_end = l->str_length + sizeof(int64_t);
    return (size_t)(state_end > length_end ? state_end : length_end);
}

int sonde_py_str_plan_for(const sonde_py_layout *l, const void *header, size_t len,
                          sonde_py_str_plan *plan)
{
    if (l->str_state > MAX_HEADER_OFFSET || l->str_length > MAX_HEADER_OFFSET ||
        l->str_kind_shift > 29 || l->str_compact_bit > 31 || l->str_ascii_bit > 31 ||
        len < sonde_py_str_header_size(l))
        return -1;
    const unsigned char *h = header;
    uint32_t state;
    int64_t length;
    memcpy(&state, h + l->str_state, sizeof state);
    memcpy(&length, h + l->str_length, sizeof length);

    uint32_t kind = state >> l->str_kind_shift & 7;
    int compact = state >> l->str_compact_bit & 1, ascii = state >> l->str_ascii_bit & 1;
    if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
        return -1;
    uint32_t chars = length > SONDE_PY_STR_MAX_CHARS ? SONDE_PY_STR_MAX_CHARS : (uint32_t)length;
    plan->data_offset = ascii ? l->str_ascii_size : l->str_compact_size;
    plan->nbytes = chars * kind;
    plan->kind = kind;
    plan->truncated = length > SONDE_PY_STR_MAX_CHARS;
    return 0;
}

/* Writes c as UTF-8 at out[*at], if it and a NUL fit in outsize; 0, or -1 when full. */
static int put_utf8(uint32_t c, char *out, size_t outsize, size_t *at)
{
    unsigned char u[4];
    size_t n = sonde_utf8_encode(c, u);
    if (outsize - *at <= n)
        return -1;
    memcpy(out + *at, u, n);
    *at += n;
    return 0;
}

int sonde_py_str_decode(unsigned kind, const void *data, size_t nbytes, char *out,
                        size_t outsize)
{
    if ((kind != 1 && kind != 2 && kind != 4) || nbytes % kind != 0 || outsize == 0 ||
        (!data && nbytes > 0))
        return -1;
    const unsigned char *d = data;
    size_t at = 0;
    for (size_t i = 0; i < nbytes; i += kind) {
        uint32_t c;
        if (kind == 1) {
            c = d[i];
        } else if (kind == 2) {
            uint16_t c16;
            memcpy(&c16, d + i, sizeof c16);
            c = c16;
        } else {
            memcpy(&c, d + i, sizeof c);
        }
        if (c > 0x10ffff) {
            out[0] = '\0';
            return -1;
        }
        if (c == 0 || (c >= 0xd800 && c < 0xe000))
            c = 0xfffd;
        if (put_utf8(c, out, outsize, &at) < 0)
            break;
    }
    out[at] = '\0';
    return 0;
}
