/* test_json_read.c - the bounded JSON reader: values, escapes, errors, garbage. */
#include <stdlib.h>
#include <string.h>

#include "formats/json_read.h"
#include "harness.h"

static void values(void)
{
    const char *doc = "{\"mode\": \"lines\", \"n\": -12.5e1, \"ok\": true, \"none\": null,"
                      " \"list\": [1, [2, 3], {\"k\": \"v\"}], \"s\": \"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\"}";
    sonde_jtree t;
    char err[128];
    check(sonde_json_read(&t, doc, strlen(doc), err, sizeof err) == 0, "document reads: %s", err);
    const sonde_jval *root = &t.vals[t.root];
    check_str(sonde_json_str(&t, sonde_json_get(&t, root, "mode")), "lines");
    check_dbl(sonde_json_num(&t, root, "n", 0), -125.0);
    check(sonde_json_get(&t, root, "ok")->type == SONDE_J_BOOL, "true is a bool");
    check(sonde_json_get(&t, root, "none")->type == SONDE_J_NULL, "null");
    const sonde_jval *list = sonde_json_get(&t, root, "list");
    check_u64(list->len, 3);
    check_u64(sonde_json_item(&t, list, 1)->len, 2);
    check_str(sonde_json_str(&t, sonde_json_get(&t, sonde_json_item(&t, list, 2), "k")), "v");
    check_str(sonde_json_str(&t, sonde_json_get(&t, root, "s")), "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
    check(sonde_json_get(&t, root, "missing") == NULL, "missing key");
    check(sonde_json_item(&t, list, 3) == NULL, "item past the end");
    sonde_jtree_free(&t);
}

static void errors(void)
{
    const char *bad[] = { "", "{", "[1,", "{\"a\" 1}", "{\"a\": }", "[1 2]", "\"abc", "tru",
                          "{\"a\": 1} x", "[\"\\x\"]", "[\"\\u12\"]", "-", "{1: 2}" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sonde_jtree t;
        char err[128] = "";
        check(sonde_json_read(&t, bad[i], strlen(bad[i]), err, sizeof err) < 0 && err[0],
              "rejects '%s'", bad[i]);
    }
    char deep[400];
    memset(deep, '[', sizeof deep);
    sonde_jtree t;
    char err[128];
    check(sonde_json_read(&t, deep, sizeof deep, err, sizeof err) < 0, "nesting is capped");
}

static void garbage(void)
{
    /* Every proper prefix of a document is refused, the whole one read;
     * random bytes are refused almost always (and never crash: ASan and
     * valgrind run this too). */
    const char *doc = "{\"functions\": [{\"name\": \"f\", \"lines\": [{\"line\": 3}]}]}";
    size_t n = strlen(doc);
    sonde_jtree t;
    char err[128];
    int prefixes_refused = 1;
    for (size_t len = 0; len < n; len++)
        prefixes_refused &= sonde_json_read(&t, doc, len, err, sizeof err) < 0;
    check(prefixes_refused, "every proper prefix of a document is refused");
    check(sonde_json_read(&t, doc, n, err, sizeof err) == 0, "the whole document reads");
    sonde_jtree_free(&t);
    unsigned seed = 7;
    int refused = 0;
    for (int round = 0; round < 3000; round++) {
        char buf[128];
        size_t len = 1 + (size_t)(rand_r(&seed) % (int)(sizeof buf - 1));
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)rand_r(&seed);
        if (sonde_json_read(&t, buf, len, err, sizeof err) == 0)
            sonde_jtree_free(&t);
        else
            refused++;
    }
    check(refused > 2900, "random bytes refused (%d of 3000)", refused);
}

void test_json_read(void)
{
    values();
    errors();
    garbage();
}
