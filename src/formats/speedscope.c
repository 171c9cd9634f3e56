/* speedscope.c - speedscope.app's file format: one "evented" profile per
 * thread, frames shared ({"name", "file", "line"} per function).
 *
 * Each node of a thread's tree opens ("O") where its parent's earlier
 * children ended and closes ("C") its total time later; its children sit
 * one after the other from its start, its own time after them.  So the
 * file holds two events per node, whatever the depth (a list of sampled
 * stacks would repeat each stack whole: the square of the depth).  Times
 * are seconds from the thread's start. */
#include <stdlib.h>

#include "format.h"

static void put_event(sonde_buf *b, const sonde_profile *p, char type, uint32_t func,
                      uint64_t at, int *first)
{
    sonde_buf_printf(b, "%s{\"type\": \"%c\", \"frame\": %u, \"at\": ", *first ? "" : ",\n  ",
                     type, func);
    sonde_buf_num(b, (double)at * p->seconds_per_tick);
    sonde_buf_putc(b, '}');
    *first = 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* Thread t's events; the tick at which its last frame closed. */
static uint64_t put_thread(sonde_buf *b, const sonde_profile *p, const sonde_thread *t,
                           uint64_t *start)
{
    const sonde_node *nodes = p->nodes;
    uint64_t cursor = 0;
    uint32_t depth = 0, n = nodes[t->root].first_child;
    int first = 1;
    sonde_buf_puts(b, "\"events\": [\n  ");
    while (n != SONDE_NO_NODE) {
        put_event(b, p, 'O', nodes[n].func, cursor, &first);
        start[depth] = cursor;
        if (nodes[n].first_child != SONDE_NO_NODE) {
            depth++;
            n = nodes[n].first_child;
            continue;
        }
        /* Close n, then each parent whose last child it was. */
        for (;;) {
            uint64_t end = add_sat(start[depth], nodes[n].total);
            cursor = end > cursor ? end : cursor;
            put_event(b, p, 'C', nodes[n].func, cursor, &first);
            if (nodes[n].next_sibling != SONDE_NO_NODE || depth == 0)
                break;
            n = nodes[n].parent;
            depth--;
        }
        n = nodes[n].next_sibling;
    }
    sonde_buf_puts(b, "]");
    return cursor;
}

/* The file's name, which speedscope shows as its title: the command line
 * profiled, when known. */
static void put_name(sonde_buf *b, const sonde_profile *p)
{
    if (!p->about.argc) {
        sonde_buf_puts(b, "\"sonde profile\"");
        return;
    }
    sonde_buf name;
    sonde_buf_init(&name);
    sonde_about_command(&name, &p->about);
    if (!sonde_buf_ok(&name))
        b->oom = 1;
    sonde_buf_json_str(b, name.data ? name.data : "");
    sonde_buf_free(&name);
}

int sonde_speedscope_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                           const sonde_format_opts *o)
{
    (void)s;
    (void)o;
    uint64_t *start = malloc(((size_t)p->nnodes + 1) * sizeof *start);
    if (!start) {
        b->oom = 1;
        return -1;
    }
    sonde_buf_puts(b, "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
                      "\"exporter\": \"sonde\", \"name\": ");
    put_name(b, p);
    sonde_buf_puts(b, ", \"activeProfileIndex\": 0,\n\"shared\": {\"frames\": [");
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
        sonde_buf_puts(b, i ? ",\n {\"type\": \"evented\", \"name\": "
                            : "\n {\"type\": \"evented\", \"name\": ");
        sonde_buf_json_str(b, sonde_profile_str(p, t->name));
        sonde_buf_puts(b, ", \"unit\": \"seconds\", \"startValue\": 0,\n  ");
        uint64_t end = put_thread(b, p, t, start);
        sonde_buf_puts(b, ",\n  \"endValue\": ");
        sonde_buf_num(b, (double)end * p->seconds_per_tick);
        sonde_buf_putc(b, '}');
    }
    sonde_buf_puts(b, "]}\n");
    free(start);
    return sonde_buf_ok(b) ? 0 : -1;
}
