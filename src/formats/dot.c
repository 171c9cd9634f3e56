/* dot.c - the call graph as Graphviz source, as gprof2dot draws it: one
 * node per function with its share of the total time (callees included)
 * and, in brackets, its own share, and its calls; one edge per caller ->
 * callee with its calls and share; colours from blue (little) to red
 * (most).  A node's label names the file without its folders (as
 * gprof2dot names the module), its tooltip has the whole path.  Functions
 * and edges under the options' thresholds (percent of the total time) are
 * left out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/utf8.h"
#include "format.h"

/* The run's total: what the roots of the call graph took, callees
 * included (for a sampled or threaded run, the sum of its roots). */
static double total_time(const sonde_stats *s)
{
    double *roots = sonde_stats_roots(s);
    double total = 0, most = 0;
    for (uint32_t f = 0; f < s->nfuncs; f++) {
        if (!s->funcs[f].present)
            continue;
        most = fmax(most, s->funcs[f].cumtime);
        if (roots)
            total += roots[f];
    }
    free(roots);
    return total > most ? total : most;
}

/* gprof2dot's scale: hue from blue (2/3) down to red (0) as the share
 * grows, darker and more saturated the more it weighs. */
static void put_colour(sonde_buf *b, double w)
{
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    double h = (1 - w) * 2.0 / 3.0, sat = 0.8 + 0.2 * w, l = 0.6 - 0.25 * w;
    double c = (1 - fabs(2 * l - 1)) * sat, hp = h * 6, x = c * (1 - fabs(fmod(hp, 2) - 1));
    double r = 0, g = 0, bl = 0;
    if (hp < 1)
        r = c, g = x;
    else if (hp < 2)
        r = x, g = c;
    else if (hp < 3)
        g = c, bl = x;
    else if (hp < 4)
        g = x, bl = c;
    else if (hp < 5)
        r = x, bl = c;
    else
        r = c, bl = x;
    double m = l - c / 2;
    sonde_buf_printf(b, "\"#%02x%02x%02x\"", (int)lround((r + m) * 255), (int)lround((g + m) * 255),
                     (int)lround((bl + m) * 255));
}

/* s as a DOT quoted string's content (UTF-8: a byte that is not becomes
 * U+FFFD; control characters are dropped). */
static void put_quoted(sonde_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = sonde_utf8_len(p);
        if (*p == '"' || *p == '\\')
            sonde_buf_putc(b, '\\');
        if (n == 0)
            sonde_buf_puts(b, "\xef\xbf\xbd");
        else if (*p >= 0x20)
            sonde_buf_put(b, p, n);
        p += n ? n : 1;
    }
}

int sonde_dot_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                    const sonde_format_opts *o)
{
    o = sonde_format_opts_or_default(o);
    double total = total_time(s);
    if (!(total > 0))
        total = 1;
    uint8_t *shown = calloc(s->nfuncs ? s->nfuncs : 1, 1);
    if (!shown)
        return -1;
    sonde_buf_puts(b, "digraph sonde {\n  graph [fontname=Arial, nodesep=0.125, ranksep=0.25];\n"
                      "  node [fontcolor=white, fontname=Arial, height=0, shape=box, "
                      "style=filled, width=0];\n  edge [fontname=Arial];\n");
    for (uint32_t f = 0; f < s->nfuncs && f < p->nfuncs; f++) {
        const sonde_fstat *fs = &s->funcs[f];
        double share = fs->cumtime / total;
        if (!fs->present || 100 * share < o->node_thres)
            continue;
        shown[f] = 1;
        const sonde_func *fn = &p->funcs[f];
        sonde_buf_printf(b, "  f%u [color=", f);
        put_colour(b, share);
        /* the file's own name in the label, its whole path in the tooltip */
        const char *file = sonde_profile_str(p, fn->file), *slash = strrchr(file, '/');
        sonde_buf_puts(b, ", label=\"");
        put_quoted(b, sonde_profile_str(p, fn->qualname));
        sonde_buf_puts(b, "\\n");
        put_quoted(b, slash && slash[1] ? slash + 1 : file);
        sonde_buf_printf(b, ":%d\\n%.2f%%\\n(%.2f%%)", fn->line, 100 * share,
                         100 * fs->tottime / total);
        if (p->sample_rate <= 0)
            sonde_buf_printf(b, "\\n%llu\xc3\x97", (unsigned long long)fs->ncalls);
        sonde_buf_puts(b, "\", tooltip=\"");
        put_quoted(b, file);
        sonde_buf_printf(b, ":%d\"];\n", fn->line);
    }
    for (uint32_t e = 0; e < s->nedges; e++) {
        const sonde_edge *ed = &s->edges[e];
        double share = ed->cumtime / total;
        if (ed->caller >= s->nfuncs || ed->callee >= s->nfuncs || !shown[ed->caller] ||
            !shown[ed->callee] || 100 * share < o->edge_thres)
            continue;
        sonde_buf_printf(b, "  f%u -> f%u [arrowsize=%.2f, color=", ed->caller, ed->callee,
                         0.5 + 0.5 * sqrt(share));
        put_colour(b, share);
        sonde_buf_printf(b, ", fontcolor=");
        put_colour(b, share);
        sonde_buf_printf(b, ", label=\"%.2f%%", 100 * share);
        if (p->sample_rate <= 0)
            sonde_buf_printf(b, "\\n%llu\xc3\x97", (unsigned long long)ed->ncalls);
        sonde_buf_printf(b, "\", penwidth=%.2f];\n", 1 + 4 * share);
    }
    sonde_buf_puts(b, "}\n");
    free(shown);
    return sonde_buf_ok(b) ? 0 : -1;
}
