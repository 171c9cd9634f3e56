/* lines_table.c - line_profiler's table; see lines_table.h. */
#include "lines_table.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    double ns;
} units[] = { { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1.0 } };

/* The largest unit in which the biggest time of a line is at least 1. */
static size_t pick_unit(const sonde_jtree *t, const sonde_jval *functions)
{
    double biggest = 0;
    for (uint32_t f = 0; f < functions->len; f++) {
        const sonde_jval *lines = sonde_json_get(t, sonde_json_item(t, functions, f), "lines");
        for (uint32_t i = 0; lines && i < lines->len; i++) {
            double ns = sonde_json_num(t, sonde_json_item(t, lines, i), "time_ns", 0);
            biggest = ns > biggest ? ns : biggest;
        }
    }
    for (size_t u = 0; u < 3; u++)
        if (biggest >= units[u].ns)
            return u;
    return 3;
}

static void put_function(sonde_buf *b, const sonde_jtree *t, const sonde_jval *fn, double scale)
{
    const sonde_jval *lines = sonde_json_get(t, fn, "lines");
    const sonde_jval *instrs = sonde_json_get(t, fn, "instructions");
    double total = sonde_json_num(t, fn, "total_ns", 0);
    int ran = 0;
    for (uint32_t i = 0; lines && i < lines->len; i++)
        ran |= sonde_json_num(t, sonde_json_item(t, lines, i), "hits", 0) > 0;
    if (!ran)
        return;
    sonde_buf_printf(b, "\nTotal time: %.6g s\nFile: ", total / 1e9);
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, fn, "file")));
    sonde_buf_puts(b, "\nFunction: ");
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, fn, "name")));
    sonde_buf_printf(b, " at line %d\n\n",
                     (int)sonde_num_to_int(sonde_json_num(t, fn, "first_line", 0), INT_MIN, INT_MAX));
    char header[128];
    snprintf(header, sizeof header, "%6s %10s %12s %10s %8s  %s", "Line #", "Hits", "Time",
             "Per Hit", "% Time", "Line Contents");
    sonde_buf_underlined(b, header);
    for (uint32_t i = 0; i < lines->len; i++) {
        const sonde_jval *l = sonde_json_item(t, lines, i);
        double line = sonde_json_num(t, l, "line", 0), hits = sonde_json_num(t, l, "hits", 0);
        double ns = sonde_json_num(t, l, "time_ns", 0);
        int at = (int)sonde_num_to_int(line, INT_MIN, INT_MAX);
        if (hits > 0)
            sonde_buf_printf(b, "%6d %10.0f %12.1f %10.1f %8.1f  ", at, hits, ns / scale,
                             ns / scale / hits, total ? 100.0 * ns / total : 0.0);
        else
            sonde_buf_printf(b, "%6d %10s %12s %10s %8s  ", at, "", "", "", "");
        sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, l, "source")));
        sonde_buf_putc(b, '\n');
        for (uint32_t k = 0; instrs && k < instrs->len; k++) {
            const sonde_jval *in = sonde_json_item(t, instrs, k);
            double ih = sonde_json_num(t, in, "hits", 0), ins = sonde_json_num(t, in, "time_ns", 0);
            if (sonde_json_num(t, in, "line", -1) != line || ih <= 0)
                continue;
            sonde_buf_printf(b, "%6s %10.0f %12.1f %10.1f %8.1f      %4d ", "", ih,
                             ins / scale, ins / scale / ih, total ? 100.0 * ins / total : 0.0,
                             (int)sonde_num_to_int(sonde_json_num(t, in, "offset", 0), INT_MIN,
                                                   INT_MAX));
            sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, in, "opname")));
            sonde_buf_putc(b, ' ');
            sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, in, "arg")));
            sonde_buf_putc(b, '\n');
        }
    }
}

int sonde_lines_table(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                      size_t errlen)
{
    const sonde_jval *functions = sonde_json_get(t, &t->vals[t->root], "functions");
    if (!functions || functions->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no \"functions\" list: not a sonde lines profile");
        return -1;
    }
    size_t u = 4;
    for (size_t i = 0; unit && i < 4; i++)
        if (strcmp(unit, units[i].name) == 0)
            u = i;
    if (unit && u == 4) {
        snprintf(err, errlen, "unknown unit '%s' (use s, ms, us or ns)", unit);
        return -1;
    }
    if (!unit)
        u = pick_unit(t, functions);
    sonde_buf_printf(b, "Timer unit: 1 %s\n", units[u].name);
    for (uint32_t f = 0; f < functions->len; f++)
        put_function(b, t, sonde_json_item(t, functions, f), units[u].ns);
    return 0;
}
