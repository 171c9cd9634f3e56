/* lines_table.c - line_profiler's table; see lines_table.h. */
#include "lines_table.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/doc.h"

static const struct {
    const char *name;
    double ns;
} units[] = { { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1.0 } };

#define NUNITS (sizeof units / sizeof units[0])

int sonde_lines_unit_parse(const char *unit, double *ns, char *label, size_t labellen)
{
    for (size_t i = 0; i < NUNITS; i++)
        if (strcmp(unit, units[i].name) == 0) {
            *ns = units[i].ns;
            snprintf(label, labellen, "1 %s", units[i].name);
            return 0;
        }
    char *end;
    double seconds = strtod(unit, &end);
    if (end == unit || *end || !(seconds >= 1e-12 && seconds <= 1e6))
        return -1;
    *ns = seconds * 1e9;
    snprintf(label, labellen, "%g s", seconds); /* kernprof's "Timer unit: 1e-06 s" */
    return 0;
}

/* ns with three significant digits in the largest unit where it is at
 * least 1 ("1.23 ms", "456 us", "7.00 ns"). */
static void three_digits(double ns, char *out, size_t outlen)
{
    size_t u = NUNITS - 1;
    for (size_t i = 0; i < NUNITS - 1 && u == NUNITS - 1; i++)
        if (ns >= units[i].ns)
            u = i;
    double v = ns / units[u].ns;
    if (v >= 999.5 && u > 0) /* would round to 1000: the next unit up */
        v = ns / units[--u].ns;
    const char *fmt = v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s";
    snprintf(out, outlen, fmt, v, units[u].name);
}

/* ns in the table's unit (scale ns each), or with its own unit when scale
 * is 0.  In one unit, a time that one decimal would show as 0.0 keeps
 * three significant digits. */
static void put_time(double ns, double scale, char *out, size_t outlen)
{
    if (scale == 0) {
        three_digits(ns, out, outlen);
        return;
    }
    double v = ns / scale;
    snprintf(out, outlen, v > 0 && v < 0.05 ? "%.3g" : "%.1f", v);
}

/* One row of figures: hits, with iters its iterations column (NULL: the
 * function has none), time, time per hit, share of the total. */
static void put_figures(sonde_buf *b, double hits, const double *iters, double ns,
                        double total, double scale)
{
    char time[32], per_hit[32] = "";
    put_time(ns, scale, time, sizeof time);
    if (hits > 0)
        put_time(ns / hits, scale, per_hit, sizeof per_hit);
    sonde_buf_printf(b, "%10.0f ", hits);
    if (iters && *iters > 0)
        sonde_buf_printf(b, "%10.0f ", *iters);
    else if (iters)
        sonde_buf_printf(b, "%10s ", "");
    sonde_buf_printf(b, "%12s %10s %8.1f", time, per_hit, total ? 100.0 * ns / total : 0.0);
}

static void put_function(sonde_buf *b, const sonde_jtree *t, const sonde_jval *fn, double scale)
{
    const sonde_jval *lines = sonde_json_get(t, fn, DOC_LINES);
    const sonde_jval *instrs = sonde_json_get(t, fn, DOC_INSTRUCTIONS);
    double total = sonde_json_num(t, fn, DOC_TOTAL_NS, 0);
    int ran = 0, looped = 0;
    for (uint32_t i = 0; lines && i < lines->len; i++) {
        const sonde_jval *l = sonde_json_item(t, lines, i);
        ran |= sonde_json_num(t, l, DOC_HITS, 0) > 0;
        looped |= sonde_json_num(t, l, DOC_ITERATIONS, 0) > 0;
    }
    if (!ran)
        return;
    sonde_buf_printf(b, "\nTotal time: %.6g s\nFile: ", total / 1e9);
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, fn, DOC_FILE)));
    sonde_buf_puts(b, "\nFunction: ");
    sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, fn, DOC_NAME)));
    sonde_buf_printf(b, " at line %d\n\n",
                     (int)sonde_num_to_int(sonde_json_num(t, fn, DOC_FIRST_LINE, 0), INT_MIN,
                                           INT_MAX));
    /* Iterations get a column of their own where the function has any, so
     * that Per Hit stays the line's time over the times it began. */
    char header[128];
    snprintf(header, sizeof header, "%6s %10s %s%12s %10s %8s  %s", "Line #", "Hits",
             looped ? "     Iters " : "", "Time", "Per Hit", "% Time", "Line Contents");
    sonde_buf_underlined(b, header);
    for (uint32_t i = 0; i < lines->len; i++) {
        const sonde_jval *l = sonde_json_item(t, lines, i);
        double line = sonde_json_num(t, l, DOC_LINE, 0), hits = sonde_json_num(t, l, DOC_HITS, 0);
        double iters = sonde_json_num(t, l, DOC_ITERATIONS, 0);
        int at = (int)sonde_num_to_int(line, INT_MIN, INT_MAX);
        sonde_buf_printf(b, "%6d ", at);
        if (hits > 0 || iters > 0)
            put_figures(b, hits, looped ? &iters : NULL, sonde_json_num(t, l, DOC_TIME_NS, 0),
                        total, scale);
        else
            sonde_buf_printf(b, "%10s %s%12s %10s %8s", "", looped ? "           " : "", "", "",
                             "");
        sonde_buf_puts(b, "  ");
        sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, l, DOC_SOURCE)));
        sonde_buf_putc(b, '\n');
        for (uint32_t k = 0; instrs && k < instrs->len; k++) {
            const sonde_jval *in = sonde_json_item(t, instrs, k);
            double ih = sonde_json_num(t, in, DOC_HITS, 0);
            if (sonde_json_num(t, in, DOC_LINE, -1) != line || ih <= 0)
                continue;
            sonde_buf_printf(b, "%6s ", "");
            double no_iters = 0;
            put_figures(b, ih, looped ? &no_iters : NULL, sonde_json_num(t, in, DOC_TIME_NS, 0),
                        total, scale);
            sonde_buf_printf(b, "      %4d ",
                             (int)sonde_num_to_int(sonde_json_num(t, in, DOC_OFFSET, 0), INT_MIN,
                                                   INT_MAX));
            sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, in, DOC_OPNAME)));
            sonde_buf_putc(b, ' ');
            sonde_buf_text_str(b, sonde_json_str(t, sonde_json_get(t, in, DOC_ARG)));
            sonde_buf_putc(b, '\n');
        }
    }
}

int sonde_lines_table_write(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                      size_t errlen)
{
    const sonde_jval *functions = sonde_json_get(t, &t->vals[t->root], DOC_FUNCTIONS);
    if (!functions || functions->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no \"functions\" list: not a sonde lines profile");
        return -1;
    }
    double scale = 0;
    char label[64];
    if (unit && sonde_lines_unit_parse(unit, &scale, label, sizeof label) < 0) {
        snprintf(err, errlen, "unknown unit '%s' (use s, ms, us, ns or a number of seconds "
                 "such as 1e-6)", unit);
        return -1;
    }
    if (unit)
        sonde_buf_printf(b, "Timer unit: %s\n", label);
    else
        sonde_buf_puts(b, "Timer unit: each time in its own (s, ms, us, ns), to 3 significant "
                       "digits\n");
    for (uint32_t f = 0; f < functions->len; f++)
        put_function(b, t, sonde_json_item(t, functions, f), scale);
    return 0;
}
