/* buf.c - growable byte buffer; see buf.h. */
#include "buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sonde_buf_init(sonde_buf *b) { memset(b, 0, sizeof *b); }

void sonde_buf_free(sonde_buf *b)
{
    free(b->data);
    sonde_buf_init(b);
}

static int reserve(sonde_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
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

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
        n = 2;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3;
    else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
        n = 4;
    else
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
    if ((n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f))) ||
        (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))))
        return 0;
    return n;
}

void sonde_buf_underlined(sonde_buf *b, const char *header)
{
    sonde_buf_printf(b, "%s\n", header);
    for (const char *c = header; *c; c++)
        sonde_buf_putc(b, '=');
    sonde_buf_putc(b, '\n');
}

void sonde_buf_xml_str(sonde_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': sonde_buf_puts(b, "&amp;"); break;
        case '<': sonde_buf_puts(b, "&lt;"); break;
        case '>': sonde_buf_puts(b, "&gt;"); break;
        case '"': sonde_buf_puts(b, "&quot;"); break;
        case '\'': sonde_buf_puts(b, "&#39;"); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                sonde_buf_putc(b, *s);
        }
    }
}

void sonde_buf_json_str(sonde_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    sonde_buf_putc(b, '"');
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            sonde_buf_putc(b, '\\');
            sonde_buf_putc(b, (char)c);
            p++;
        } else if (c < 0x20) {
            sonde_buf_printf(b, "\\u%04x", c);
            p++;
        } else if (c == '<' || c == '>' || c == '&') {
            /* Keeps the JSON safe to embed in an HTML page. */
            sonde_buf_printf(b, "\\u%04x", c);
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                sonde_buf_puts(b, "\\ufffd");
                p++;
            } else {
                sonde_buf_put(b, p, n);
                p += n;
            }
        }
    }
    sonde_buf_putc(b, '"');
}

int sonde_buf_ok(const sonde_buf *b) { return !b->oom; }

int sonde_buf_write_file(const sonde_buf *b, const char *path)
{
    if (b->oom) {
        errno = ENOMEM;
        return -1;
    }
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = b->len ? fwrite(b->data, 1, b->len, f) : 0;
    int err = n != b->len;
    if (to_stdout)
        err |= fflush(f) != 0;
    else
        err |= fclose(f) != 0;
    return err ? -1 : 0;
}
