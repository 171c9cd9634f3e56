/* gzip.c - gzip through zlib; see gzip.h. */
#include "gzip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK (16 * 1024)
#define GZIP_WINDOW (15 + 16) /* zlib's window bits for a gzip wrapper */

struct sonde_gz {
    z_stream z;
    sonde_buf *out;
    int failed;
    unsigned char chunk[CHUNK];
};

sonde_gz *sonde_gz_new(sonde_buf *out)
{
    sonde_gz *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        return NULL;
    }
    g->out = out;
    return g;
}

/* Runs deflate over what z holds, with flush, passing each chunk to out. */
static int pump(sonde_gz *g, int flush)
{
    int rc;
    do {
        g->z.next_out = g->chunk;
        g->z.avail_out = CHUNK;
        rc = deflate(&g->z, flush);
        if (rc == Z_STREAM_ERROR) {
            g->failed = 1;
            return -1;
        }
        sonde_buf_put(g->out, g->chunk, CHUNK - g->z.avail_out);
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    if (!sonde_buf_ok(g->out))
        g->failed = 1;
    return g->failed ? -1 : 0;
}

int sonde_gz_write(sonde_gz *g, const void *p, size_t n)
{
    const unsigned char *in = p;
    while (!g->failed && n > 0) {
        uInt step = n > (1u << 30) ? 1u << 30 : (uInt)n;
        g->z.next_in = (unsigned char *)in;
        g->z.avail_in = step;
        if (pump(g, Z_NO_FLUSH) < 0)
            break;
        in += step;
        n -= step;
    }
    return g->failed ? -1 : 0;
}

int sonde_gz_finish(sonde_gz *g)
{
    if (!g->failed) {
        g->z.next_in = NULL;
        g->z.avail_in = 0;
        pump(g, Z_FINISH);
    }
    int rc = g->failed ? -1 : 0;
    deflateEnd(&g->z);
    free(g);
    return rc;
}

int sonde_gz_is(const uint8_t *data, size_t len)
{
    return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* Makes room for more output: doubles *cap up to max.  0, or -1. */
static int grow(uint8_t **out, size_t *cap, size_t max)
{
    if (*cap >= max)
        return -1;
    size_t want = *cap > max / 2 ? max : *cap * 2;
    uint8_t *p = realloc(*out, want);
    if (!p)
        return -1;
    *out = p;
    *cap = want;
    return 0;
}

int sonde_gz_inflate(const uint8_t *data, size_t len, size_t max, uint8_t **out,
                     size_t *outlen, char *err, size_t errlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    size_t cap = len < max / 4 ? (len < 64 ? 256 : len * 4) : max;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf || inflateInit2(&z, GZIP_WINDOW) != Z_OK) {
        free(buf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t got = 0;
    const char *why = NULL;
    z.next_in = (unsigned char *)data;
    for (;;) {
        size_t in_step = len - (size_t)((const uint8_t *)z.next_in - data);
        z.avail_in = in_step > (1u << 30) ? 1u << 30 : (uInt)in_step;
        if (got == cap && grow(&buf, &cap, max) < 0) {
            why = cap >= max ? "it holds more than the largest profile sonde reads" : "out of memory";
            break;
        }
        size_t room = cap - got;
        z.next_out = buf + got;
        z.avail_out = room > (1u << 30) ? 1u << 30 : (uInt)room;
        uInt before = z.avail_out;
        int rc = inflate(&z, Z_NO_FLUSH);
        got += before - z.avail_out;
        if (rc == Z_STREAM_END) {
            size_t left = len - (size_t)((const uint8_t *)z.next_in - data);
            if (left == 0)
                break;
            if (!sonde_gz_is(z.next_in, left) || inflateReset(&z) != Z_OK) {
                why = "data after the end of the gzip stream";
                break;
            }
            continue; /* another member, as gzip -c a b > c makes */
        }
        if (rc == Z_BUF_ERROR && z.avail_out > 0) {
            why = "the gzip stream is cut short";
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            why = rc == Z_MEM_ERROR ? "out of memory" : "the gzip stream is corrupt";
            break;
        }
    }
    inflateEnd(&z);
    if (why) {
        snprintf(err, errlen, "%s", why);
        free(buf);
        return -1;
    }
    *out = buf;
    *outlen = got;
    return 0;
}
