/* gzip.c - gzip through zlib, loaded at run time; see gzip.h. */
#include "gzip.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/dynlib.h"

#define CHUNK (16 * 1024)
#define GZIP_WINDOW (15 + 16) /* zlib's window bits for a gzip wrapper */

/* zlib's z_stream and the numbers sonde uses, as zlib.h (1.x) has them:
 * sonde builds without zlib's headers, and loads libz.so.1 when a gzip
 * file is first written or read. */
typedef struct z_stream {
    const unsigned char *next_in;
    unsigned avail_in;
    unsigned long total_in;
    unsigned char *next_out;
    unsigned avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *(*zalloc)(void *, unsigned, unsigned);
    void (*zfree)(void *, void *);
    void *opaque;
    int data_type;
    unsigned long adler, reserved;
} z_stream;
enum {
    Z_OK = 0, Z_STREAM_END = 1, Z_STREAM_ERROR = -2, Z_MEM_ERROR = -4, Z_BUF_ERROR = -5,
    Z_NO_FLUSH = 0, Z_FINISH = 4, Z_DEFAULT_COMPRESSION = -1, Z_DEFLATED = 8,
    Z_DEFAULT_STRATEGY = 0,
};
#define ZLIB_ABI_VERSION "1.2.0" /* zlib checks the first digit and the struct's size */

typedef struct zlib_functions {
    int (*deflateInit2_)(z_stream *, int, int, int, int, int, const char *, int);
    int (*deflate)(z_stream *, int);
    int (*deflateEnd)(z_stream *);
    int (*inflateInit2_)(z_stream *, int, const char *, int);
    int (*inflate)(z_stream *, int);
    int (*inflateReset)(z_stream *);
    int (*inflateEnd)(z_stream *);
} zlib_functions;
static zlib_functions zlib;
static int zlib_loaded;
static pthread_once_t zlib_once = PTHREAD_ONCE_INIT;

#define ZLIB_FUNCTION(name) { offsetof(zlib_functions, name), #name }
static void load_zlib(void)
{
    static const sonde_dynlib_fn functions[] = {
        ZLIB_FUNCTION(deflateInit2_), ZLIB_FUNCTION(deflate), ZLIB_FUNCTION(deflateEnd),
        ZLIB_FUNCTION(inflateInit2_), ZLIB_FUNCTION(inflate), ZLIB_FUNCTION(inflateReset),
        ZLIB_FUNCTION(inflateEnd),
    };
    char why[128];
    zlib_loaded = sonde_dynlib_load("libz.so.1", &zlib, functions,
                                    sizeof functions / sizeof functions[0], why, sizeof why) == 0;
}

static int have_zlib(void)
{
    pthread_once(&zlib_once, load_zlib);
    return zlib_loaded;
}

/* Without zlib the writer still writes gzip: the data in stored deflate
 * blocks, not compressed, with gzip's header, CRC-32 and length (RFC 1951
 * 3.2.4, RFC 1952), which every reader of gzip reads. */
#define STORED_MAX 65535

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void make_crc_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    pthread_once(&crc_once, make_crc_table);
    crc = ~crc;
    while (n--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static void put_le(sonde_buf *out, uint32_t v, int bytes)
{
    unsigned char b[4];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    sonde_buf_put(out, b, (size_t)bytes);
}

struct sonde_gz {
    sonde_buf *out;
    int failed;
    int stored;          /* no zlib: stored blocks of up to STORED_MAX bytes */
    z_stream z;
    uint32_t crc, size;  /* stored: the CRC-32 and length (mod 2^32) so far */
    size_t held;         /* stored: bytes of the block being filled in chunk */
    unsigned char chunk[STORED_MAX > CHUNK ? STORED_MAX : CHUNK];
};

/* Writes the block in g->chunk, the last one when final. */
static void put_stored_block(sonde_gz *g, int final)
{
    unsigned char head[5] = { (unsigned char)final, (unsigned char)g->held,
                              (unsigned char)(g->held >> 8), (unsigned char)~g->held,
                              (unsigned char)(~g->held >> 8) };
    sonde_buf_put(g->out, head, sizeof head);
    sonde_buf_put(g->out, g->chunk, g->held);
    g->held = 0;
}

static void stored_write(sonde_gz *g, const unsigned char *in, size_t n)
{
    g->crc = crc32_update(g->crc, in, n);
    g->size += (uint32_t)n;
    while (n > 0) {
        if (g->held == STORED_MAX)
            put_stored_block(g, 0);
        size_t step = STORED_MAX - g->held < n ? STORED_MAX - g->held : n;
        memcpy(g->chunk + g->held, in, step);
        g->held += step;
        in += step;
        n -= step;
    }
}

static void stored_finish(sonde_gz *g)
{
    put_stored_block(g, 1);
    put_le(g->out, g->crc, 4);
    put_le(g->out, g->size, 4);
}

sonde_gz *sonde_gz_new_stored(sonde_buf *out)
{
    static const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
    sonde_gz *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->out = out;
    g->stored = 1;
    sonde_buf_put(out, header, sizeof header);
    return g;
}

sonde_gz *sonde_gz_new(sonde_buf *out)
{
    if (!have_zlib())
        return sonde_gz_new_stored(out);
    sonde_gz *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if (zlib.deflateInit2_(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW, 8,
                           Z_DEFAULT_STRATEGY, ZLIB_ABI_VERSION, (int)sizeof g->z) != Z_OK) {
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
        rc = zlib.deflate(&g->z, flush);
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
    if (g->stored && !g->failed) {
        stored_write(g, in, n);
        g->failed = !sonde_buf_ok(g->out);
    }
    while (!g->stored && !g->failed && n > 0) {
        unsigned step = n > (1u << 30) ? 1u << 30 : (unsigned)n;
        g->z.next_in = in;
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
    if (g->stored && !g->failed) {
        stored_finish(g);
        g->failed = !sonde_buf_ok(g->out);
    } else if (!g->failed) {
        g->z.next_in = NULL;
        g->z.avail_in = 0;
        pump(g, Z_FINISH);
    }
    int rc = g->failed ? -1 : 0;
    if (!g->stored)
        zlib.deflateEnd(&g->z);
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
    if (!have_zlib()) {
        snprintf(err, errlen, "reading a gzipped file needs zlib, and libz.so.1 is not "
                 "installed (Debian/Ubuntu: apt-get install zlib1g); or gunzip it first");
        return -1;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    size_t cap = len < max / 4 ? (len < 64 ? 256 : len * 4) : max;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf || zlib.inflateInit2_(&z, GZIP_WINDOW, ZLIB_ABI_VERSION, (int)sizeof z) != Z_OK) {
        free(buf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t got = 0;
    const char *why = NULL;
    z.next_in = data;
    for (;;) {
        size_t in_step = len - (size_t)((const uint8_t *)z.next_in - data);
        z.avail_in = in_step > (1u << 30) ? 1u << 30 : (unsigned)in_step;
        if (got == cap && grow(&buf, &cap, max) < 0) {
            why = cap >= max ? "it holds more than the largest profile sonde reads" : "out of memory";
            break;
        }
        size_t room = cap - got;
        z.next_out = buf + got;
        z.avail_out = room > (1u << 30) ? 1u << 30 : (unsigned)room;
        unsigned before = z.avail_out;
        int rc = zlib.inflate(&z, Z_NO_FLUSH);
        got += before - z.avail_out;
        if (rc == Z_STREAM_END) {
            size_t left = len - (size_t)((const uint8_t *)z.next_in - data);
            if (left == 0)
                break;
            if (!sonde_gz_is(z.next_in, left) || zlib.inflateReset(&z) != Z_OK) {
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
    zlib.inflateEnd(&z);
    if (why) {
        snprintf(err, errlen, "%s", why);
        free(buf);
        return -1;
    }
    *out = buf;
    *outlen = got;
    return 0;
}
