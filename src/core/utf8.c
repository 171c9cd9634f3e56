/* utf8.c - UTF-8 checks and Python's escaped bytes; see utf8.h. */
#include "utf8.h"

size_t sonde_utf8_len(const unsigned char *s)
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

/* The byte a lone surrogate U+DC80..U+DCFF written as UTF-8 at s[0..n)
 * escapes, or -1 when s does not start with one. */
static int escaped_byte(const unsigned char *s, size_t n)
{
    /* U+DC80..U+DCFF: ED B2 80..ED B3 BF */
    if (n < 3 || s[0] != 0xed || (s[1] != 0xb2 && s[1] != 0xb3) || (s[2] & 0xc0) != 0x80)
        return -1;
    return 0x80 | (s[1] & 1) << 6 | (s[2] & 0x3f);
}

size_t sonde_utf8_unescape(char *s, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        int b = escaped_byte((const unsigned char *)s + i, n - i);
        if (b >= 0) {
            s[out++] = (char)b;
            i += 3;
        } else {
            s[out++] = s[i++];
        }
    }
    if (out < n)
        s[out] = '\0';
    return out;
}

size_t sonde_utf8_encode(uint32_t c, unsigned char out[4])
{
    if (c < 0x80) {
        out[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (unsigned char)(0xc0 | c >> 6);
        out[1] = (unsigned char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (unsigned char)(0xe0 | c >> 12);
        out[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (unsigned char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | c >> 18);
    out[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (unsigned char)(0x80 | (c & 0x3f));
    return 4;
}
