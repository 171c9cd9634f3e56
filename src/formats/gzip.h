/* gzip.h - gzip through zlib: a stream that deflates into a buf, and a
 * bounded inflate of a whole file.
 *
 * zlib is loaded at run time (libz.so.1), so that sonde builds without
 * its headers.  Where it cannot be loaded, the writer writes gzip all the
 * same, uncompressed (stored blocks), and the reader says what to install.
 *
 * The writer holds one chunk of output at a time, so a large profile
 * streams to its file (buf.h) compressed as it is encoded.  The reader is
 * untrusted input: the output is capped (a small file may claim a huge
 * one), and a corrupt or truncated stream yields a message. */
#ifndef SONDE_GZIP_H
#define SONDE_GZIP_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"

typedef struct sonde_gz sonde_gz;

/* A gzip stream into out (which it does not own); NULL on out of memory. */
sonde_gz *sonde_gz_new(sonde_buf *out);
/* The same, not compressed: what sonde_gz_new gives without zlib. */
sonde_gz *sonde_gz_new_stored(sonde_buf *out);
/* Compresses n bytes into the stream.  0, or -1 once anything failed
 * (out of memory, or out's own failure: out->oom is then set). */
int sonde_gz_write(sonde_gz *g, const void *p, size_t n);
/* Ends the stream (its trailer into out) and frees g.  0, or -1 when
 * something failed along the way. */
int sonde_gz_finish(sonde_gz *g);

/* 1 when data starts with gzip's magic bytes. */
int sonde_gz_is(const uint8_t *data, size_t len);

/* The bytes of the gzip stream data[0..len) into *out (malloc'd, caller
 * frees), refused past max bytes.  0, or -1 with a message in err. */
int sonde_gz_inflate(const uint8_t *data, size_t len, size_t max, uint8_t **out,
                     size_t *outlen, char *err, size_t errlen);

#endif
