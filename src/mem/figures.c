/* figures.c - sonde mem's figures once recording stopped: the bytes still
 * alive per allocating stack, each line's share of them (net, reserved),
 * and the leaks, largest first.  See account.h. */
#include <stdlib.h>

#include "account.h"

static int sum_live(const mem_data *m, mem_node_bytes *nb)
{
    uint32_t n = m->stacks.nnodes;
    nb->n = n;
    nb->all = calloc(n ? n : 1, sizeof(uint64_t));
    nb->native = calloc(n ? n : 1, sizeof(uint64_t));
    nb->reserved = calloc(n ? n : 1, sizeof(uint64_t));
    if (!nb->all || !nb->native || !nb->reserved)
        return -1;
    for (uint64_t i = 0; i < m->live.nslots; i++) {
        const sonde_livemap_entry *e = &m->live.slots[i];
        if (!e->addr || e->node >= n || e->kind == MEM_MAPPED)
            continue;
        nb->all[e->node] += e->bytes;
        if (e->kind == MEM_NATIVE)
            nb->native[e->node] += e->bytes;
    }
    for (uint32_t i = 0; i < m->mapped.n; i++) {
        const mem_mapping *mp = &m->mapped.items[i];
        if (mp->node >= n)
            continue;
        nb->all[mp->node] += mp->touched;
        nb->native[mp->node] += mp->touched;
        nb->reserved[mp->node] += mp->len - mp->touched;
    }
    return 0;
}

const mem_site *mem_node_site(const mem_data *m, uint32_t n, int *line)
{
    if (n == SONDE_NO_NODE || n >= m->stacks.nnodes)
        return NULL;
    const sonde_node *node = &m->stacks.nodes[n];
    if (node->func >= m->nsites)
        return NULL; /* a root */
    *line = node->line;
    return m->sites[node->func];
}

/* The figures of the line a stack node stands for, or NULL. */
static mem_line_figures *node_line(mem_data *m, uint32_t n)
{
    int line = 0;
    const mem_site *s = mem_node_site(m, n, &line);
    int k = s ? line - s->first : -1;
    return k >= 0 && k < s->nlines ? &s->lines[k] : NULL;
}

int mem_figures_net(mem_data *m, mem_node_bytes *nb)
{
    if (sum_live(m, nb) < 0)
        return -1;
    for (uint32_t i = 0; i < m->nsites; i++)
        for (int k = 0; k < m->sites[i]->nlines; k++) {
            mem_line_figures *lf = &m->sites[i]->lines[k];
            lf->net = lf->reserved = lf->stamp = 0;
        }
    uint32_t walk = 0;
    for (uint32_t n = 1; n < m->stacks.nnodes; n++) {
        if (!nb->all[n] && !nb->reserved[n])
            continue;
        walk++;
        for (uint32_t x = n; x != SONDE_NO_NODE && x != m->root; x = m->stacks.nodes[x].parent) {
            mem_line_figures *lf = node_line(m, x);
            if (lf && lf->stamp != walk) {
                lf->stamp = walk;
                lf->net += nb->all[n];
                lf->reserved += nb->reserved[n];
            }
        }
    }
    return 0;
}

void mem_node_bytes_free(mem_node_bytes *nb)
{
    free(nb->all);
    free(nb->native);
    free(nb->reserved);
    *nb = (mem_node_bytes){ 0 };
}

static int larger_first(const void *a, const void *b, void *arg)
{
    const mem_node_bytes *nb = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint64_t x = nb->all[i], y = nb->all[j];
    if (x == y) {
        x = nb->reserved[i];
        y = nb->reserved[j];
    }
    return x < y ? 1 : x > y ? -1 : 0;
}

uint32_t *mem_leaks(const mem_data *m, const mem_node_bytes *nb, uint32_t *count)
{
    uint32_t *order = malloc((nb->n ? nb->n : 1) * sizeof *order);
    if (!order)
        return NULL;
    *count = 0;
    for (uint32_t n = 1; n < nb->n && n < m->stacks.nnodes; n++)
        if (nb->all[n] || nb->reserved[n])
            order[(*count)++] = n;
    qsort_r(order, *count, sizeof *order, larger_first, (void *)nb);
    return order;
}
