/* torch_holders.c - the slices of a run --torch timeline that a PyTorch
 * trace writes; see torch_holders.h. */
#include "torch_holders.h"

#include <stdlib.h>

int sonde_slice_is_torch(const sonde_profile *p, const sonde_slice *sl)
{
    return p->funcs[p->nodes[sl->node].func].kind == SONDE_FUNC_TORCH;
}

int sonde_slice_on_thread(const sonde_profile *p, const sonde_slice *sl, uint32_t t)
{
    return sl->thread == t && sl->node < p->nnodes && p->nodes[sl->node].func != SONDE_NO_FUNC &&
           p->nodes[sl->node].func < p->nfuncs;
}

/* Marks thread t's operators and regions, and the Python calls that hold
 * one, to be kept; notes each slice's innermost enclosing Python call.
 * The thread's slices nest exactly and come in start order (timeline.h). */
static void mark_thread(const sonde_profile *p, uint32_t t, sonde_torch_holders *h,
                        uint32_t *open)
{
    uint32_t depth = 0;
    for (uint64_t i = 0; i < p->nslices; i++) {
        const sonde_slice *s = &p->slices[i];
        if (!sonde_slice_on_thread(p, s, t))
            continue;
        while (depth && p->slices[open[depth - 1]].end_ns <= s->start_ns &&
               p->slices[open[depth - 1]].end_ns < s->end_ns)
            depth--;
        uint32_t up = depth ? open[depth - 1] : UINT32_MAX;
        h->python_parent[i] = up == UINT32_MAX || !sonde_slice_is_torch(p, &p->slices[up])
                                  ? up : h->python_parent[up];
        if (sonde_slice_is_torch(p, s)) {
            h->keep[i] = 1;
            for (uint32_t k = depth; k > 0 && !h->keep[open[k - 1]]; k--)
                h->keep[open[k - 1]] = 1;
        }
        open[depth++] = (uint32_t)i;
    }
}

int sonde_torch_holders_mark(const sonde_profile *p, sonde_torch_holders *h)
{
    h->keep = calloc((size_t)p->nslices + 1, 1);
    h->python_parent = malloc(((size_t)p->nslices + 1) * sizeof *h->python_parent);
    uint32_t *open = malloc(((size_t)p->nslices + 1) * sizeof *open);
    if (!h->keep || !h->python_parent || !open || p->nslices >= UINT32_MAX) {
        free(open);
        sonde_torch_holders_free(h);
        return -1;
    }
    for (uint32_t t = 0; t < p->nthreads; t++)
        mark_thread(p, t, h, open);
    free(open);
    return 0;
}

void sonde_torch_holders_free(sonde_torch_holders *h)
{
    free(h->keep);
    free(h->python_parent);
    h->keep = NULL;
    h->python_parent = NULL;
}
