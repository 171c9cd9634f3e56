/* pprof_mem.c - a sonde mem document as a pprof heap profile; see pprof.h.
 *
 * Sample types alloc_space/bytes and inuse_space/bytes (inuse_space
 * shown first, as Go's heap profiles do), period space/bytes = the
 * document's sample_bytes (0: every block was followed):
 *   - alloc_space: each line's Allocated (alloc_bytes), as a sample of
 *     that one line.  The document keeps no stack per allocation, and a
 *     line's figure includes what its callees allocated (as the table
 *     shows it), so bytes a profiled function allocates for a profiled
 *     caller count on both lines;
 *   - inuse_space: each stack of the leaks (bytes still alive at the end:
 *     the table's "Still alive" list), frames leaf first; an empty stack
 *     is the one frame "(outside the profiled functions)".  Reserved
 *     memory (mapped, never touched) is not in use and is left out.
 * The document counts bytes, not blocks, so there are no alloc_objects
 * or inuse_objects types.  Functions are named by their file and
 * qualified name, with their first line where the document lists them. */
#include "pprof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_build.h"

enum { ALLOC_SPACE, INUSE_SPACE, NTYPES };

typedef struct mem_writer {
    const sonde_jtree *t;
    sonde_pprof_build out;
    sonde_strtab names;     /* files and names seen, for the key below */
    sonde_u64map functions; /* file id << 32 | name id -> pprof Function id */
} mem_writer;

static uint64_t bytes_of(const sonde_jtree *t, const sonde_jval *obj, const char *key)
{
    return (uint64_t)sonde_num_to_int(round(sonde_json_num(t, obj, key, 0)), 0, INT64_MAX);
}

/* The Function for (file, name), made with this first line when new. */
static uint64_t function_for(mem_writer *m, const char *file, const char *name,
                             int64_t first_line)
{
    int64_t f = sonde_strtab_intern_cstr(&m->names, file);
    int64_t n = sonde_strtab_intern_cstr(&m->names, name);
    uint32_t *slot = f < 0 || n < 0 ? NULL
                     : sonde_u64map_slot(&m->functions, (uint64_t)f << 32 | (uint64_t)n, 0);
    if (!slot) {
        m->out.failed = 1;
        return 0;
    }
    if (*slot == 0)
        *slot = (uint32_t)sonde_pprof_function(&m->out, name, name, file, first_line);
    return *slot;
}

static int64_t line_of(const sonde_jtree *t, const sonde_jval *obj, const char *key)
{
    return sonde_num_to_int(sonde_json_num(t, obj, key, 0), INT32_MIN, INT32_MAX);
}

static void put_allocated(mem_writer *m, const sonde_jval *functions)
{
    const sonde_jtree *t = m->t;
    for (uint32_t i = 0; i < functions->len && !m->out.failed; i++) {
        const sonde_jval *fn = sonde_json_item(t, functions, i);
        const sonde_jval *lines = sonde_json_get(t, fn, "lines");
        uint64_t id = function_for(m, sonde_json_str(t, sonde_json_get(t, fn, "file")),
                                   sonde_json_str(t, sonde_json_get(t, fn, "name")),
                                   line_of(t, fn, "first_line"));
        for (uint32_t k = 0; lines && lines->type == SONDE_J_ARR && k < lines->len; k++) {
            const sonde_jval *l = sonde_json_item(t, lines, k);
            uint64_t values[NTYPES] = { bytes_of(t, l, "alloc_bytes"), 0 };
            if (values[ALLOC_SPACE] == 0)
                continue;
            uint64_t loc = sonde_pprof_line_location(&m->out, id, line_of(t, l, "line"));
            sonde_pprof_sample(&m->out, &loc, 1, values, NULL, 0);
        }
    }
}

static void put_leaks(mem_writer *m, const sonde_jval *leaks)
{
    const sonde_jtree *t = m->t;
    uint64_t *path = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; leaks && leaks->type == SONDE_J_ARR && i < leaks->len; i++) {
        const sonde_jval *leak = sonde_json_item(t, leaks, i);
        const sonde_jval *stack = sonde_json_get(t, leak, "stack");
        uint32_t depth = stack && stack->type == SONDE_J_ARR ? stack->len : 0;
        if (depth + (size_t)1 > cap) {
            uint64_t *more = realloc(path, (depth + (size_t)1) * sizeof *path);
            if (!more) {
                m->out.failed = 1;
                break;
            }
            path = more;
            cap = depth + (size_t)1;
        }
        for (uint32_t k = 0; k < depth; k++) { /* outermost first in the document */
            const sonde_jval *fr = sonde_json_item(t, stack, k);
            uint64_t id = function_for(m, sonde_json_str(t, sonde_json_get(t, fr, "file")),
                                       sonde_json_str(t, sonde_json_get(t, fr, "name")), 0);
            path[depth - 1 - k] = sonde_pprof_line_location(&m->out, id, line_of(t, fr, "line"));
        }
        if (depth == 0)
            path[depth++] = sonde_pprof_line_location(
                &m->out, function_for(m, "", "(outside the profiled functions)", 0), 0);
        uint64_t values[NTYPES] = { 0, bytes_of(t, leak, "bytes") };
        sonde_pprof_sample(&m->out, path, depth, values, NULL, 0);
    }
    free(path);
}

int sonde_pprof_mem_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen)
{
    const sonde_jval *root = &t->vals[t->root];
    const sonde_jval *functions = sonde_json_get(t, root, "functions");
    if (strcmp(sonde_json_str(t, sonde_json_get(t, root, "mode")), "mem") != 0 || !functions ||
        functions->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no \"functions\" list: not a sonde mem profile");
        return -1;
    }
    static const sonde_pprof_type types[NTYPES] = { { "alloc_space", "bytes" },
                                                    { "inuse_space", "bytes" } };
    static const sonde_pprof_type space = { "space", "bytes" };
    mem_writer m = { .t = t };
    sonde_strtab_init(&m.names);
    sonde_u64map_init(&m.functions);
    if (sonde_pprof_build_init(&m.out, b, types, NTYPES, space,
                               (int64_t)bytes_of(t, root, "sample_bytes"), "inuse_space") == 0) {
        /* the functions first, so that each has its first line */
        put_allocated(&m, functions);
        put_leaks(&m, sonde_json_get(t, root, "leaks"));
    }
    int rc = sonde_pprof_build_finish(&m.out);
    sonde_strtab_free(&m.names);
    sonde_u64map_free(&m.functions);
    if (rc < 0)
        snprintf(err, errlen, "%s", b->write_errno ? "cannot write it" : "out of memory");
    return rc;
}
