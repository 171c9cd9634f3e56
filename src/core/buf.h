/* buf.h - a growable byte buffer.
 *
 * Every writer renders into a buf, so the same code serves files, the
 * terminal, the Python API (bytes) and the unit tests.  A buf owns its
 * memory; sonde_buf_free() releases it.  Appends never fail loudly: on an
 * allocation failure the buffer remembers it (oom) and ignores further
 * appends, and the caller checks sonde_buf_ok() once at the end. */
#ifndef SONDE_BUF_H
#define SONDE_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sonde_buf {
    char *data;
    size_t len, cap;
    int oom;
} sonde_buf;

void sonde_buf_init(sonde_buf *b);
void sonde_buf_free(sonde_buf *b);
void sonde_buf_put(sonde_buf *b, const void *p, size_t n);
void sonde_buf_putc(sonde_buf *b, char c);
void sonde_buf_puts(sonde_buf *b, const char *s);
void sonde_buf_printf(sonde_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sonde_buf_vprintf(sonde_buf *b, const char *fmt, va_list ap);
/* Appends a table's header line and a line of '=' as long under it. */
void sonde_buf_underlined(sonde_buf *b, const char *header);
/* Appends s as XML/HTML text or attribute content: markup characters
 * become entities, control characters other than tab are dropped. */
void sonde_buf_xml_str(sonde_buf *b, const char *s);
/* JSON string literal with quotes; invalid UTF-8 bytes become U+FFFD. */
void sonde_buf_json_str(sonde_buf *b, const char *s);
/* 1 when every append succeeded. */
int sonde_buf_ok(const sonde_buf *b);
/* Writes the whole buffer to path ("-" = stdout).  0, or -1 with errno. */
int sonde_buf_write_file(const sonde_buf *b, const char *path);

#endif
