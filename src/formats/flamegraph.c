/* flamegraph.c - an interactive flame graph as one self-contained SVG.
 *
 * Frames are drawn from the merged tree (all threads, same-function
 * siblings joined whatever line they were at), root at the bottom, each as
 * wide as its total share, where flame_layout.c puts them (as sonde view
 * does).
 * Hovering shows name, file:line, value and share; clicking a frame zooms
 * to it (click the root, or press Escape, to zoom out); the Search button
 * (or Ctrl-F) highlights frames whose name matches a regular expression
 * and shows their share.  Every name is XML-escaped.  No external file,
 * font or script is referenced. */
#include <stdlib.h>
#include <string.h>

#include "../core/flame_layout.h"
#include "format.h"
#include "../core/time_tree.h"

#define WIDTH 1200.0
#define FRAME_H 16
#define PAD_TOP 34
#define MIN_WIDTH 0.5 /* pixels: narrower frames (and their callees) are left out */

/* The name cut to what fits in w pixels (about 7 per character), with
 * ".." where it was cut; nothing when not even 3 characters fit.  The
 * script does the same after a zoom. */
static void put_label(sonde_buf *b, const char *name, double w)
{
    double room = (w - 6) / 7; /* characters; a frame of a malformed file may be very wide */
    size_t len = strlen(name);
    if (!(room >= 3))
        return;
    if (room >= (double)len) {
        sonde_buf_xml_str(b, name);
        return;
    }
    char cut[512];
    size_t fits = (size_t)room; /* below len, so it fits a size_t */
    size_t keep = fits - 2 < sizeof cut - 1 ? fits - 2 : sizeof cut - 1;
    while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
        keep--; /* never split a UTF-8 sequence */
    memcpy(cut, name, keep);
    cut[keep] = '\0';
    sonde_buf_xml_str(b, cut);
    sonde_buf_puts(b, "..");
}

static void put_value(sonde_buf *b, const sonde_profile *p, double seconds)
{
    if (p->sample_rate > 0)
        sonde_buf_printf(b, "%.0f samples", seconds * p->sample_rate);
    else
        sonde_buf_printf(b, "%.6f s", seconds);
}

static void put_frame(sonde_buf *b, const sonde_profile *p, const sonde_time_tree *t, uint32_t n,
                      double x, double w, uint32_t depth, double height)
{
    const sonde_func *f = &p->funcs[t->nodes[n].func];
    const char *name = sonde_profile_str(p, f->qualname);
    int r, g, bl;
    sonde_flame_colour(name, f->kind, &r, &g, &bl);
    double y = height - (depth + 1) * FRAME_H;
    sonde_buf_printf(b, "<g class=\"f\" data-x=\"%.3f\" data-w=\"%.3f\" data-n=\"", x, w);
    sonde_buf_xml_str(b, name);
    sonde_buf_puts(b, "\"><title>");
    sonde_buf_xml_str(b, name);
    sonde_buf_puts(b, " (");
    sonde_buf_xml_str(b, sonde_profile_str(p, f->file));
    sonde_buf_printf(b, ":%d): ", f->line);
    put_value(b, p, t->nodes[n].total);
    sonde_buf_printf(b, ", %.2f%%</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
                     "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
                     t->nodes[0].total > 0 ? 100.0 * t->nodes[n].total / t->nodes[0].total : 0.0, x, y, w,
                     FRAME_H - 1, r, g, bl, x + 3, y + 11.5);
    put_label(b, name, w);
    sonde_buf_puts(b, "</text></g>\n");
}

static const char script[] =
    "<script><![CDATA[\n"
    "const W=1200,frames=[...document.querySelectorAll('g.f')];\n"
    "const info=document.getElementById('info');\n"
    "function fit(g){const r=g.querySelector('rect'),t=g.querySelector('text');\n"
    " const w=+r.getAttribute('width'),name=g.dataset.n||'all';\n"
    " const n=Math.floor((w-6)/7);t.textContent=n<3?'':name.length<=n?name:name.slice(0,n-2)+'..';}\n"
    "function zoom(g){const x0=+g.dataset.x,w0=+g.dataset.w,y0=+g.querySelector('rect').getAttribute('y');\n"
    " for(const f of frames){const x=+f.dataset.x,w=+f.dataset.w,r=f.querySelector('rect');\n"
    "  const inside=x>=x0-1e-6&&x+w<=x0+w0+1e-6,below=+r.getAttribute('y')>=y0;\n"
    "  const show=inside||(below&&x<=x0+1e-6&&x+w>=x0+w0-1e-6);f.style.display=show?'':'none';\n"
    "  if(!show)continue;const nx=inside?(x-x0)*W/w0:0,nw=inside?w*W/w0:W;\n"
    "  r.setAttribute('x',nx);r.setAttribute('width',nw);f.querySelector('text').setAttribute('x',nx+3);fit(f);}}\n"
    "function reset(){zoom(frames[0]);}\n"
    "function search(){const re=prompt('Search (regular expression)');if(re===null)return;let hit=0,rx;\n"
    " try{rx=new RegExp(re);}catch(e){info.textContent='bad expression';return;}\n"
    " const spans=[];for(const f of frames){const r=f.querySelector('rect');\n"
    "  const m=re!==''&&f.dataset.n!==undefined&&rx.test(f.dataset.n);\n"
    "  r.style.fill=m?'rgb(230,0,230)':'';if(m)spans.push([+f.dataset.x,+f.dataset.x+ +f.dataset.w]);}\n"
    " spans.sort((a,b)=>a[0]-b[0]);let end=-1;for(const [a,b] of spans){if(a>=end){hit+=b-a;end=b;}else if(b>end){hit+=b-end;end=b;}}\n"
    " info.textContent=re===''?'':'matched '+(100*hit/W).toFixed(2)+'%';}\n"
    "for(const f of frames)f.addEventListener('click',()=>zoom(f));\n"
    "document.getElementById('search').addEventListener('click',search);\n"
    "document.addEventListener('keydown',e=>{if(e.key==='Escape')reset();\n"
    " if((e.ctrlKey||e.metaKey)&&e.key==='f'){e.preventDefault();search();}});\n"
    "/* A graph taller than the window opens at its foot: the root and the widest frames. */\n"
    "scrollTo(0,1e9);\n"
    "]]></script>\n";

int sonde_flamegraph_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o)
{
    (void)s;
    (void)o;
    sonde_time_tree t;
    sonde_flame_layout l = { .x = NULL, .depth = NULL };
    if (sonde_time_tree_from_profile(&t, p) < 0 || sonde_flame_layout_compute(&l, &t, p) < 0) {
        sonde_time_tree_free(&t);
        b->oom = 1;
        return -1;
    }
    double total = t.nodes[0].total;
    double scale = total > 0 ? WIDTH / total : 0;
    /* The height follows the deepest frame wide enough to be drawn. */
    uint32_t deepest = 0;
    for (uint32_t n = 1; n < t.n; n++)
        if (l.depth[n] > deepest && t.nodes[n].total * scale >= MIN_WIDTH)
            deepest = l.depth[n];
    double height = (deepest + 1) * FRAME_H + PAD_TOP;
    sonde_buf_printf(b, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                     "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                     "xmlns=\"http://www.w3.org/2000/svg\">\n", WIDTH, height, WIDTH, height);
    sonde_buf_puts(b, "<style>text{font:12px monospace;fill:#000;pointer-events:none}"
                      "g.f:hover rect{stroke:#000;stroke-width:.6}g.f{cursor:pointer}"
                      "#search{cursor:pointer}</style>\n"
                      "<rect width=\"100%\" height=\"100%\" fill=\"#fdfdf6\"/>\n"
                      "<text x=\"600\" y=\"18\" text-anchor=\"middle\" style=\"font-size:15px\">"
                      "sonde flame graph</text>\n"
                      "<text id=\"search\" x=\"1180\" y=\"18\" text-anchor=\"end\" "
                      "style=\"pointer-events:all\">Search</text>\n"
                      "<text id=\"info\" x=\"10\" y=\"18\"></text>\n");
    /* A root frame spanning everything: clicking it zooms back out. */
    sonde_buf_printf(b, "<g class=\"f\" data-x=\"0\" data-w=\"%.0f\"><title>all: ", WIDTH);
    put_value(b, p, total);
    sonde_buf_printf(b, "</title><rect x=\"0\" y=\"%.0f\" width=\"%.0f\" height=\"%d\" "
                     "fill=\"rgb(220,220,220)\" rx=\"2\"/><text x=\"3\" y=\"%.0f\">all</text></g>\n",
                     height - FRAME_H, WIDTH, FRAME_H - 1, height - FRAME_H + 11.5);
    for (uint32_t n = 1; n < t.n; n++) {
        double w = t.nodes[n].total * scale;
        if (w >= MIN_WIDTH && t.nodes[n].func >= 0)
            put_frame(b, p, &t, n, l.x[n] * scale, w, l.depth[n], height);
    }
    sonde_buf_puts(b, script);
    sonde_buf_puts(b, "</svg>\n");
    sonde_flame_layout_free(&l);
    sonde_time_tree_free(&t);
    return sonde_buf_ok(b) ? 0 : -1;
}
