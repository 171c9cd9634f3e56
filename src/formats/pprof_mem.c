/* pprof_mem.c - a sonde mem document as a pprof heap profile; see pprof.h.
 *
 * Sample types as Go's heap profiles have them, inuse_space shown first:
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes; period space/bytes = the document's sample_bytes
 * (0: every block was followed).
 *   - alloc_*: each stack of the document's "allocations" (what was
 *     allocated there in all, released or not), frames leaf first;
 *   - inuse_*: each stack of its "leaks" (what is still alive at the end:
 *     the table's "Still alive" list); an empty stack is the one frame
 *     "(outside the profiled functions)".  Reserved memory (mapped, never
 *     touched) is not in use and is left out.
 * Objects are the allocations the sampled blocks stand for (a block of
 * size s sampled with weight w counts w / s).  Functions are named by
 * their file and qualified name, with their first line where the
 * document lists them. */
#include "pprof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "doc.h"
#include "pprof_build.h"

enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE, NTYPES };

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

/* Every function the document lists, with its first line, made first. */
static void put_functions(mem_writer *m, const sonde_jval *functions)
{
    const sonde_jtree *t = m->t;
    for (uint32_t i = 0; i < functions->len && !m->out.failed; i++) {
        const sonde_jval *fn = sonde_json_item(t, functions, i);
        function_for(m, sonde_json_str(t, sonde_json_get(t, fn, DOC_FILE)),
                     sonde_json_str(t, sonde_json_get(t, fn, DOC_NAME)),
                     line_of(t, fn, DOC_FIRST_LINE));
    }
}

/* Each stack of list (the document's leaks or allocations) as a sample of
 * its bytes and objects, at value index `space` and `space - 1`. */
static void put_stacks(mem_writer *m, const sonde_jval *list, int space)
{
    const sonde_jtree *t = m->t;
    uint64_t *path = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; list && list->type == SONDE_J_ARR && i < list->len; i++) {
        const sonde_jval *item = sonde_json_item(t, list, i);
        const sonde_jval *stack = sonde_json_get(t, item, DOC_STACK);
        uint32_t depth = stack && stack->type == SONDE_J_ARR ? stack->len : 0;
        uint64_t *more = sonde_grow(path, &cap, (size_t)depth + 1, sizeof *path, SIZE_MAX);
        if (!more) {
            m->out.failed = 1;
            break;
        }
        path = more;
        for (uint32_t k = 0; k < depth; k++) { /* outermost first in the document */
            const sonde_jval *fr = sonde_json_item(t, stack, k);
            uint64_t id = function_for(m, sonde_json_str(t, sonde_json_get(t, fr, DOC_FILE)),
                                       sonde_json_str(t, sonde_json_get(t, fr, DOC_NAME)), 0);
            path[depth - 1 - k] = sonde_pprof_line_location(&m->out, id, line_of(t, fr, DOC_LINE));
        }
        if (depth == 0)
            path[depth++] = sonde_pprof_line_location(
                &m->out, function_for(m, "", "(outside the profiled functions)", 0), 0);
        uint64_t values[NTYPES] = { 0 };
        values[space] = bytes_of(t, item, DOC_BYTES);
        values[space - 1] = bytes_of(t, item, DOC_OBJECTS);
        sonde_pprof_sample(&m->out, path, depth, values, NULL, 0);
    }
    free(path);
}

int sonde_pprof_mem_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen)
{
    const sonde_jval *root = &t->vals[t->root];
    const sonde_jval *functions = sonde_json_get(t, root, DOC_FUNCTIONS);
    if (strcmp(sonde_json_str(t, sonde_json_get(t, root, DOC_MODE)), DOC_MODE_MEM) != 0 ||
        !functions ||
        functions->type != SONDE_J_ARR) {
        snprintf(err, errlen, "no \"functions\" list: not a sonde mem profile");
        return -1;
    }
    static const sonde_pprof_type types[NTYPES] = {
        { "alloc_objects", "count" }, { "alloc_space", "bytes" },
        { "inuse_objects", "count" }, { "inuse_space", "bytes" } };
    static const sonde_pprof_type space = { "space", "bytes" };
    mem_writer m = { .t = t };
    sonde_strtab_init(&m.names);
    sonde_u64map_init(&m.functions);
    if (sonde_pprof_build_init(&m.out, b, types, NTYPES, space,
                               (int64_t)bytes_of(t, root, DOC_SAMPLE_BYTES), "inuse_space") == 0) {
        put_functions(&m, functions); /* first, so that each has its first line */
        put_stacks(&m, sonde_json_get(t, root, DOC_ALLOCATIONS), ALLOC_SPACE);
        put_stacks(&m, sonde_json_get(t, root, DOC_LEAKS), INUSE_SPACE);
    }
    int rc = sonde_pprof_build_finish(&m.out);
    sonde_strtab_free(&m.names);
    sonde_u64map_free(&m.functions);
    if (rc < 0)
        snprintf(err, errlen, "%s", b->write_errno ? "cannot write it" : "out of memory");
    return rc;
}
