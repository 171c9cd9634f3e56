/* marshal.c - marshal writer and bounded reader; see marshal.h.
 *
 * Type codes and encodings follow CPython's Python/marshal.c (format
 * version 4): little-endian 32-bit sizes, 15-bit digits for big ints,
 * 8-byte IEEE doubles for 'g', FLAG_REF (0x80) on objects that later
 * 'r' records refer back to. */
#include "marshal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/utf8.h"

#define FLAG_REF 0x80

static void put_u32(sonde_buf *b, uint32_t v)
{
    unsigned char c[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
    sonde_buf_put(b, c, 4);
}

void sonde_marshal_dict_begin(sonde_buf *b) { sonde_buf_putc(b, '{'); }
void sonde_marshal_dict_end(sonde_buf *b) { sonde_buf_putc(b, '0'); }

void sonde_marshal_tuple_begin(sonde_buf *b, uint32_t n)
{
    if (n < 256) {
        sonde_buf_putc(b, ')');
        sonde_buf_putc(b, (char)n);
    } else {
        sonde_buf_putc(b, '(');
        put_u32(b, n);
    }
}

/* A byte that is not UTF-8 as marshal writes Python's escape for it: the
 * lone surrogate U+DC00 + b in UTF-8 ('surrogatepass'), 3 bytes. */
static void put_escaped_byte(sonde_buf *b, unsigned char c)
{
    unsigned char e[3] = { 0xed, (unsigned char)(0xb0 | c >> 6), (unsigned char)(0x80 | (c & 0x3f)) };
    sonde_buf_put(b, e, 3);
}

void sonde_marshal_str(sonde_buf *b, const char *s)
{
    /* The encoded length first: 3 bytes for each escaped byte. */
    size_t n = 0;
    int ascii = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = sonde_utf8_len(p);
        ascii &= *p < 0x80;
        n += k ? k : 3;
        p += k ? k : 1;
    }
    if (ascii && n < 256) {
        sonde_buf_putc(b, 'z');
        sonde_buf_putc(b, (char)n);
        sonde_buf_put(b, s, n);
        return;
    }
    sonde_buf_putc(b, 'u');
    put_u32(b, (uint32_t)n);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = sonde_utf8_len(p);
        if (k)
            sonde_buf_put(b, p, k);
        else
            put_escaped_byte(b, *p);
        p += k ? k : 1;
    }
}

void sonde_marshal_int(sonde_buf *b, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        sonde_buf_putc(b, 'i');
        put_u32(b, (uint32_t)(int32_t)v);
        return;
    }
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint16_t digits[5];
    int32_t n = 0;
    while (mag) {
        digits[n++] = mag & 0x7fff;
        mag >>= 15;
    }
    sonde_buf_putc(b, 'l');
    put_u32(b, (uint32_t)(v < 0 ? -n : n));
    for (int32_t i = 0; i < n; i++) {
        unsigned char c[2] = { digits[i] & 0xff, digits[i] >> 8 };
        sonde_buf_put(b, c, 2);
    }
}

void sonde_marshal_float(sonde_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    unsigned char c[8];
    for (int i = 0; i < 8; i++)
        c[i] = (bits >> (8 * i)) & 0xff;
    sonde_buf_putc(b, 'g');
    sonde_buf_put(b, c, 8);
}

/* ---- reading ---- */

typedef struct reader {
    sonde_mtree *t;
    const uint8_t *p, *end;
    sonde_flat_ids refs;     /* value index, or UINT32_MAX while reserved */
    char *err;
    size_t errlen;
} reader;

static int fail(reader *r, const char *what)
{
    return sonde_flat_fail(r->err, r->errlen, "%s", what);
}

static size_t left(const reader *r) { return (size_t)(r->end - r->p); }

static int get_u32(reader *r, uint32_t *v)
{
    if (left(r) < 4)
        return fail(r, "truncated");
    *v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
         (uint32_t)r->p[3] << 24;
    r->p += 4;
    return 0;
}

static int64_t new_val(reader *r, uint8_t type)
{
    sonde_mtree *t = r->t;
    sonde_mval *vals = sonde_grow(t->vals, &t->vals_cap, (size_t)t->nvals + 1, sizeof *vals,
                                  UINT32_MAX);
    if (!vals)
        return fail(r, "out of memory");
    t->vals = vals;
    vals[t->nvals] = (sonde_mval){ .type = type };
    return t->nvals++;
}

static int64_t reserve_ref(reader *r)
{
    if (sonde_flat_ids_push(&r->refs, UINT32_MAX) < 0)
        return fail(r, "out of memory");
    return r->refs.n - 1;
}

static int64_t read_value(reader *r, int depth);

/* Decodes one member of a container and adds its index to members. */
static int read_member(reader *r, sonde_flat_ids *members, int depth)
{
    int64_t v = read_value(r, depth + 1);
    if (v < 0)
        return -1;
    return sonde_flat_ids_push(members, (uint32_t)v) < 0 ? fail(r, "out of memory") : 0;
}

static int64_t read_str(reader *r, uint8_t type, uint32_t n)
{
    if (n > left(r))
        return fail(r, "truncated string");
    int64_t v = new_val(r, type);
    if (v < 0)
        return -1;
    r->t->vals[v].off = (uint32_t)(r->p - r->t->data);
    r->t->vals[v].len = n;
    r->p += n;
    return v;
}

/* A container: its members (n of them; a dict's keys and values until a
 * NULL ('0') key) decoded first, then added to the items as one run. */
static int64_t read_container(reader *r, uint8_t type, uint32_t n, int depth)
{
    sonde_flat_ids members = { 0 };
    int rc = 0;
    if (type != SONDE_M_DICT) {
        for (uint32_t i = 0; rc == 0 && i < n; i++)
            rc = read_member(r, &members, depth);
    } else {
        for (;;) {
            if (left(r) < 1) {
                rc = fail(r, "truncated dict");
                break;
            }
            if (*r->p == '0') {
                r->p++;
                break;
            }
            if ((rc = read_member(r, &members, depth)) < 0 ||
                (rc = read_member(r, &members, depth)) < 0)
                break;
        }
    }
    uint32_t first = 0;
    if (rc == 0 && sonde_flat_ids_add_run(&r->t->items, &members, &first) < 0)
        rc = fail(r, "out of memory");
    int64_t v = rc < 0 ? -1 : new_val(r, type);
    if (v >= 0) {
        r->t->vals[v].off = first;
        r->t->vals[v].len = type == SONDE_M_DICT ? members.n / 2 : members.n;
    }
    sonde_flat_ids_free(&members);
    return v;
}

static int64_t read_long(reader *r)
{
    uint32_t raw;
    if (get_u32(r, &raw) < 0)
        return -1;
    int32_t n = (int32_t)raw;
    uint32_t ndigits = n < 0 ? (uint32_t)0 - (uint32_t)n : (uint32_t)n;
    if (ndigits > 5) /* 5 digits of 15 bits hold any int64 */
        return fail(r, "integer too large");
    if (left(r) < 2 * (size_t)ndigits)
        return fail(r, "truncated integer");
    uint64_t mag = 0;
    for (uint32_t i = 0; i < ndigits; i++) {
        uint64_t d = (uint64_t)r->p[2 * i] | (uint64_t)r->p[2 * i + 1] << 8;
        if (d > 0x7fff)
            return fail(r, "bad integer digit");
        if (i == 4 && d > 7)
            return fail(r, "integer too large");
        mag |= d << (15 * i);
    }
    r->p += 2 * ndigits;
    int64_t v = new_val(r, SONDE_M_INT);
    if (v >= 0)
        r->t->vals[v].i = n < 0 ? -(int64_t)mag : (int64_t)mag;
    return v;
}

static int64_t read_value(reader *r, int depth)
{
    if (depth > SONDE_FLAT_MAX_DEPTH)
        return fail(r, "nested too deeply");
    if (left(r) < 1)
        return fail(r, "truncated");
    uint8_t code = *r->p++;
    int flag = code & FLAG_REF;
    code &= (uint8_t)~FLAG_REF;
    int64_t ref = -1;
    if (flag && (ref = reserve_ref(r)) < 0)
        return -1;

    int64_t v = -1;
    uint32_t n;
    switch (code) {
    case 'N':
        v = new_val(r, SONDE_M_NONE);
        break;
    case 'F':
    case 'T':
        v = new_val(r, SONDE_M_BOOL);
        if (v >= 0)
            r->t->vals[v].i = code == 'T';
        break;
    case 'i':
        if (get_u32(r, &n) < 0)
            return -1;
        v = new_val(r, SONDE_M_INT);
        if (v >= 0)
            r->t->vals[v].i = (int32_t)n;
        break;
    case 'l':
        v = read_long(r);
        break;
    case 'g': {
        if (left(r) < 8)
            return fail(r, "truncated float");
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits |= (uint64_t)r->p[i] << (8 * i);
        r->p += 8;
        v = new_val(r, SONDE_M_FLOAT);
        if (v >= 0)
            memcpy(&r->t->vals[v].f, &bits, 8);
        break;
    }
    case 'f': { /* text float of old format versions: u8 length, digits */
        if (left(r) < 1 || left(r) - 1 < *r->p)
            return fail(r, "truncated float");
        char text[257];
        uint8_t len = *r->p++;
        memcpy(text, r->p, len);
        text[len] = '\0';
        r->p += len;
        v = new_val(r, SONDE_M_FLOAT);
        if (v >= 0)
            r->t->vals[v].f = strtod(text, NULL);
        break;
    }
    case 'z':
    case 'Z':
        if (left(r) < 1)
            return fail(r, "truncated");
        v = read_str(r, SONDE_M_STR, *r->p++);
        if (v >= 0)
            r->t->vals[v].latin1 = 1;
        break;
    case 'a':
    case 'A':
    case 'u':
    case 't':
    case 's':
        if (get_u32(r, &n) < 0)
            return -1;
        v = read_str(r, code == 's' ? SONDE_M_BYTES : SONDE_M_STR, n);
        if (v >= 0)
            r->t->vals[v].latin1 = code == 'a' || code == 'A';
        break;
    case ')':
    case '(':
    case '[':
    case '<':
    case '>': {
        if (code == ')') {
            if (left(r) < 1)
                return fail(r, "truncated");
            n = *r->p++;
        } else if (get_u32(r, &n) < 0) {
            return -1;
        }
        if (n > left(r))
            return fail(r, "container larger than the file");
        uint8_t type = code == '[' ? SONDE_M_LIST
                       : (code == '<' || code == '>') ? SONDE_M_SET
                                                      : SONDE_M_TUPLE;
        v = read_container(r, type, n, depth);
        break;
    }
    case '{':
        v = read_container(r, SONDE_M_DICT, 0, depth);
        break;
    case 'r':
        if (get_u32(r, &n) < 0)
            return -1;
        if (n >= r->refs.n || r->refs.at[n] == UINT32_MAX)
            return fail(r, "bad back-reference");
        return r->refs.at[n];
    default:
        return sonde_flat_fail(r->err, r->errlen, "unsupported marshal type 0x%02x", code);
    }
    if (v >= 0 && ref >= 0)
        r->refs.at[ref] = (uint32_t)v;
    return v;
}

int sonde_marshal_read(sonde_mtree *t, const uint8_t *data, size_t len,
                       char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    if (err && errlen)
        err[0] = '\0';
    if (len > UINT32_MAX) {
        snprintf(err, errlen, "file too large");
        return -1;
    }
    reader r = { .t = t, .p = data, .end = data + len, .err = err, .errlen = errlen };
    int64_t root = read_value(&r, 0);
    sonde_flat_ids_free(&r.refs);
    if (root < 0) {
        sonde_mtree_free(t);
        return -1;
    }
    t->root = (uint32_t)root;
    return 0;
}

void sonde_mtree_free(sonde_mtree *t)
{
    free(t->vals);
    sonde_flat_ids_free(&t->items);
    memset(t, 0, sizeof *t);
}

char *sonde_mval_str(const sonde_mtree *t, const sonde_mval *v)
{
    const uint8_t *in = t->data + v->off;
    char *s = malloc(2 * (size_t)v->len + 1);
    if (!s)
        return NULL;
    size_t n = 0;
    if (v->latin1) {
        for (uint32_t i = 0; i < v->len; i++) {
            if (in[i] >= 0x80)
                s[n++] = (char)(0xc0 | in[i] >> 6);
            s[n++] = (char)(in[i] < 0x80 ? in[i] : 0x80 | (in[i] & 0x3f));
        }
    } else {
        memcpy(s, in, v->len);
        n = sonde_utf8_unescape(s, v->len);
    }
    s[n] = '\0';
    return s;
}

int sonde_mval_number(const sonde_mval *v, double *out)
{
    switch (v->type) {
    case SONDE_M_INT:
    case SONDE_M_BOOL:
        *out = (double)v->i;
        return 1;
    case SONDE_M_FLOAT:
        *out = v->f;
        return 1;
    default:
        *out = 0;
        return 0;
    }
}
