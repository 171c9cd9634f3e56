/* gecko_location.c - splits a Gecko profile frame's location string as
 * the Firefox Profiler does (gecko.h): the writer uses it to keep a label
 * from reading as code, the reader to name each frame's function.
 *
 * The Profiler matches regular expressions; each is followed here by a
 * scan that finds the same match (greedy and lazy groups as the regular
 * expression engine resolves them) in time linear in the text, since a
 * hostile file may hold long strings. */
#include <string.h>

#include "gecko.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* How many digits end s[0..end). */
static size_t digits_before(const char *s, size_t end)
{
    size_t k = 0;
    while (k < end && is_digit(s[end - 1 - k]))
        k++;
    return k;
}

/* The digits s[0..n) as a line, saturated at INT32_MAX. */
static int32_t line_of(const char *s, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v >= INT32_MAX ? INT32_MAX : v * 10 + (s[i] - '0');
    return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static void set_native(sonde_gecko_location *o, const char *s, size_t name_end, size_t lib,
                       size_t lib_end)
{
    o->form = SONDE_GECKO_NATIVE;
    o->name = s;
    o->name_len = name_end;
    o->lib = o->file = s + lib;
    o->lib_len = o->file_len = lib_end - lib;
    o->line = 0;
}

/* "NAME (in LIB)" on s[0..n): LIB has no ')', and greedy NAME ends at the
 * last " (in " (an earlier one would hold the same ')'). */
static int native_plain(const char *s, size_t n, sonde_gecko_location *o)
{
    if (n < 7 || s[n - 1] != ')')
        return 0;
    for (size_t i = n - 6; i + 1 > 0; i--) {
        if (memcmp(s + i, " (in ", 5) != 0)
            continue;
        if (memchr(s + i + 5, ')', n - 1 - (i + 5)))
            return 0;
        set_native(o, s, i, i + 5, n - 1);
        return 1;
    }
    return 0;
}

/* "NAME (in LIB) (X:Y)": the last " (in " whose LIB (up to the first ')')
 * is followed by " (", the text ending in ')' with a ':' inside. */
static int native_with_file(const char *s, size_t n, sonde_gecko_location *o)
{
    if (n < 12 || s[n - 1] != ')')
        return 0;
    size_t colon = n, close = n;
    for (size_t k = n - 1; k-- > 0 && colon == n;)
        if (s[k] == ':')
            colon = k;
    for (size_t m = n; m-- > 5;) {
        if (s[m] == ')')
            close = m;
        size_t i = m - 5;
        if (memcmp(s + i, " (in ", 5) != 0 || close + 3 >= n || s[close + 1] != ' ' ||
            s[close + 2] != '(' || colon == n || colon < close + 3)
            continue;
        set_native(o, s, i, m, close);
        const char *in = s + close + 3;
        size_t in_len = n - 1 - (close + 3), d = digits_before(in, in_len);
        o->file = in;
        o->file_len = in_len;
        if (d > 0 && d < in_len && in[in_len - d - 1] == ':') {
            o->file_len = in_len - d - 1;
            o->line = line_of(in + in_len - d, d);
        }
        return 1;
    }
    return 0;
}

static int native(const char *s, size_t n, sonde_gecko_location *o)
{
    size_t d = digits_before(s, n);
    if (d > 0 && n >= d + 3 && memcmp(s + n - d - 3, " + ", 3) == 0 &&
        native_plain(s, n - d - 3, o))
        return 1;
    return native_with_file(s, n, o) || native_plain(s, n, o);
}

/* The tail ":LINE" or ":LINE:COL" of t[0..end): where each ':' is (c2
 * == end when there is no column) and the numbers before and after c1. */
typedef struct tail {
    size_t c1, c2;
    int32_t last, before;
} tail;

static int tail_of(const char *t, size_t end, tail *x)
{
    size_t d1 = digits_before(t, end);
    if (d1 == 0 || end < d1 + 1 || t[end - d1 - 1] != ':')
        return 0;
    x->c1 = end - d1 - 1;
    x->last = line_of(t + end - d1, d1);
    size_t d2 = digits_before(t, x->c1);
    x->c2 = end;
    if (d2 > 0 && x->c1 >= d2 + 1 && t[x->c1 - d2 - 1] == ':') {
        x->c2 = x->c1 - d2 - 1;
        x->before = line_of(t + x->c1 - d2, d2);
    }
    return 1;
}

/* The code location whose file starts at `from` (the lazy file: it ends
 * before ":LINE:COL" when there is a column and the file is not empty). */
static void set_code(sonde_gecko_location *o, const char *s, size_t name_len, size_t from,
                     const tail *x)
{
    int col = x->c2 < x->c1 && x->c2 > from;
    *o = (sonde_gecko_location){ .form = SONDE_GECKO_CODE, .name = s, .name_len = name_len,
                                 .file = s + from, .file_len = (col ? x->c2 : x->c1) - from,
                                 .line = col ? x->before : x->last };
}

/* "NAME (FILE:LINE[:COL])[N]" (greedy NAME: the last " (" that leaves a
 * file), else "FILE:LINE[:COL][N]". */
static int code(const char *s, size_t n, sonde_gecko_location *o)
{
    size_t end = n;
    tail x;
    if (n >= 3 && s[n - 1] == ']') {
        size_t d = digits_before(s, n - 1);
        if (d > 0 && n >= d + 2 && s[n - 2 - d] == '[')
            end = n - 2 - d;
    }
    if (end >= 2 && s[end - 1] == ')' && tail_of(s, end - 1, &x) && x.c1 >= 3) {
        for (size_t i = x.c1 - 3; i + 1 > 0; i--)
            if (s[i] == ' ' && s[i + 1] == '(') {
                set_code(o, s, i, i + 2, &x);
                return 1;
            }
    }
    if (!tail_of(s, end, &x) || x.c1 == 0)
        return 0;
    set_code(o, s, 0, 0, &x);
    return 1;
}

void sonde_gecko_location_parse(const char *s, size_t n, sonde_gecko_location *out)
{
    *out = (sonde_gecko_location){ .form = SONDE_GECKO_LABEL, .name = s, .name_len = n };
    if (n >= 2 && s[0] == '0' && s[1] == 'x')
        out->form = SONDE_GECKO_ADDRESS;
    else if (!native(s, n, out) && !code(s, n, out))
        *out = (sonde_gecko_location){ .form = SONDE_GECKO_LABEL, .name = s, .name_len = n };
}
