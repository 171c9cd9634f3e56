/* buf.c - growable byte buffer; see buf.h. */
#include "buf.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "utf8.h"

/* A streaming buf writes when this much has gathered. */
#define CHUNK (64 * 1024)

void sonde_buf_init(sonde_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
    b->stream = NULL;
    b->write_errno = 0;
    b->why[0] = '\0';
}

void sonde_buf_init_stream(sonde_buf *b, FILE *f)
{
    sonde_buf_init(b);
    b->stream = f;
}

void sonde_buf_free(sonde_buf *b)
{
    free(b->data);
    sonde_buf_init(b);
}

/* A streaming buf's bytes to its stream.  0, or -1 (the buf then stops). */
static int drain(sonde_buf *b)
{
    if (b->len && fwrite(b->data, 1, b->len, b->stream) != b->len) {
        b->write_errno = errno ? errno : EIO;
        b->oom = 1;
        return -1;
    }
    b->len = 0;
    return 0;
}

static int reserve(sonde_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->stream && b->len + extra + 1 > CHUNK && drain(b) < 0)
        return -1;
    char *p = extra < SIZE_MAX - b->len ? sonde_grow(b->data, &b->cap, b->len + extra + 1, 1,
                                                     SIZE_MAX)
                                        : NULL;
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    return 0;
}

void sonde_buf_put(sonde_buf *b, const void *p, size_t n)
{
    if (n == 0 || reserve(b, n) < 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sonde_buf_putc(sonde_buf *b, char c) { sonde_buf_put(b, &c, 1); }

void sonde_buf_puts(sonde_buf *b, const char *s) { sonde_buf_put(b, s, strlen(s)); }

void sonde_buf_vprintf(sonde_buf *b, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n <= 0 || reserve(b, (size_t)n) < 0)
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sonde_buf_printf(sonde_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sonde_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void sonde_buf_underlined(sonde_buf *b, const char *header)
{
    sonde_buf_printf(b, "%s\n", header);
    for (const char *c = header; *c; c++)
        sonde_buf_putc(b, '=');
    sonde_buf_putc(b, '\n');
}

/* U+FFFD, what markup shows for a byte that is not UTF-8. */
static const char replacement[] = "\xef\xbf\xbd";

void sonde_buf_xml_str(sonde_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = sonde_utf8_len(p);
        switch (*p) {
        case '&': sonde_buf_puts(b, "&amp;"); break;
        case '<': sonde_buf_puts(b, "&lt;"); break;
        case '>': sonde_buf_puts(b, "&gt;"); break;
        case '"': sonde_buf_puts(b, "&quot;"); break;
        case '\'': sonde_buf_puts(b, "&#39;"); break;
        default:
            /* XML 1.0 allows neither C0 controls but tab nor U+FFFE, U+FFFF */
            if (n == 0 || (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe))
                sonde_buf_puts(b, replacement);
            else if (*p >= 0x20 || *p == '\t')
                sonde_buf_put(b, p, n);
        }
        p += n ? n : 1;
    }
}

void sonde_buf_text_str(sonde_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = sonde_utf8_len(p);
        if (n == 0 || (*p < 0x20 && *p != '\t') || *p == 0x7f) {
            sonde_buf_printf(b, "\\x%02x", *p);
            p++;
        } else {
            sonde_buf_put(b, p, n);
            p += n;
        }
    }
}

void sonde_buf_json_str(sonde_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    sonde_buf_putc(b, '"');
    while (*p) {
        unsigned char c = *p;
        size_t n = sonde_utf8_len(p);
        if (c == '"' || c == '\\') {
            sonde_buf_putc(b, '\\');
            sonde_buf_putc(b, (char)c);
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            /* '<', '>', '&' escaped keep the JSON safe to embed in a page */
            sonde_buf_printf(b, "\\u%04x", c);
        } else if (n == 0) {
            sonde_buf_printf(b, "\\udc%02x", c); /* Python's surrogateescape */
        } else {
            sonde_buf_put(b, p, n);
        }
        p += n ? n : 1;
    }
    sonde_buf_putc(b, '"');
}

void sonde_buf_num(sonde_buf *b, double v)
{
    if (isnan(v))
        v = 0;
    else if (isinf(v))
        v = v > 0 ? DBL_MAX : -DBL_MAX;
    sonde_buf_printf(b, "%.9g", v);
}

int sonde_buf_ok(const sonde_buf *b) { return !b->oom; }

int sonde_buf_finish(sonde_buf *b)
{
    if (!b->oom && b->stream && drain(b) == 0 && fflush(b->stream) != 0) {
        b->write_errno = errno ? errno : EIO;
        b->oom = 1;
    }
    if (!b->oom)
        return 0;
    errno = b->write_errno ? b->write_errno : ENOMEM;
    return -1;
}
