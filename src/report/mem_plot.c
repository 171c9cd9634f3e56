/* mem_plot.c - RSS and heap over time as SVG; see mem_plot.h.  Memory
 * mapped and never touched (reserved) is a dashed line of its own when it
 * reaches 2% of the most RSS or heap; past 4 times that most, it runs
 * along the top. */
#include "mem_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/doc.h"

#define W 960.0
#define X0 80.0          /* the plot area */
#define X1 940.0
#define Y0 50.0
#define Y1 380.0
#define ROW 16.0         /* one row of function spans */
#define MAX_ROWS 12      /* functions past these share the last row */
#define COLUMNS 860      /* the lines are drawn through each pixel column's peak */

static const char *const span_colours[] = { "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                            "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };

/* A round step (1, 2 or 5 times a power of ten) giving about 6 ticks. */
static double tick_step(double range)
{
    if (!(range > 0))
        return 1;
    double raw = range / 6, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

typedef struct series {
    const sonde_jval *t, *rss, *heap, *reserved; /* reserved: NULL when none */
    uint32_t n;
    double t_max, y_max; /* seconds, MiB */
} series;

static double item_num(const sonde_jtree *t, const sonde_jval *arr, uint32_t i)
{
    const sonde_jval *v = sonde_json_item(t, arr, i);
    return v->type == SONDE_J_NUM ? v->num : 0;
}

static void put_axes(sonde_buf *b, const series *s)
{
    sonde_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
                        "fill=\"#fafafa\" stroke=\"#888\"/>\n", X0, Y0, X1 - X0, Y1 - Y0);
    double step = tick_step(s->t_max);
    for (double v = 0; v <= s->t_max * 1.0001; v += step) {
        double x = X0 + (X1 - X0) * v / s->t_max;
        sonde_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
                            "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.0f\" "
                            "text-anchor=\"middle\">%g</text>\n", x, Y0, x, Y1, x, Y1 + 16, v);
    }
    step = tick_step(s->y_max);
    for (double v = 0; v <= s->y_max * 1.0001; v += step) {
        double y = Y1 - (Y1 - Y0) * v / s->y_max;
        sonde_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                            "stroke=\"#ddd\"/><text x=\"%.0f\" y=\"%.1f\" "
                            "text-anchor=\"end\">%g</text>\n", X0, y, X1, y, X0 - 6, y + 4, v);
    }
    sonde_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time (s)</text>\n"
                        "<text transform=\"translate(18 %.0f) rotate(-90)\" "
                        "text-anchor=\"middle\">memory (MiB)</text>\n",
                     (X0 + X1) / 2, Y1 + 34, (Y0 + Y1) / 2);
}

/* The series `values` (bytes) through each pixel column's largest value
 * (clipped to the top); `style`: more attributes of the line. */
static void put_line(sonde_buf *b, const sonde_jtree *t, const series *s,
                     const sonde_jval *values, const char *colour, const char *style)
{
    double *peak = malloc(COLUMNS * sizeof *peak);
    if (!peak)
        return;
    for (int c = 0; c < COLUMNS; c++)
        peak[c] = -1;
    for (uint32_t i = 0; i < s->n; i++) {
        int c = (int)sonde_num_to_int(item_num(t, s->t, i) / 1e9 / s->t_max * (COLUMNS - 1), -1,
                                      COLUMNS);
        double v = item_num(t, values, i) / (1024.0 * 1024.0);
        v = v < s->y_max ? v : s->y_max;
        if (c >= 0 && c < COLUMNS && v > peak[c])
            peak[c] = v;
    }
    sonde_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
                     colour, style);
    for (int c = 0; c < COLUMNS; c++)
        if (peak[c] >= 0)
            sonde_buf_printf(b, "%.1f,%.1f ", X0 + (X1 - X0) * c / (COLUMNS - 1),
                             Y1 - (Y1 - Y0) * peak[c] / s->y_max);
    sonde_buf_puts(b, "\"/>\n");
    free(peak);
}

/* One row per function (in the order they first ran), a bar per span,
 * the function's name over the start of its row. */
static int put_spans(sonde_buf *b, const sonde_jtree *t, const series *s, const sonde_jval *spans)
{
    const char *names[MAX_ROWS];
    int rows = 0;
    for (uint32_t i = 0; spans && spans->type == SONDE_J_ARR && i < spans->len; i++) {
        const sonde_jval *span = sonde_json_item(t, spans, i);
        const char *name = sonde_json_str(t, sonde_json_get(t, span, DOC_NAME));
        int row = 0;
        while (row < rows && strcmp(names[row], name) != 0)
            row++;
        if (row == rows && rows < MAX_ROWS)
            names[rows++] = row == MAX_ROWS - 1 ? "(others)" : name;
        if (row == rows)
            row = rows - 1;
        double x0 = X0 + (X1 - X0) * sonde_json_num(t, span, DOC_START_NS, 0) / 1e9 / s->t_max;
        double x1 = X0 + (X1 - X0) * sonde_json_num(t, span, DOC_END_NS, 0) / 1e9 / s->t_max;
        sonde_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" "
                            "fill=\"%s\" fill-opacity=\"0.5\"><title>", x0, Y1 + 48 + ROW * row,
                         x1 - x0 > 1 ? x1 - x0 : 1, ROW - 4,
                         span_colours[row % (sizeof span_colours / sizeof *span_colours)]);
        sonde_buf_xml_str(b, names[row]);
        sonde_buf_printf(b, " %.3f-%.3f s</title></rect>\n",
                         sonde_json_num(t, span, DOC_START_NS, 0) / 1e9,
                         sonde_json_num(t, span, DOC_END_NS, 0) / 1e9);
    }
    /* The names over their rows, after the bars so that they stay on top. */
    for (int row = 0; row < rows; row++) {
        sonde_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\">", X0 + 4,
                         Y1 + 58 + ROW * row);
        sonde_buf_xml_str(b, names[row]);
        sonde_buf_puts(b, "</text>\n");
    }
    return rows;
}

int sonde_mem_plot_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen)
{
    const sonde_jval *tl = sonde_json_get(t, &t->vals[t->root], DOC_TIMELINE);
    series s = { tl ? sonde_json_get(t, tl, DOC_T_NS) : NULL,
                 tl ? sonde_json_get(t, tl, DOC_RSS_BYTES) : NULL,
                 tl ? sonde_json_get(t, tl, DOC_HEAP_BYTES) : NULL,
                 tl ? sonde_json_get(t, tl, DOC_RESERVED_BYTES) : NULL, 0, 0, 0 };
    if (!s.t || !s.rss || !s.heap || s.t->type != SONDE_J_ARR || s.rss->type != SONDE_J_ARR ||
        s.heap->type != SONDE_J_ARR || s.t->len == 0 || s.rss->len != s.t->len ||
        s.heap->len != s.t->len) {
        snprintf(err, errlen, "no \"timeline\" with t_ns, rss_bytes and heap_bytes of one "
                              "length: not a sonde mem profile");
        return -1;
    }
    s.n = s.t->len;
    if (s.reserved && (s.reserved->type != SONDE_J_ARR || s.reserved->len != s.n))
        s.reserved = NULL;
    double reserved_max = 0;
    for (uint32_t i = 0; i < s.n; i++) {
        double sec = item_num(t, s.t, i) / 1e9, rss = item_num(t, s.rss, i) / (1024.0 * 1024.0),
               heap = item_num(t, s.heap, i) / (1024.0 * 1024.0),
               reserved = s.reserved ? item_num(t, s.reserved, i) / (1024.0 * 1024.0) : 0;
        s.t_max = sec > s.t_max ? sec : s.t_max;
        s.y_max = rss > s.y_max ? rss : heap > s.y_max ? heap : s.y_max;
        reserved_max = reserved > reserved_max ? reserved : reserved_max;
    }
    if (!(reserved_max > 0.02 * s.y_max))
        s.reserved = NULL;
    else if (reserved_max > s.y_max)
        s.y_max = reserved_max < 4 * s.y_max || s.y_max <= 0 ? reserved_max : 4 * s.y_max;
    s.t_max = s.t_max > 0 ? s.t_max : 1e-3;
    s.y_max = s.y_max > 0 ? s.y_max * 1.05 : 1;
    sonde_buf body;
    sonde_buf_init(&body);
    put_axes(&body, &s);
    if (s.reserved)
        put_line(&body, t, &s, s.reserved, "#7f7f7f", " stroke-dasharray=\"6 4\"");
    put_line(&body, t, &s, s.heap, "#ff7f0e", "");
    put_line(&body, t, &s, s.rss, "#1f77b4", "");
    int rows = put_spans(&body, t, &s, sonde_json_get(t, tl, DOC_SPANS));
    double height = Y1 + 56 + ROW * rows;
    sonde_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
                        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                        "<text x=\"%.0f\" y=\"24\" font-size=\"16\">Memory over time</text>\n"
                        "<line x1=\"%.0f\" y1=\"20\" x2=\"%.0f\" y2=\"20\" stroke=\"#1f77b4\" "
                        "stroke-width=\"3\"/><text x=\"%.0f\" y=\"24\">RSS</text>\n"
                        "<line x1=\"%.0f\" y1=\"38\" x2=\"%.0f\" y2=\"38\" stroke=\"#ff7f0e\" "
                        "stroke-width=\"3\"/><text x=\"%.0f\" y=\"42\">heap (followed "
                        "blocks)</text>\n",
                     W, height, W, height, X0, X1 - 170, X1 - 150, X1 - 144, X1 - 170, X1 - 150,
                     X1 - 144);
    if (s.reserved)
        sonde_buf_printf(b, "<line x1=\"%.0f\" y1=\"20\" x2=\"%.0f\" y2=\"20\" stroke=\"#7f7f7f\" "
                            "stroke-width=\"3\" stroke-dasharray=\"6 4\"/><text x=\"%.0f\" "
                            "y=\"24\">reserved (mapped, never touched)</text>\n",
                         X1 - 470, X1 - 450, X1 - 444);
    sonde_buf_put(b, body.data ? body.data : "", body.len);
    sonde_buf_puts(b, "</svg>\n");
    int ok = sonde_buf_ok(&body);
    sonde_buf_free(&body);
    if (!ok) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
