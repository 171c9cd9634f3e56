/* json_read.c - bounded JSON reader; see json_read.h. */
#include "json_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/utf8.h"

typedef struct parser {
    sonde_jtree *t;
    const char *start, *p, *end;
    char *err;
    size_t errlen;
} parser;

static int fail(parser *ps, const char *what)
{
    return sonde_flat_fail(ps->err, ps->errlen, "%s at byte %zu", what,
                           (size_t)(ps->p - ps->start));
}

static void skip_space(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int64_t new_val(parser *ps, uint8_t type)
{
    sonde_jtree *t = ps->t;
    sonde_jval *vals = sonde_grow(t->vals, &t->vals_cap, (size_t)t->nvals + 1, sizeof *vals,
                                  UINT32_MAX);
    if (!vals)
        return fail(ps, "out of memory");
    t->vals = vals;
    vals[t->nvals] = (sonde_jval){ .type = type };
    return t->nvals++;
}

static int pool_put(parser *ps, const char *s, size_t n)
{
    sonde_jtree *t = ps->t;
    char *pool = sonde_grow(t->pool, &t->pool_cap, t->pool_len + n + 1, 1, UINT32_MAX);
    if (!pool)
        return fail(ps, "out of memory");
    t->pool = pool;
    memcpy(t->pool + t->pool_len, s, n);
    t->pool_len += n;
    return 0;
}

static int put_utf8(parser *ps, uint32_t cp)
{
    unsigned char b[4];
    size_t n = sonde_utf8_encode(cp, b);
    return pool_put(ps, (const char *)b, n);
}

static int hex4(parser *ps, uint32_t *out)
{
    if (ps->end - ps->p < 4)
        return fail(ps, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return fail(ps, "bad \\u escape");
    }
    *out = v;
    return 0;
}

static int64_t read_string(parser *ps)
{
    ps->p++; /* the opening quote */
    int64_t v = new_val(ps, SONDE_J_STR);
    if (v < 0)
        return -1;
    size_t start = ps->t->pool_len;
    while (ps->p < ps->end && *ps->p != '"') {
        const char *run = ps->p;
        while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' && (unsigned char)*ps->p >= 0x20)
            ps->p++;
        if (pool_put(ps, run, (size_t)(ps->p - run)) < 0)
            return -1;
        if (ps->p == ps->end || *ps->p == '"')
            break;
        if ((unsigned char)*ps->p < 0x20)
            return fail(ps, "control character in a string");
        if (++ps->p == ps->end)
            return fail(ps, "truncated escape");
        char c = *ps->p++;
        const char *simple = strchr("\"\\/bfnrt", c);
        if (simple && c) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (pool_put(ps, &decoded[simple - "\"\\/bfnrt"], 1) < 0)
                return -1;
            continue;
        }
        if (c != 'u')
            return fail(ps, "bad escape");
        uint32_t cp, low;
        if (hex4(ps, &cp) < 0)
            return -1;
        if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
            ps->p[1] == 'u') {
            ps->p += 2;
            if (hex4(ps, &low) < 0)
                return -1;
            cp = low >= 0xdc00 && low < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
                                               : 0xfffd;
        } else if (cp >= 0xdc80 && cp <= 0xdcff) {
            /* Python's escape for a byte that is not UTF-8: the byte */
            char byte = (char)(cp - 0xdc00);
            if (pool_put(ps, &byte, 1) < 0)
                return -1;
            continue;
        } else if (cp >= 0xd800 && cp < 0xe000) {
            cp = 0xfffd;
        }
        if (put_utf8(ps, cp) < 0)
            return -1;
    }
    if (ps->p == ps->end)
        return fail(ps, "unterminated string");
    ps->p++;
    if (pool_put(ps, "", 1) < 0)
        return -1;
    ps->t->vals[v].off = (uint32_t)start;
    ps->t->vals[v].len = (uint32_t)(ps->t->pool_len - 1 - start);
    return v;
}

static int64_t read_value(parser *ps, int depth);

/* Decodes one member of a container and adds its index to members. */
static int read_member(parser *ps, sonde_flat_ids *members, int depth)
{
    int64_t v = read_value(ps, depth + 1);
    if (v < 0)
        return -1;
    if (sonde_flat_ids_push(members, (uint32_t)v) < 0)
        return fail(ps, "out of memory");
    skip_space(ps);
    return 0;
}

/* An array's values, or an object's keys and values, until `close`:
 * decoded first, then added to the items as one run. */
static int64_t read_container(parser *ps, int depth, char close, uint8_t type)
{
    ps->p++;
    sonde_flat_ids members = { 0 };
    int rc = 0;
    skip_space(ps);
    for (int leading = 1; rc == 0 && ps->p < ps->end && *ps->p != close; leading = 0) {
        if (!leading) {
            if (*ps->p != ',') {
                rc = fail(ps, "expected ','");
                break;
            }
            ps->p++;
            skip_space(ps);
        }
        if (type == SONDE_J_OBJ) {
            if (ps->p == ps->end || *ps->p != '"')
                rc = fail(ps, "expected a key");
            else if ((rc = read_member(ps, &members, depth)) == 0 &&
                     (ps->p == ps->end || *ps->p != ':'))
                rc = fail(ps, "expected ':'");
            if (rc < 0)
                break;
            ps->p++; /* the ':' */
        }
        rc = read_member(ps, &members, depth);
    }
    if (rc == 0 && ps->p == ps->end)
        rc = fail(ps, "unterminated array or object");
    else if (rc == 0)
        ps->p++; /* the closing bracket */
    uint32_t first = 0;
    if (rc == 0 && sonde_flat_ids_add_run(&ps->t->items, &members, &first) < 0)
        rc = fail(ps, "out of memory");
    int64_t v = rc < 0 ? -1 : new_val(ps, type);
    if (v >= 0) {
        ps->t->vals[v].off = first;
        ps->t->vals[v].len = type == SONDE_J_OBJ ? members.n / 2 : members.n;
    }
    sonde_flat_ids_free(&members);
    return v;
}

static int64_t read_value(parser *ps, int depth)
{
    if (depth > SONDE_FLAT_MAX_DEPTH)
        return fail(ps, "nested too deeply");
    skip_space(ps);
    if (ps->p == ps->end)
        return fail(ps, "truncated");
    char c = *ps->p;
    if (c == '"')
        return read_string(ps);
    if (c == '[')
        return read_container(ps, depth, ']', SONDE_J_ARR);
    if (c == '{')
        return read_container(ps, depth, '}', SONDE_J_OBJ);
    static const struct { const char *word; uint8_t type; double num; } words[] = {
        { "null", SONDE_J_NULL, 0 }, { "true", SONDE_J_BOOL, 1 }, { "false", SONDE_J_BOOL, 0 },
    };
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i].word, n) == 0) {
            ps->p += n;
            int64_t v = new_val(ps, words[i].type);
            if (v >= 0)
                ps->t->vals[v].num = words[i].num;
            return v;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char number[64];
        size_t n = 0;
        while (ps->p < ps->end && n < sizeof number - 1 && strchr("+-.eE0123456789", *ps->p) && *ps->p)
            number[n++] = *ps->p++;
        number[n] = '\0';
        char *stop;
        errno = 0;
        double num = strtod(number, &stop);
        if (*stop)
            return fail(ps, "bad number");
        if (errno == ERANGE && (num > 1 || num < -1))
            return fail(ps, "number out of range");
        int64_t v = new_val(ps, SONDE_J_NUM);
        if (v >= 0)
            ps->t->vals[v].num = num;
        return v;
    }
    return fail(ps, "unexpected character");
}

int sonde_json_read(sonde_jtree *t, const char *text, size_t len, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (err && errlen)
        err[0] = '\0';
    if (len > UINT32_MAX) {
        snprintf(err, errlen, "too large");
        return -1;
    }
    parser ps = { .t = t, .start = text, .p = text, .end = text + len, .err = err,
                  .errlen = errlen };
    int64_t root = read_value(&ps, 0);
    skip_space(&ps);
    if (root >= 0 && ps.p != ps.end)
        root = fail(&ps, "text after the document");
    if (root < 0) {
        sonde_jtree_free(t);
        return -1;
    }
    t->root = (uint32_t)root;
    return 0;
}

void sonde_jtree_free(sonde_jtree *t)
{
    free(t->vals);
    sonde_flat_ids_free(&t->items);
    free(t->pool);
    memset(t, 0, sizeof *t);
}

const sonde_jval *sonde_json_get(const sonde_jtree *t, const sonde_jval *obj, const char *key)
{
    if (!obj || obj->type != SONDE_J_OBJ)
        return NULL;
    for (uint32_t i = 0; i < obj->len; i++) {
        const sonde_jval *k = &t->vals[t->items.at[obj->off + 2 * i]];
        if (k->type == SONDE_J_STR && strcmp(t->pool + k->off, key) == 0)
            return &t->vals[t->items.at[obj->off + 2 * i + 1]];
    }
    return NULL;
}

const sonde_jval *sonde_json_item(const sonde_jtree *t, const sonde_jval *arr, uint32_t i)
{
    if (!arr || arr->type != SONDE_J_ARR || i >= arr->len)
        return NULL;
    return &t->vals[t->items.at[arr->off + i]];
}

const char *sonde_json_str(const sonde_jtree *t, const sonde_jval *v)
{
    return v && v->type == SONDE_J_STR ? t->pool + v->off : "";
}

double sonde_json_num(const sonde_jtree *t, const sonde_jval *obj, const char *key, double fallback)
{
    const sonde_jval *v = sonde_json_get(t, obj, key);
    return v && v->type == SONDE_J_NUM ? v->num : fallback;
}

int64_t sonde_num_to_int(double v, int64_t lo, int64_t hi)
{
    if (!(v > (double)lo))
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

uint64_t sonde_num_to_count(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= 18446744073709551616.0) /* 2^64 */
        return UINT64_MAX;
    return (uint64_t)v;
}
