/* protobuf.h - protocol buffers' wire format: an encoder into bufs and a
 * bounded field reader.
 *
 * Only what pprof's profile.proto needs: varints (uint64, int64, bool),
 * length-delimited fields (strings, bytes, nested messages, packed
 * repeated varints).  Writing follows proto3: a scalar field equal to 0
 * is left out, and a nested message is encoded into a buf of its own
 * first, then written with its length.  Reading is untrusted: every
 * length is checked against the bytes left, a varint longer than 10
 * bytes is refused, groups (wire types 3, 4) and fixed-width fields are
 * skipped or refused without recursion; the caller's schema bounds the
 * nesting. */
#ifndef SONDE_PROTOBUF_H
#define SONDE_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"

enum sonde_pb_wire { SONDE_PB_VARINT = 0, SONDE_PB_I64 = 1, SONDE_PB_LEN = 2, SONDE_PB_I32 = 5 };

/* Writing. */
void sonde_pb_varint(sonde_buf *b, uint64_t v);
/* field = v as a varint; nothing when v is 0.  An int64 goes as its two's
 * complement (10 bytes when negative), as protobuf's int64 does. */
void sonde_pb_uint(sonde_buf *b, uint32_t field, uint64_t v);
void sonde_pb_int(sonde_buf *b, uint32_t field, int64_t v);
/* field = n bytes, written even when empty (a string table's ""). */
void sonde_pb_bytes(sonde_buf *b, uint32_t field, const void *p, size_t n);
/* field = a nested message already encoded in msg (written even when
 * empty); msg is emptied for the next one.  An out-of-memory msg makes b
 * out of memory too. */
void sonde_pb_message(sonde_buf *b, uint32_t field, sonde_buf *msg);
/* field = n varints, packed; nothing when n is 0. */
void sonde_pb_packed(sonde_buf *b, uint32_t field, const uint64_t *v, size_t n);

/* Reading. */
typedef struct sonde_pb_reader {
    const uint8_t *p, *end;
} sonde_pb_reader;

typedef struct sonde_pb_field {
    uint32_t number;
    uint8_t wire;          /* enum sonde_pb_wire */
    uint64_t value;        /* VARINT, I64, I32 */
    const uint8_t *data;   /* LEN: the bytes, inside the reader's input */
    size_t len;
} sonde_pb_field;

static inline void sonde_pb_reader_init(sonde_pb_reader *r, const uint8_t *data, size_t len)
{
    r->p = data;
    r->end = data + len;
}

/* The next field into *f: 1, or 0 at the end of the input, or -1 when it
 * is malformed (*why then says how; a static string). */
int sonde_pb_next(sonde_pb_reader *r, sonde_pb_field *f, const char **why);


/* A repeated varint field may come packed (one LEN field) or one VARINT
 * field an item: the number of items f holds (0 when a packed run is
 * malformed: check with sonde_pb_unpack), and the items themselves into
 * out[0..n).  sonde_pb_unpack returns 0, or -1 when malformed. */
size_t sonde_pb_count(const sonde_pb_field *f);
int sonde_pb_unpack(const sonde_pb_field *f, uint64_t *out, size_t n);

#endif
