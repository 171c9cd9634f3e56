/* profile_compact.c - a copy of a profile with only the functions its tree
 * uses (record --every: each interval's file names the functions sampled
 * in it, not every one seen since sampling began); see profile.h. */
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* src's function f in dst (made there on first sight, through fmap),
 * with its mapping; SONDE_NO_FUNC on out of memory. */
static uint32_t dst_func(sonde_profile *dst, const sonde_profile *src, uint32_t *fmap,
                         uint32_t f)
{
    if (f >= src->nfuncs)
        return SONDE_NO_FUNC;
    if (fmap[f] != SONDE_NO_FUNC)
        return fmap[f];
    const sonde_func *sf = &src->funcs[f];
    uint32_t g = sonde_profile_func_from(dst, src, f);
    if (g == SONDE_NO_FUNC)
        return g;
    sonde_func *df = &dst->funcs[g];
    df->address = sf->address;
    df->region = sf->region;
    if (sf->mapping && sf->mapping <= src->nmappings) {
        const sonde_mapping *m = &src->mappings[sf->mapping - 1];
        if (!(df->mapping = sonde_profile_mapping(dst, sonde_profile_str(src, m->file),
                                                  sonde_profile_str(src, m->build_id),
                                                  m->start, m->limit, m->offset)))
            return SONDE_NO_FUNC;
    }
    return fmap[f] = g;
}

int sonde_profile_compact(sonde_profile *dst, const sonde_profile *src)
{
    if (sonde_profile_init(dst) < 0)
        return -1;
    dst->seconds_per_tick = src->seconds_per_tick;
    dst->sample_rate = src->sample_rate;
    dst->pid = src->pid;
    uint32_t *fmap = malloc((src->nfuncs ? src->nfuncs : 1) * sizeof *fmap);
    uint32_t *nmap = calloc(src->nnodes ? src->nnodes : 1, sizeof *nmap);
    int rc = fmap && nmap ? 0 : -1;
    for (uint32_t f = 0; rc == 0 && f < src->nfuncs; f++)
        fmap[f] = SONDE_NO_FUNC;
    for (uint32_t t = 0; rc == 0 && t < src->nthreads; t++) {
        const sonde_thread *th = &src->threads[t];
        int64_t nt = sonde_profile_add_thread(dst, th->ident, th->native_id,
                                              sonde_profile_str(src, th->name));
        if (nt < 0 || th->root >= src->nnodes)
            rc = -1;
        else
            nmap[th->root] = dst->threads[nt].root;
    }
    /* A node comes after its parent (both trees grow by appending). */
    for (uint32_t n = 1; rc == 0 && n < src->nnodes; n++) {
        const sonde_node *sn = &src->nodes[n];
        if (sn->func == SONDE_NO_FUNC)
            continue; /* a thread's root: mapped above */
        uint32_t parent = sn->parent < n ? nmap[sn->parent] : SONDE_NO_NODE;
        uint32_t f = dst_func(dst, src, fmap, sn->func);
        uint32_t d = parent == SONDE_NO_NODE || f == SONDE_NO_FUNC
                         ? SONDE_NO_NODE : sonde_profile_child_for(dst, parent, f, sn->line);
        if (d == SONDE_NO_NODE) {
            rc = -1;
            break;
        }
        dst->nodes[d].calls += sn->calls;
        dst->nodes[d].total += sn->total;
        dst->nodes[d].self += sn->self;
        nmap[n] = d;
    }
    for (uint32_t t = 0; rc == 0 && t < src->nthreads; t++) {
        const sonde_node *root = &src->nodes[src->threads[t].root];
        sonde_node *d = &dst->nodes[dst->threads[t].root];
        d->total = root->total;
        d->self = root->self;
        d->calls = root->calls;
    }
    for (uint64_t e = 0; rc == 0 && e < src->nevents; e++) {
        const sonde_sample_event *ev = &src->events[e];
        if (ev->thread < src->nthreads && ev->node < src->nnodes && nmap[ev->node] &&
            sonde_profile_add_weighted_event(dst, ev->t_ns, ev->thread, nmap[ev->node],
                                             ev->weight) < 0)
            rc = -1;
    }
    dst->events_dropped = src->events_dropped;
    free(fmap);
    free(nmap);
    if (rc < 0)
        sonde_profile_free(dst);
    return rc;
}
