/* collapsed_frame.c - the dialects of a collapsed stack's frame; see collapsed_frame.h. */
#include "collapsed_frame.h"

#include <stdio.h>
#include <string.h>

#include "../core/utf8.h"

/* The index of the last c in s[0..n), or n when there is none. */
static size_t last_of(const char *s, size_t n, char c)
{
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == c)
            return i - 1;
    return n;
}

/* s[0..n) as a line number (an optional '-', 1 to 10 digits, within 32
 * bits) into *line: 1, or 0 when it is not one. */
static int parse_line(const char *s, size_t n, int32_t *line)
{
    int negative = n > 0 && s[0] == '-';
    s += negative;
    n -= (size_t)negative;
    if (n == 0 || n > 10)
        return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    if (v > INT32_MAX)
        return 0;
    *line = (int32_t)(negative ? -v : v);
    return 1;
}

/* Rule 1, "NAME (FILE:LINE)": 1 when s[0..n) is one. */
static int paren_form(const char *s, size_t n, sonde_cframe *f)
{
    if (n < 5 || s[n - 1] != ')')
        return 0;
    size_t depth = 0, open = n;
    for (size_t i = n; i > 0 && open == n; i--) {
        if (s[i - 1] == ')')
            depth++;
        else if (s[i - 1] == '(' && --depth == 0)
            open = i - 1;
    }
    if (open == n || open < 2 || s[open - 1] != ' ')
        return 0;
    const char *in = s + open + 1;
    size_t in_len = n - open - 2, colon = last_of(in, in_len, ':');
    if (colon == in_len || colon == 0 || !parse_line(in + colon + 1, in_len - colon - 1, &f->line))
        return 0;
    f->name = s;
    f->name_len = open - 1;
    f->file = in;
    f->file_len = colon;
    return 1;
}

/* Rule 2, "FILE:FUNC:LINE": 1 when s[0..n) is one. */
static int colon_form(const char *s, size_t n, sonde_cframe *f)
{
    size_t colon = last_of(s, n, ':');
    if (colon == n || !parse_line(s + colon + 1, n - colon - 1, &f->line))
        return 0;
    size_t before = last_of(s, colon, ':');
    if (before == colon || before == 0 || before + 1 == colon)
        return 0;
    f->file = s;
    f->file_len = before;
    f->name = s + before + 1;
    f->name_len = colon - before - 1;
    return 1;
}

void sonde_cframe_parse(const char *s, size_t n, sonde_cframe *out)
{
    if (paren_form(s, n, out) || colon_form(s, n, out))
        return;
    out->name = s;
    out->name_len = n;
    out->file = "~";
    out->file_len = 1;
    out->line = 0;
}

/* The length of the frame at the start of s[0..n) (up to its ';'). */
static size_t frame_len(const char *s, size_t n)
{
    const char *semi = memchr(s, ';', n);
    return semi ? (size_t)(semi - s) : n;
}

/* s[0..n) as a number of 1 to 20 digits of base 10 or 16 into *v: 1, or
 * 0 when it is not one or passes 64 bits. */
static int parse_u64(const char *s, size_t n, int base, uint64_t *v)
{
    if (n == 0 || n > (base == 16 ? 16u : 20u))
        return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99;
        if (d >= (unsigned)base || *v > (UINT64_MAX - d) / (uint64_t)base)
            return 0;
        *v = *v * (uint64_t)base + d;
    }
    return 1;
}

/* 1 when s[0..n) is prefix followed by at least one more byte. */
static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n > k && memcmp(s, prefix, k) == 0;
}

void sonde_cframe_thread(const char *s, size_t n, sonde_cthread *t)
{
    memset(t, 0, sizeof *t);
    size_t first = frame_len(s, n);
    uint64_t v;
    if (starts(s, first, "tid:") && parse_u64(s + 4, first - 4, 10, &v)) {
        t->native_id = v;
        snprintf(t->name, sizeof t->name, "thread %llu", (unsigned long long)v);
    } else if (starts(s, first, "thread (0x") && s[first - 1] == ')' &&
               parse_u64(s + 10, first - 11, 16, &v)) {
        t->ident = v;
        snprintf(t->name, sizeof t->name, "thread 0x%llX", (unsigned long long)v);
    } else if (starts(s, first, "P") && parse_u64(s + 1, first - 1, 10, &v) && first < n &&
               starts(s + first + 1, n - first - 1, "T")) {
        size_t second = frame_len(s + first + 1, n - first - 1);
        snprintf(t->name, sizeof t->name, "process %llu thread %.*s", (unsigned long long)v,
                 (int)(second < 100 ? second - 1 : 99), s + first + 2);
        t->len = first + 1 + second;
        t->frames = 2;
        return;
    } else {
        return;
    }
    t->len = first;
    t->frames = 1;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t sonde_cframe_unescape(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int hi = i + 3 < n && s[i] == '\\' && s[i + 1] == 'x' ? hex_digit(s[i + 2]) : -1;
        int lo = hi >= 0 ? hex_digit(s[i + 3]) : -1;
        int byte = hi * 16 + lo;
        if (lo >= 0 && byte != 0 && byte != '\t' && (byte < 0x20 || byte >= 0x7f)) {
            out[k++] = (char)byte;
            i += 3;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = '\0';
    return sonde_utf8_unescape(out, k);
}
