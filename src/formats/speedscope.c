/* speedscope.c - speedscope.app's file format: one "sampled" profile per
 * thread, each distinct call path a sample weighted by its self time in
 * seconds.  Frames are shared: {"name", "file", "line"} per function. */
#include <stdlib.h>

#include "format.h"

/* Writes thread t's paths: samples (stacks of frame ids) then weights. */
static void put_thread(sonde_buf *b, const sonde_profile *p, const sonde_thread *t,
                       uint32_t *path)
{
    const sonde_node *nodes = p->nodes;
    for (int pass = 0; pass < 2; pass++) {
        sonde_buf_puts(b, pass == 0 ? "\"samples\": [" : "], \"weights\": [");
        int first = 1;
        uint32_t depth = 0, n = nodes[t->root].first_child;
        while (n != SONDE_NO_NODE) {
            path[depth] = nodes[n].func;
            if (nodes[n].self > 0) {
                sonde_buf_puts(b, first ? "" : ", ");
                first = 0;
                if (pass == 0) {
                    sonde_buf_putc(b, '[');
                    for (uint32_t i = 0; i <= depth; i++)
                        sonde_buf_printf(b, i ? ",%u" : "%u", path[i]);
                    sonde_buf_putc(b, ']');
                } else {
                    sonde_buf_printf(b, "%.9g", (double)nodes[n].self * p->seconds_per_tick);
                }
            }
            if (nodes[n].first_child != SONDE_NO_NODE) {
                depth++;
                n = nodes[n].first_child;
                continue;
            }
            while (n != t->root && nodes[n].next_sibling == SONDE_NO_NODE) {
                n = nodes[n].parent;
                if (n != t->root)
                    depth--;
            }
            n = n == t->root ? SONDE_NO_NODE : nodes[n].next_sibling;
        }
    }
    sonde_buf_puts(b, "]");
}

static double thread_seconds(const sonde_profile *p, const sonde_thread *t)
{
    double s = 0;
    for (uint32_t c = p->nodes[t->root].first_child; c != SONDE_NO_NODE;
         c = p->nodes[c].next_sibling)
        s += (double)p->nodes[c].total * p->seconds_per_tick;
    return s;
}

int sonde_write_speedscope(sonde_buf *b, const sonde_profile *p, const sonde_stats *s)
{
    (void)s;
    uint32_t *path = malloc(((size_t)p->nnodes + 1) * sizeof *path);
    if (!path) {
        b->oom = 1;
        return -1;
    }
    sonde_buf_puts(b, "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
                      "\"exporter\": \"sonde\", \"name\": \"sonde profile\", "
                      "\"activeProfileIndex\": 0,\n\"shared\": {\"frames\": [");
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        const sonde_func *f = &p->funcs[i];
        sonde_buf_puts(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->qualname));
        sonde_buf_puts(b, ", \"file\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, f->file));
        sonde_buf_printf(b, ", \"line\": %d}", f->line);
    }
    sonde_buf_puts(b, "]},\n\"profiles\": [");
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const sonde_thread *t = &p->threads[i];
        sonde_buf_puts(b, i ? ",\n {\"type\": \"sampled\", \"name\": "
                            : "\n {\"type\": \"sampled\", \"name\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, t->name));
        sonde_buf_printf(b, ", \"unit\": \"seconds\", \"startValue\": 0, \"endValue\": %.9g,\n  ",
                         thread_seconds(p, t));
        put_thread(b, p, t, path);
        sonde_buf_putc(b, '}');
    }
    sonde_buf_puts(b, "]}\n");
    free(path);
    return sonde_buf_ok(b) ? 0 : -1;
}
