/* test_buf.c - sonde_buf: appends, printf, growth and JSON string escaping. */
#include <string.h>

#include "core/buf.h"
#include "harness.h"

/* The JSON literal sonde_buf_json_str makes of s. */
static void check_json(const char *s, const char *want, int line)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_buf_json_str(&b, s);
    check_str_at(b.data, want, "json_str", __FILE__, line);
    sonde_buf_free(&b);
}

static void test_appends(void)
{
    sonde_buf b;
    sonde_buf_init(&b);
    sonde_buf_printf(&b, "%s", "");
    check_u64(b.len, 0);
    sonde_buf_printf(&b, "%d-%s", 42, "x");
    sonde_buf_putc(&b, ';');
    sonde_buf_puts(&b, "ab");
    sonde_buf_put(&b, "cdef", 2);
    check_str(b.data, "42-x;abcd");
    check_u64(b.len, 9);

    /* Past the first 256-byte allocation, through printf and put. */
    for (int i = 0; i < 100; i++)
        sonde_buf_printf(&b, "%05d", i);
    check_u64(b.len, 9 + 500);
    check(memcmp(b.data + 9, "00000000010000200003", 20) == 0, "first numbers");
    check_str(b.data + b.len - 5, "00099");
    check(sonde_buf_ok(&b), "no allocation failed");

    sonde_buf_free(&b);
    check(b.data == NULL && b.len == 0 && b.cap == 0, "free resets the buffer");
}

static void test_json_str(void)
{
    check_json("plain", "\"plain\"", __LINE__);
    check_json("", "\"\"", __LINE__);
    check_json("a\"b\\c", "\"a\\\"b\\\\c\"", __LINE__);
    /* Every control character as \u00XX, newline and tab included. */
    check_json("\n\t\x01\x1f", "\"\\u000a\\u0009\\u0001\\u001f\"", __LINE__);
    /* < > & escaped so the JSON can sit inside an HTML page. */
    check_json("<a&b>", "\"\\u003ca\\u0026b\\u003e\"", __LINE__);
    /* Valid UTF-8 passes through: 2, 3 and 4 byte sequences. */
    check_json("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
               __LINE__);
    /* Invalid UTF-8: each bad byte b becomes \udcXX, U+DC00 + b (Python's
     * surrogateescape: json.loads gives back the interpreter's string). */
    check_json("a\xff" "b", "\"a\\udcffb\"", __LINE__);
    check_json("\x80", "\"\\udc80\"", __LINE__);                   /* lone continuation */
    check_json("\xc0\xaf", "\"\\udcc0\\udcaf\"", __LINE__);        /* overlong lead C0 */
    check_json("\xc3(", "\"\\udcc3(\"", __LINE__);                 /* cut sequence */
    check_json("\xe2\x82", "\"\\udce2\\udc82\"", __LINE__);        /* cut at the end */
    check_json("\xf5\x80\x80\x80", "\"\\udcf5\\udc80\\udc80\\udc80\"", __LINE__);
    check_json("\xed\xa0\x80", "\"\\udced\\udca0\\udc80\"", __LINE__); /* a surrogate */
}

void test_buf(void)
{
    test_appends();
    test_json_str();
}
