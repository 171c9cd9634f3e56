/* dump_async.c - the asyncio task trees of sonde dump --async; see dump_async.h. */
#include "dump_async.h"

#include <stdlib.h>
#include <string.h>

#include "../sampler/asyncio_tasks.h"
#include "dump_frames.h"

/* Task trees deeper than this are cut (a chain of awaits that long is a cycle or garbage). */
#define TREE_DEPTH_MAX 64

typedef struct printer {
    sonde_buf *b;
    sonde_walker *w;
    int pid;
    const sonde_async_graph *g;
    int64_t *waiter;     /* per task: the index of its first waiter among the tasks, or -1 */
    uint8_t *shown;      /* per task: printed already */
} printer;

/* 1 when task `child` is awaited by task `parent`. */
static int awaits(const printer *pr, uint32_t parent, uint32_t child)
{
    const sonde_async_task *t = &pr->g->tasks[child];
    for (uint32_t k = 0; k < t->nwaiters; k++)
        if (pr->g->waiters[t->first_waiter + k] == pr->g->tasks[parent].addr)
            return 1;
    return 0;
}

/* Task i at `depth`, its chain, then the tasks it awaits below it.  path[0 .. depth) are the
 * tasks above it, so that a cycle of awaits is printed once round. */
static void put_task(printer *pr, uint32_t i, uint32_t depth, uint32_t *path)
{
    const sonde_async_task *t = &pr->g->tasks[i];
    int indent = 4 + 4 * (int)depth;
    pr->shown[i] = 1;
    sonde_buf_printf(pr->b, "%*stask ", indent, "");
    sonde_buf_text_str(pr->b, t->name);
    if (depth > 0) {
        sonde_buf_puts(pr->b, " (awaited by ");
        sonde_buf_text_str(pr->b, pr->g->tasks[path[depth - 1]].name);
        sonde_buf_putc(pr->b, ')');
    }
    sonde_buf_puts(pr->b, t->chain_cut ? " [its chain could not be read whole]\n" : "\n");
    for (uint32_t k = 0; k < t->nframes; k++)
        cli_dump_frame(pr->b, pr->w->profile, pr->pid, &pr->g->frames[t->first_frame + k],
                       indent + 4);
    path[depth] = i;
    for (uint32_t c = 0; c < pr->g->ntasks; c++) {
        if (!awaits(pr, i, c))
            continue;
        int on_path = 0;
        for (uint32_t d = 0; d <= depth; d++)
            on_path |= path[d] == c;
        if (on_path || depth + 1 == TREE_DEPTH_MAX) {
            sonde_buf_printf(pr->b, "%*s[task ", indent + 4, "");
            sonde_buf_text_str(pr->b, pr->g->tasks[c].name);
            sonde_buf_puts(pr->b, ": a cycle of awaits, or too deep]\n");
        } else
            put_task(pr, c, depth + 1, path);
    }
}

/* The trees whose root tasks are on the list of thread state tstate: the tasks that no task
 * awaits; then, once every list is done, any task left (on a cycle of awaits). */
static uint32_t put_trees(printer *pr, uint64_t tstate, int leftovers)
{
    uint32_t path[TREE_DEPTH_MAX], roots = 0;
    for (uint32_t i = 0; i < pr->g->ntasks; i++) {
        const sonde_async_task *t = &pr->g->tasks[i];
        if (pr->shown[i] || (!leftovers && (t->tstate != tstate || pr->waiter[i] >= 0)))
            continue;
        put_task(pr, i, 0, path);
        roots++;
    }
    return roots;
}

/* How many of the graph's tasks are on the list of tstate. */
static uint32_t tasks_of(const sonde_async_graph *g, uint64_t tstate)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->ntasks; i++)
        n += g->tasks[i].tstate == tstate;
    return n;
}

int cli_dump_async(sonde_buf *b, sonde_walker *w, int pid, const cli_async_thread *threads,
                   uint32_t n, char *err, size_t errlen)
{
    sonde_async_thread *read = malloc((n ? n : 1) * sizeof *read);
    if (!read) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        read[i] = (sonde_async_thread){ threads[i].tstate, threads[i].loop_frame };
    /* A list that changed while read (tasks end and start as it is walked) is read again, a
     * few times, for a whole one. */
    sonde_async_graph g;
    int rc = sonde_async_read(w, read, n, &g, err, errlen);
    for (int again = 0; rc == 0 && g.lists_cut && again < 4; again++) {
        sonde_async_free(&g);
        rc = sonde_async_read(w, read, n, &g, err, errlen);
    }
    free(read);
    if (rc < 0)
        return -1;
    printer pr = { .b = b, .w = w, .pid = pid, .g = &g,
                   .waiter = malloc((g.ntasks ? g.ntasks : 1) * sizeof *pr.waiter),
                   .shown = calloc(g.ntasks ? g.ntasks : 1, 1) };
    if (!pr.waiter || !pr.shown) {
        free(pr.waiter);
        free(pr.shown);
        sonde_async_free(&g);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < g.ntasks; i++) {
        const sonde_async_task *t = &g.tasks[i];
        pr.waiter[i] = -1;
        for (uint32_t k = 0; k < t->nwaiters && pr.waiter[i] < 0; k++)
            pr.waiter[i] = sonde_async_find(&g, g.waiters[t->first_waiter + k]);
    }
    for (uint32_t i = 0; i <= n; i++) {
        uint64_t tstate = i < n ? threads[i].tstate : 0;
        uint32_t count = tasks_of(&g, tstate);
        if (count == 0)
            continue;
        if (i < n) {
            sonde_buf_printf(b, "\nasyncio tasks of thread %llu ",
                             (unsigned long long)threads[i].native_id);
            sonde_buf_text_str(b, threads[i].name);
            sonde_buf_printf(b, ": %u\n", count);
        } else {
            sonde_buf_printf(b, "\nasyncio tasks of threads that have ended: %u\n", count);
        }
        put_trees(&pr, tstate, 0);
    }
    if (put_trees(&pr, 0, 1) > 0)
        sonde_buf_puts(b, "    [the tasks above await each other in a cycle]\n");
    if (g.ntasks == 0)
        sonde_buf_puts(b, g.not_imported ? "\n[no asyncio task: the process has not imported "
                                           "asyncio]\n"
                          : g.no_loop    ? "\n[no asyncio task found: no thread runs an asyncio "
                                           "event loop]\n"
                                         : "\n[no asyncio task is alive in this process]\n");
    if (g.lists_cut)
        sonde_buf_puts(b, "\n[a list of tasks changed while read, or was too long: some tasks "
                          "are missing]\n");
    free(pr.waiter);
    free(pr.shown);
    sonde_async_free(&g);
    return 0;
}
