/* collapsed.c - collapsed stacks: "root;...;leaf COUNT" per distinct stack.
 *
 * Frames are "NAME (FILE:LINE)" with the qualified name; semicolons inside
 * a name would split a frame, so they are written as ':'.  LINE is the
 * line a sampled frame was at, else the function's first line.  The count
 * is the stack's samples in a sampled profile; in a deterministic one its
 * self time in whole microseconds (stacks under one are left out). */
#include <stdlib.h>
#include <string.h>

#include "format.h"

static void put_frame(sonde_buf *b, const sonde_profile *p, const sonde_node *n)
{
    const sonde_func *f = &p->funcs[n->func];
    for (const char *c = sonde_profile_str(p, f->qualname); *c; c++)
        sonde_buf_putc(b, *c == ';' ? ':' : *c);
    sonde_buf_printf(b, " (%s:%d)", sonde_profile_str(p, f->file), n->line ? n->line : f->line);
}

int sonde_write_collapsed(sonde_buf *b, const sonde_profile *p, const sonde_stats *s)
{
    (void)s;
    sonde_node *nodes;
    uint32_t count;
    if (sonde_profile_merged_tree(p, 1, &nodes, &count) < 0) {
        b->oom = 1;
        return -1;
    }
    /* Pre-order walk; path[d] = length of the line prefix at depth d. */
    size_t *path = malloc(((size_t)count + 1) * sizeof *path);
    sonde_buf line;
    sonde_buf_init(&line);
    if (!path) {
        free(nodes);
        b->oom = 1;
        return -1;
    }
    const uint32_t root = 1;
    uint32_t n = nodes[root].first_child, depth = 0;
    path[0] = 0;
    while (n != SONDE_NO_NODE) {
        line.len = path[depth];
        if (depth > 0)
            sonde_buf_putc(&line, ';');
        put_frame(&line, p, &nodes[n]);
        uint64_t weight = p->sample_rate > 0
                             ? nodes[n].self
                             : (uint64_t)((double)nodes[n].self * p->seconds_per_tick * 1e6 + 0.5);
        if (weight > 0) {
            sonde_buf_put(b, line.data, line.len);
            sonde_buf_printf(b, " %llu\n", (unsigned long long)weight);
        }
        if (nodes[n].first_child != SONDE_NO_NODE) {
            path[++depth] = line.len;
            n = nodes[n].first_child;
            continue;
        }
        while (n != root && nodes[n].next_sibling == SONDE_NO_NODE) {
            n = nodes[n].parent;
            if (n != root)
                depth--;
        }
        n = n == root ? SONDE_NO_NODE : nodes[n].next_sibling;
    }
    int oom = !sonde_buf_ok(&line);
    sonde_buf_free(&line);
    free(path);
    free(nodes);
    if (oom)
        b->oom = 1;
    return sonde_buf_ok(b) ? 0 : -1;
}
