/* collapsed.c - collapsed stacks: "root;...;leaf COUNT" per distinct stack.
 *
 * Frames are "NAME (FILE:LINE)" with the qualified name; semicolons inside
 * a name would split a frame, so they are written as ':' (names and file
 * names are terminal text: sonde_buf_text_str).  LINE is the line a
 * sampled frame was at, else the function's first line.  The count is the
 * stack's samples in a sampled profile; in a deterministic one its self
 * time in whole microseconds (stacks under one are left out), and stacks
 * counting less than the options' min_count are left out too.
 *
 * Each line repeats its whole stack, so the output grows with the square
 * of the depth: its size is worked out first, and past
 * SONDE_COLLAPSED_MAX_BYTES the writer refuses (b->why) instead of filling
 * the disk.  Frames are rendered once each; the lines then go straight to
 * the buffer, which may stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "../core/short_path.h"

#define SONDE_COLLAPSED_MAX_BYTES (1ull << 30)

typedef struct frames {
    sonde_buf text;      /* every node's frame, back to back */
    size_t *at;          /* node -> its frame's start in text; at[n + 1] its end */
} frames;

static void put_frame(sonde_buf *b, const sonde_profile *p, const sonde_node *n,
                      const sonde_format_opts *o)
{
    const sonde_func *f = &p->funcs[n->func];
    size_t start = b->len;
    sonde_buf_text_str(b, sonde_profile_str(p, f->qualname));
    for (size_t i = start; i < b->len; i++)
        if (b->data[i] == ';')
            b->data[i] = ':';
    const char *file = sonde_profile_str(p, f->file);
    sonde_buf_puts(b, " (");
    sonde_buf_text_str(b, o->short_paths ? sonde_short_path(file, o->cwd) : file);
    sonde_buf_printf(b, ":%d)", n->line ? n->line : f->line);
}

/* Renders the frame of every node but the root (1) and the placeholder. */
static int render_frames(frames *fr, const sonde_profile *p, const sonde_node *nodes,
                         uint32_t count, const sonde_format_opts *o)
{
    fr->at = calloc((size_t)count + 1, sizeof *fr->at);
    if (!fr->at)
        return -1;
    for (uint32_t n = 2; n < count; n++) {
        fr->at[n] = fr->text.len;
        put_frame(&fr->text, p, &nodes[n], o);
    }
    fr->at[count] = fr->text.len;
    return sonde_buf_ok(&fr->text) ? 0 : -1;
}

/* A stack's count: samples when sampled (ticks are samples, or with
 * record --mode cpu CPU nanoseconds, counted here in sampling periods),
 * else microseconds. */
static uint64_t weight_of(const sonde_profile *p, const sonde_node *n)
{
    if (p->sample_rate > 0)
        return sonde_profile_ticks_in(p, n->self, 1 / p->sample_rate);
    return sonde_profile_ticks_in(p, n->self, 1e-6);
}

static size_t digits(uint64_t v)
{
    size_t d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* Walks the tree in pre-order: with line == NULL adds up the bytes the
 * output takes (and the deepest stack) and writes nothing; else writes
 * every line to b.  path[d] is the length of the line's first d frames. */
static uint64_t walk(const sonde_profile *p, const sonde_node *nodes, const frames *fr,
                     size_t *path, uint64_t min_count, sonde_buf *b, sonde_buf *line,
                     uint32_t *deepest)
{
    const uint32_t root = 1;
    uint64_t bytes = 0;
    uint32_t n = nodes[root].first_child, depth = 0;
    path[0] = 0;
    while (n != SONDE_NO_NODE) {
        size_t frame = fr->at[n + 1] - fr->at[n];
        size_t len = path[depth] + (depth > 0) + frame;
        if (line) {
            line->len = path[depth];
            if (depth > 0)
                sonde_buf_putc(line, ';');
            sonde_buf_put(line, fr->text.data + fr->at[n], frame);
        }
        uint64_t weight = weight_of(p, &nodes[n]);
        if (weight > 0 && weight >= min_count) {
            bytes += len + 1 + digits(weight) + 1;
            if (line) {
                sonde_buf_put(b, line->data, line->len);
                sonde_buf_printf(b, " %llu\n", (unsigned long long)weight);
            }
        }
        if (depth + 1 > *deepest)
            *deepest = depth + 1;
        if (nodes[n].first_child != SONDE_NO_NODE) {
            path[++depth] = len;
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
    return bytes;
}

int sonde_collapsed_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_format_opts *o)
{
    (void)s;
    o = sonde_format_opts_or_default(o);
    sonde_node *nodes;
    uint32_t count;
    if (sonde_profile_merged_tree(p, 1, &nodes, &count) < 0) {
        b->oom = 1;
        return -1;
    }
    frames fr;
    sonde_buf_init(&fr.text);
    fr.at = NULL;
    size_t *path = malloc(((size_t)count + 1) * sizeof *path);
    sonde_buf line;
    sonde_buf_init(&line);
    int rc = -1;
    if (!path || render_frames(&fr, p, nodes, count, o) < 0) {
        b->oom = 1;
        goto out;
    }
    uint32_t deepest = 0;
    uint64_t bytes = walk(p, nodes, &fr, path, o->min_count, NULL, NULL, &deepest);
    if (bytes > SONDE_COLLAPSED_MAX_BYTES) {
        snprintf(b->why, sizeof b->why,
                 "the collapsed stacks would take %.1f GB (each line repeats its stack, and the "
                 "deepest has %u frames): leave out small stacks with --min-count, or use "
                 "-f speedscope or json, which grow with the tree, not with its depth",
                 (double)bytes / 1e9, deepest);
        goto out;
    }
    walk(p, nodes, &fr, path, o->min_count, b, &line, &deepest);
    if (!sonde_buf_ok(&line))
        b->oom = 1;
    rc = sonde_buf_ok(b) ? 0 : -1;
out:
    sonde_buf_free(&fr.text);
    free(fr.at);
    sonde_buf_free(&line);
    free(path);
    free(nodes);
    return rc;
}
