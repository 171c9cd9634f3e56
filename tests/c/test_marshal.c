/* test_marshal.c - marshal writer bytes, decoding CPython's bytes, bad input. */
#include <stdlib.h>
#include <string.h>

#include "formats/marshal.h"
#include "harness.h"

/* A string literal as (data, length), embedded NULs included. */
#define BYTES(s) (const uint8_t *)(s), sizeof(s) - 1

static const sonde_mval *root(const sonde_mtree *t) { return &t->vals[t->root]; }

static int is_str(const sonde_mtree *t, const sonde_mval *v, const char *want)
{
    return v->type == SONDE_M_STR && v->len == strlen(want) &&
           memcmp(t->data + v->off, want, v->len) == 0;
}

static int is_int(const sonde_mval *v, int64_t want)
{
    return v->type == SONDE_M_INT && v->i == want;
}

/* The writer's bytes for one call against the encoding CPython uses. */
static void check_written(const sonde_buf *b, const uint8_t *want, size_t n, int line)
{
    harness_check(b->len == n && memcmp(b->data, want, n) == 0, __FILE__, line,
                  "writer bytes differ (%zu bytes, want %zu)", b->len, n);
}

static void test_writer_bytes(void)
{
    sonde_buf b;
#define WRITES(call, want) \
    do { \
        sonde_buf_init(&b); \
        call; \
        check_written(&b, BYTES(want), __LINE__); \
        sonde_buf_free(&b); \
    } while (0)
    WRITES(sonde_marshal_int(&b, 1), "i\x01\x00\x00\x00");
    WRITES(sonde_marshal_int(&b, -1), "i\xff\xff\xff\xff");
    WRITES(sonde_marshal_int(&b, INT32_MIN), "i\x00\x00\x00\x80");
    /* 2^31 = 2 * 2^30: 15-bit digits 0, 0, 2. */
    WRITES(sonde_marshal_int(&b, 2147483648), "l\x03\x00\x00\x00\x00\x00\x00\x00\x02\x00");
    /* -(2^31 + 1): digit count -3, digits 1, 0, 2. */
    WRITES(sonde_marshal_int(&b, -2147483649), "l\xfd\xff\xff\xff\x01\x00\x00\x00\x02\x00");
    /* 1.5 = 0x3ff8000000000000, little-endian. */
    WRITES(sonde_marshal_float(&b, 1.5), "g\x00\x00\x00\x00\x00\x00\xf8\x3f");
    WRITES(sonde_marshal_str(&b, "ab"), "z\x02" "ab");
    WRITES(sonde_marshal_str(&b, "\xc3\xa9"), "u\x02\x00\x00\x00\xc3\xa9");
    WRITES(sonde_marshal_tuple_begin(&b, 2), ")\x02");
    WRITES(sonde_marshal_tuple_begin(&b, 300), "(\x2c\x01\x00\x00");
    WRITES((sonde_marshal_dict_begin(&b), sonde_marshal_dict_end(&b)), "{0");
#undef WRITES

    /* A string of 300 ASCII bytes needs the 4-byte length of 'u'. */
    char long_str[301];
    memset(long_str, 'x', 300);
    long_str[300] = '\0';
    sonde_buf_init(&b);
    sonde_marshal_str(&b, long_str);
    check(b.len == 305 && memcmp(b.data, "u\x2c\x01\x00\x00xx", 7) == 0, "long str");
    sonde_buf_free(&b);
}

/* Everything the writer makes comes back from the reader. */
static void test_round_trip(void)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_marshal_dict_begin(&b);
    sonde_marshal_tuple_begin(&b, 3);
    sonde_marshal_str(&b, "a.py");
    sonde_marshal_int(&b, 7);
    sonde_marshal_str(&b, "f");
    sonde_marshal_tuple_begin(&b, 6);
    sonde_marshal_int(&b, -5);
    sonde_marshal_int(&b, (int64_t)1 << 40);
    sonde_marshal_int(&b, -((int64_t)1 << 59));
    sonde_marshal_float(&b, 2.5);
    sonde_marshal_str(&b, "\xc3\xa9t\xc3\xa9");
    sonde_marshal_tuple_begin(&b, 300);
    for (int i = 0; i < 300; i++)
        sonde_marshal_int(&b, i);
    sonde_marshal_dict_end(&b);

    sonde_mtree t;
    char err[128];
    check(sonde_marshal_read(&t, (const uint8_t *)b.data, b.len, err, sizeof err) == 0,
          "round trip: %s", err);
    const sonde_mval *d = root(&t);
    check(d->type == SONDE_M_DICT && d->len == 1, "one dict entry");
    const sonde_mval *key = sonde_mtree_item(&t, d, 0), *val = sonde_mtree_item(&t, d, 1);
    check(key->type == SONDE_M_TUPLE && key->len == 3, "key is a 3-tuple");
    check(is_str(&t, sonde_mtree_item(&t, key, 0), "a.py"), "key file");
    check(is_int(sonde_mtree_item(&t, key, 1), 7), "key line");
    check(is_str(&t, sonde_mtree_item(&t, key, 2), "f"), "key name");
    check(val->type == SONDE_M_TUPLE && val->len == 6, "value is a 6-tuple");
    check(is_int(sonde_mtree_item(&t, val, 0), -5), "-5");
    check(is_int(sonde_mtree_item(&t, val, 1), (int64_t)1 << 40), "2^40");
    check(is_int(sonde_mtree_item(&t, val, 2), -((int64_t)1 << 59)), "-2^59");
    check_dbl(sonde_mtree_item(&t, val, 3)->f, 2.5);
    check(is_str(&t, sonde_mtree_item(&t, val, 4), "\xc3\xa9t\xc3\xa9"), "utf-8 str");
    const sonde_mval *big = sonde_mtree_item(&t, val, 5);
    check(big->type == SONDE_M_TUPLE && big->len == 300, "300-tuple");
    int wrong = 0;
    for (uint32_t i = 0; i < 300; i++)
        wrong += !is_int(sonde_mtree_item(&t, big, i), i);
    check_u64(wrong, 0);
    sonde_mtree_free(&t);
    sonde_buf_free(&b);
}

/* Byte strings as CPython's marshal.dumps(x, 4) writes them. */
static void test_cpython_bytes(void)
{
    sonde_mtree t;
    char err[128];
    double num;

    /* ("a", "a"): tuple and "a" flagged (refs 0, 1), then 'r' 1. */
    check(sonde_marshal_read(&t, BYTES("\xa9\x02\xda\x01" "ar\x01\x00\x00\x00"), err,
                             sizeof err) == 0, "refs: %s", err);
    check(root(&t)->type == SONDE_M_TUPLE && root(&t)->len == 2, "pair");
    check(is_str(&t, sonde_mtree_item(&t, root(&t), 0), "a"), "first a");
    check(sonde_mtree_item(&t, root(&t), 1) == sonde_mtree_item(&t, root(&t), 0),
          "back-reference names the same value");
    sonde_mtree_free(&t);

    /* (1, None) with a 4-byte count '(' and a flagged 'i'. */
    check(sonde_marshal_read(&t, BYTES("(\x02\x00\x00\x00\xe9\x01\x00\x00\x00N"), err,
                             sizeof err) == 0, "( tuple: %s", err);
    check(root(&t)->len == 2 && is_int(sonde_mtree_item(&t, root(&t), 0), 1) &&
          sonde_mtree_item(&t, root(&t), 1)->type == SONDE_M_NONE, "(1, None)");
    sonde_mtree_free(&t);

    /* {'k': 1}: flagged dict, 'Z' key, '0' ends it. */
    check(sonde_marshal_read(&t, BYTES("\xfb\xda\x01k\xe9\x01\x00\x00\x00" "0"), err,
                             sizeof err) == 0, "dict: %s", err);
    check(root(&t)->type == SONDE_M_DICT && root(&t)->len == 1 &&
          is_str(&t, sonde_mtree_item(&t, root(&t), 0), "k") &&
          is_int(sonde_mtree_item(&t, root(&t), 1), 1), "{'k': 1}");
    sonde_mtree_free(&t);

    /* Every string code: z, Z, a, A, u, t and s (bytes). */
    static const struct {
        const char *bytes;
        size_t len;
        uint8_t type;
    } strs[] = {
        { "z\x03" "abc", 5, SONDE_M_STR },
        { "Z\x03" "abc", 5, SONDE_M_STR },
        { "a\x03\x00\x00\x00" "abc", 8, SONDE_M_STR },
        { "A\x03\x00\x00\x00" "abc", 8, SONDE_M_STR },
        { "u\x03\x00\x00\x00" "abc", 8, SONDE_M_STR },
        { "t\x03\x00\x00\x00" "abc", 8, SONDE_M_STR },
        { "s\x03\x00\x00\x00" "abc", 8, SONDE_M_BYTES },
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        int rc = sonde_marshal_read(&t, (const uint8_t *)strs[i].bytes, strs[i].len, err,
                                    sizeof err);
        check(rc == 0 && root(&t)->type == strs[i].type && root(&t)->len == 3 &&
              memcmp(t.data + root(&t)->off, "abc", 3) == 0, "string code '%c'",
              strs[i].bytes[0]);
        sonde_mtree_free(&t);
    }
    /* 'é' as CPython writes it: flagged 'u'. */
    check(sonde_marshal_read(&t, BYTES("\xf5\x02\x00\x00\x00\xc3\xa9"), err, sizeof err) == 0 &&
          is_str(&t, root(&t), "\xc3\xa9"), "flagged u");
    sonde_mtree_free(&t);

    /* Numbers: 'i' -2, 'l' -2^40 and 2^45 (flagged), 'g' -0.25, text 'f' 1.25. */
    static const struct {
        const char *bytes;
        size_t len;
        int64_t want;
    } ints[] = {
        { "i\xfe\xff\xff\xff", 5, -2 },
        { "\xec\xfd\xff\xff\xff\x00\x00\x00\x00\x00\x04", 11, -((int64_t)1 << 40) },
        { "\xec\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00", 13, (int64_t)1 << 45 },
        { "l\xfd\xff\xff\xff\x01\x00\x00\x00\x02\x00", 11, -2147483649 },
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int rc = sonde_marshal_read(&t, (const uint8_t *)ints[i].bytes, ints[i].len, err,
                                    sizeof err);
        check(rc == 0 && is_int(root(&t), ints[i].want), "integer %lld",
              (long long)ints[i].want);
        sonde_mtree_free(&t);
    }
    check(sonde_marshal_read(&t, BYTES("\xe7\x00\x00\x00\x00\x00\x00\xd0\xbf"), err,
                             sizeof err) == 0 && root(&t)->type == SONDE_M_FLOAT, "g float");
    check_dbl(root(&t)->f, -0.25);
    sonde_mtree_free(&t);
    check(sonde_marshal_read(&t, BYTES("f\x04" "1.25"), err, sizeof err) == 0 &&
          sonde_mval_number(root(&t), &num), "f float");
    check_dbl(num, 1.25);
    sonde_mtree_free(&t);

    /* (None, True, False, [1], frozenset()) */
    check(sonde_marshal_read(&t, BYTES(")\x05NTF\xdb\x01\x00\x00\x00\xe9\x01\x00\x00\x00"
                                       "\xbe\x00\x00\x00\x00"), err, sizeof err) == 0,
          "constants: %s", err);
    const sonde_mval *r = root(&t);
    check(sonde_mtree_item(&t, r, 0)->type == SONDE_M_NONE, "None");
    check(sonde_mtree_item(&t, r, 1)->type == SONDE_M_BOOL &&
          sonde_mtree_item(&t, r, 1)->i == 1, "True");
    check(sonde_mtree_item(&t, r, 2)->type == SONDE_M_BOOL &&
          sonde_mtree_item(&t, r, 2)->i == 0, "False");
    check(sonde_mtree_item(&t, r, 3)->type == SONDE_M_LIST &&
          sonde_mtree_item(&t, r, 3)->len == 1, "[1]");
    check(sonde_mtree_item(&t, r, 4)->type == SONDE_M_SET &&
          sonde_mtree_item(&t, r, 4)->len == 0, "frozenset()");
    check(sonde_mval_number(sonde_mtree_item(&t, r, 1), &num) && num == 1, "True is 1");
    check(!sonde_mval_number(sonde_mtree_item(&t, r, 0), &num) && num == 0,
          "None is no number");
    sonde_mtree_free(&t);
}

/* data must be refused with a message containing `why`. */
static void check_rejects(const uint8_t *data, size_t len, const char *why, int line)
{
    sonde_mtree t;
    char err[128] = "unset";
    int rc = sonde_marshal_read(&t, data, len, err, sizeof err);
    harness_check(rc == -1, __FILE__, line, "accepted bad input");
    harness_check(strstr(err, why) != NULL, __FILE__, line, "message '%s', want '%s'", err,
                  why);
    harness_check(t.vals == NULL && t.items.at == NULL, __FILE__, line, "tree freed");
}

static void test_errors(void)
{
    check_rejects(BYTES(""), "truncated", __LINE__);
    check_rejects(BYTES("i\x01\x00"), "truncated", __LINE__);
    check_rejects(BYTES("g\x00\x00"), "truncated float", __LINE__);
    check_rejects(BYTES("f\x09" "1.2"), "truncated float", __LINE__);
    check_rejects(BYTES("z\x05" "ab"), "truncated string", __LINE__);
    check_rejects(BYTES("u\xff\xff\xff\xff" "ab"), "truncated string", __LINE__);
    check_rejects(BYTES("l\x02\x00\x00\x00\x01\x00"), "truncated integer", __LINE__);
    check_rejects(BYTES("l\x01\x00\x00\x00\xff\xff"), "bad integer digit", __LINE__);
    check_rejects(BYTES(")\x02i\x01\x00"), "truncated", __LINE__);
    check_rejects(BYTES("{z\x01kN"), "truncated dict", __LINE__);
    /* Counts larger than the bytes left, before any allocation. */
    check_rejects(BYTES(")\x05N"), "container larger than the file", __LINE__);
    check_rejects(BYTES("(\xff\xff\xff\x7fN"), "container larger than the file", __LINE__);
    check_rejects(BYTES("[\x00\x00\x00\x10"), "container larger than the file", __LINE__);
    /* Back-references: none made yet, past the end, to an unfinished tuple. */
    check_rejects(BYTES("r\x00\x00\x00\x00"), "bad back-reference", __LINE__);
    check_rejects(BYTES(")\x02\xda\x01" "ar\x05\x00\x00\x00"), "bad back-reference", __LINE__);
    check_rejects(BYTES("\xa9\x01r\x00\x00\x00\x00"), "bad back-reference", __LINE__);
    check_rejects(BYTES("r\x00\x00"), "truncated", __LINE__);
    /* A code object, and a byte that is no type code at all. */
    check_rejects(BYTES("c\x00\x00\x00\x00"), "unsupported marshal type 0x63", __LINE__);
    check_rejects(BYTES(")\x01\x07"), "unsupported marshal type 0x07", __LINE__);

    /* 200 nested tuples or dicts pass the nesting limit; 30 do not. */
    enum { DEEP = 200, SHALLOW = 30 };
    uint8_t nest[2 * DEEP + 1];
    for (int i = 0; i < DEEP; i++) {
        nest[2 * i] = ')';
        nest[2 * i + 1] = 1;
    }
    nest[2 * DEEP] = 'N';
    check_rejects(nest, sizeof nest, "nested too deeply", __LINE__);
    uint8_t dicts[DEEP];
    memset(dicts, '{', sizeof dicts);
    check_rejects(dicts, sizeof dicts, "nested too deeply", __LINE__);

    sonde_mtree t;
    char err[128];
    const uint8_t *shallow = nest + 2 * (DEEP - SHALLOW);
    check(sonde_marshal_read(&t, shallow, 2 * SHALLOW + 1, err, sizeof err) == 0,
          "30 levels: %s", err);
    const sonde_mval *v = root(&t);
    for (int i = 0; i < SHALLOW && v->type == SONDE_M_TUPLE; i++)
        v = sonde_mtree_item(&t, v, 0);
    check(v->type == SONDE_M_NONE, "None at the bottom");
    sonde_mtree_free(&t);
}

void test_marshal(void)
{
    test_writer_bytes();
    test_round_trip();
    test_cpython_bytes();
    test_errors();
}
