/* protobuf.c - protocol buffers' wire format; see protobuf.h.
 *
 * A varint is 7 bits a byte, least significant first, the top bit set on
 * every byte but the last; a field starts with its tag, (number << 3) |
 * wire type, as a varint (protobuf.dev/programming-guides/encoding). */
#include "protobuf.h"

#include <string.h>

#define MAX_FIELD ((1u << 29) - 1)

void sonde_pb_varint(sonde_buf *b, uint64_t v)
{
    unsigned char c[10];
    size_t n = 0;
    while (v >= 0x80) {
        c[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    c[n++] = (unsigned char)v;
    sonde_buf_put(b, c, n);
}

static void tag(sonde_buf *b, uint32_t field, enum sonde_pb_wire wire)
{
    sonde_pb_varint(b, (uint64_t)field << 3 | wire);
}

void sonde_pb_uint(sonde_buf *b, uint32_t field, uint64_t v)
{
    if (v == 0)
        return;
    tag(b, field, SONDE_PB_VARINT);
    sonde_pb_varint(b, v);
}

void sonde_pb_int(sonde_buf *b, uint32_t field, int64_t v)
{
    sonde_pb_uint(b, field, (uint64_t)v);
}

void sonde_pb_bytes(sonde_buf *b, uint32_t field, const void *p, size_t n)
{
    tag(b, field, SONDE_PB_LEN);
    sonde_pb_varint(b, n);
    sonde_buf_put(b, p, n);
}

void sonde_pb_message(sonde_buf *b, uint32_t field, sonde_buf *msg)
{
    if (!sonde_buf_ok(msg))
        b->oom = 1;
    sonde_pb_bytes(b, field, msg->data, msg->len);
    msg->len = 0;
}

void sonde_pb_packed(sonde_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i];
        do {
            len++;
            x >>= 7;
        } while (x);
    }
    tag(b, field, SONDE_PB_LEN);
    sonde_pb_varint(b, len);
    for (size_t i = 0; i < n; i++)
        sonde_pb_varint(b, v[i]);
}

/* ---- reading ---- */

/* One varint at r.  0, or -1 when truncated or longer than 10 bytes. */
static int read_varint(sonde_pb_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (r->p == r->end)
            return -1;
        uint8_t c = *r->p++;
        x |= (uint64_t)(c & 0x7f) << shift; /* bits past 64 are dropped, as protobuf does */
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

static int fixed(sonde_pb_reader *r, size_t n, uint64_t *v)
{
    if ((size_t)(r->end - r->p) < n)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    *v = x;
    return 0;
}

int sonde_pb_next(sonde_pb_reader *r, sonde_pb_field *f, const char **why)
{
    if (r->p == r->end)
        return 0;
    uint64_t key;
    if (read_varint(r, &key) < 0) {
        *why = "a truncated field tag";
        return -1;
    }
    if ((key >> 3) == 0 || (key >> 3) > MAX_FIELD) {
        *why = "a field number out of range";
        return -1;
    }
    memset(f, 0, sizeof *f);
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint8_t)(key & 7);
    switch (f->wire) {
    case SONDE_PB_VARINT:
        if (read_varint(r, &f->value) < 0) {
            *why = "a truncated or overlong varint";
            return -1;
        }
        return 1;
    case SONDE_PB_I64:
    case SONDE_PB_I32:
        if (fixed(r, f->wire == SONDE_PB_I64 ? 8 : 4, &f->value) < 0) {
            *why = "a truncated fixed-width field";
            return -1;
        }
        return 1;
    case SONDE_PB_LEN: {
        uint64_t n;
        if (read_varint(r, &n) < 0 || n > (uint64_t)(r->end - r->p)) {
            *why = "a length past the end of its message";
            return -1;
        }
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 1;
    }
    default:
        *why = "a group or an unknown wire type";
        return -1;
    }
}

size_t sonde_pb_count(const sonde_pb_field *f)
{
    if (f->wire == SONDE_PB_VARINT)
        return 1;
    if (f->wire != SONDE_PB_LEN)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < f->len; i++)
        n += !(f->data[i] & 0x80);
    return n;
}

int sonde_pb_unpack(const sonde_pb_field *f, uint64_t *out, size_t n)
{
    if (f->wire == SONDE_PB_VARINT) {
        if (n != 1)
            return -1;
        out[0] = f->value;
        return 0;
    }
    if (f->wire != SONDE_PB_LEN)
        return -1;
    sonde_pb_reader r;
    sonde_pb_reader_init(&r, f->data, f->len);
    for (size_t i = 0; i < n; i++)
        if (read_varint(&r, &out[i]) < 0)
            return -1;
    return r.p == r.end ? 0 : -1;
}
