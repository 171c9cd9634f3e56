/* buf.h - a growable byte buffer.
 *
 * Every writer renders into a buf, so the same code serves files, the
 * terminal, the Python API (bytes) and the unit tests.  A buf owns its
 * memory; sonde_buf_free() releases it.  Appends never fail loudly: on an
 * allocation failure the buffer remembers it (oom) and ignores further
 * appends, and the caller checks sonde_buf_ok() once at the end.  A
 * streaming buf (sonde_buf_init_stream) passes what it holds on to a
 * FILE each time a chunk is full, so that output of any size needs one
 * chunk of memory; a failed write stops it like an allocation failure. */
#ifndef SONDE_BUF_H
#define SONDE_BUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sonde_buf {
    char *data;
    size_t len, cap;
    int oom;
    FILE *stream;        /* where full chunks go, or NULL: all stays in data */
    int write_errno;     /* why writing to stream failed, 0 while it has not */
    char why[256];       /* why a writer refused to write (see format.h), or "" */
} sonde_buf;

void sonde_buf_init(sonde_buf *b);
/* A buf that streams to f (which it does not close). */
void sonde_buf_init_stream(sonde_buf *b, FILE *f);
/* A streaming buf's last bytes to its stream, flushed.  0, or -1 with
 * errno when an append or a write failed (ENOMEM for memory). */
int sonde_buf_finish(sonde_buf *b);
void sonde_buf_free(sonde_buf *b);
void sonde_buf_put(sonde_buf *b, const void *p, size_t n);
void sonde_buf_putc(sonde_buf *b, char c);
void sonde_buf_puts(sonde_buf *b, const char *s);
void sonde_buf_printf(sonde_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sonde_buf_vprintf(sonde_buf *b, const char *fmt, va_list ap);
/* Appends a table's header line and a line of '=' as long under it. */
void sonde_buf_underlined(sonde_buf *b, const char *header);
/* The string appenders keep the output well-formed whatever s holds (see
 * utf8.h for bytes that are not UTF-8). */
/* s as XML/HTML text or attribute content: markup characters become
 * entities, control characters other than tab are dropped, bytes that
 * are not UTF-8 become U+FFFD. */
void sonde_buf_xml_str(sonde_buf *b, const char *s);
/* s as terminal text: control characters other than tab and bytes that
 * are not UTF-8 become visible \xNN escapes. */
void sonde_buf_text_str(sonde_buf *b, const char *s);
/* A JSON string literal with quotes; a byte b that is not UTF-8 becomes
 * \udcXX (U+DC00 + b, Python's surrogateescape). */
void sonde_buf_json_str(sonde_buf *b, const char *s);
/* A number as JSON has them ("%.9g"): NaN becomes 0 and infinities the
 * largest finite double, since JSON has neither. */
void sonde_buf_num(sonde_buf *b, double v);
/* 1 when every append succeeded (and reached the stream, for a
 * streaming buf). */
int sonde_buf_ok(const sonde_buf *b);

#endif
