/* linetable.c - decodes co_lnotab, 3.10's co_linetable, 3.11's locations; see linetable.h. */
#include "linetable.h"

#include <limits.h>

/* Bytes per code unit (_Py_CODEUNIT): co_lnotab and 3.10's table count bytes. */
#define UNIT 2

/* Running lines beyond this mean a malformed table (and keep the sums far from overflow). */
#define LINE_BOUND ((int64_t)1 << 40)

static int finish(int64_t line, int *out)
{
    if (line < 0 || line > INT_MAX)
        return -1;
    *out = (int)line;
    return 0;
}

static int lnotab(const uint8_t *t, size_t len, int64_t line, uint64_t target, int *out)
{
    if (len % 2 != 0)
        return -1;
    uint64_t addr = 0;
    for (size_t i = 0; i < len; i += 2) {
        addr += t[i];
        if (addr > target)
            break;
        line += (int8_t)t[i + 1];
    }
    return finish(line, out);
}

static int linetable_310(const uint8_t *t, size_t len, int64_t line, uint64_t target, int *out)
{
    if (len % 2 != 0)
        return -1;
    uint64_t end = 0;
    for (size_t i = 0; i < len; i += 2) {
        int8_t delta = (int8_t)t[i + 1];
        end += t[i];
        if (delta != INT8_MIN)
            line += delta;
        if (target < end)
            return delta == INT8_MIN ? -1 : finish(line, out);
    }
    return -1;
}

/* An unsigned varint of the location table: 6-bit chunks, least significant first, bit 6 set
 * on all but the last; at most 6 chunks.  Bit 7 would start the next entry. */
static int varint(const uint8_t *t, size_t len, size_t *i, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 36; shift += 6) {
        if (*i >= len || (t[*i] & 0x80))
            return -1;
        uint8_t b = t[(*i)++];
        *v |= (uint64_t)(b & 63) << shift;
        if (!(b & 64))
            return 0;
    }
    return -1;
}

static int svarint(const uint8_t *t, size_t len, size_t *i, int64_t *v)
{
    uint64_t u;
    if (varint(t, len, i, &u) < 0)
        return -1;
    *v = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
    return 0;
}

/* Skips n column bytes, which never have bit 7 set. */
static int skip(const uint8_t *t, size_t len, size_t *i, int n)
{
    for (; n > 0; n--, (*i)++)
        if (*i >= len || (t[*i] & 0x80))
            return -1;
    return 0;
}

enum { LOC_NONE = 15, LOC_LONG = 14, LOC_NO_COLUMNS = 13, LOC_ONE_LINE0 = 10 };

static int locations_311(const uint8_t *t, size_t len, int64_t line, uint64_t target, int *out)
{
    uint64_t end = 0;
    size_t i = 0;
    while (i < len) {
        uint8_t first = t[i++];
        if (!(first & 0x80))
            return -1;
        unsigned code = first >> 3 & 15;
        int64_t delta = 0;
        uint64_t ignored;
        int bad = 0;
        if (code == LOC_LONG)
            bad = svarint(t, len, &i, &delta) < 0 || varint(t, len, &i, &ignored) < 0 ||
                  varint(t, len, &i, &ignored) < 0 || varint(t, len, &i, &ignored) < 0;
        else if (code == LOC_NO_COLUMNS)
            bad = svarint(t, len, &i, &delta) < 0;
        else if (code >= LOC_ONE_LINE0 && code < LOC_NO_COLUMNS) {
            delta = code - LOC_ONE_LINE0;
            bad = skip(t, len, &i, 2) < 0;
        } else if (code < LOC_ONE_LINE0)
            bad = skip(t, len, &i, 1) < 0;
        if (bad)
            return -1;
        line += delta;
        if (line < -LINE_BOUND || line > LINE_BOUND)
            return -1;
        end += (first & 7) + 1;
        if (target < end)
            return code == LOC_NONE ? -1 : finish(line, out);
    }
    return -1;
}

int sonde_py_line_for(enum sonde_py_line_format format, const uint8_t *table, size_t len,
                      int firstlineno, uint32_t index, int *line)
{
    if (!table && len > 0)
        return -1;
    switch (format) {
    case SONDE_PY_LNOTAB:
        return lnotab(table, len, firstlineno, (uint64_t)index * UNIT, line);
    case SONDE_PY_LINETABLE_310:
        return linetable_310(table, len, firstlineno, (uint64_t)index * UNIT, line);
    case SONDE_PY_LOCATIONS_311:
        return locations_311(table, len, firstlineno, index, line);
    }
    return -1;
}
