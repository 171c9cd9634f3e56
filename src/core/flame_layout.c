/* flame_layout.c - one flame graph geometry for every picture; see
 * flame_layout.h. */
#include "flame_layout.h"

#include <stdlib.h>
#include <string.h>

void sonde_flame_layout_free(sonde_flame_layout *l)
{
    free(l->x);
    free(l->depth);
    l->x = NULL;
    l->depth = NULL;
}

/* What the nodes are sorted by: the tree and the profile naming them. */
typedef struct sorting {
    const sonde_time_tree *t;
    const sonde_profile *p;
} sorting;

static const char *name_of(const sorting *s, uint32_t node)
{
    int32_t f = s->t->nodes[node].func;
    return f < 0 ? "" : sonde_profile_str(s->p, s->p->funcs[f].qualname);
}

/* qsort_r's order for node ids: by parent, then by name, then by id. */
static int by_parent_then_name(const void *a, const void *b, void *context)
{
    const sorting *s = context;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t px = s->t->nodes[x].parent, py = s->t->nodes[y].parent;
    if (px != py)
        return px < py ? -1 : 1;
    int c = strcmp(name_of(s, x), name_of(s, y));
    return c ? c : (x < y ? -1 : x > y);
}

int sonde_flame_layout_compute(sonde_flame_layout *l, const sonde_time_tree *t,
                               const sonde_profile *p)
{
    uint32_t n = t->n ? t->n : 1;
    l->x = calloc(n, sizeof *l->x);
    l->depth = calloc(n, sizeof *l->depth);
    uint32_t *order = malloc(n * sizeof *order);
    double *used = calloc(n, sizeof *used); /* of each parent's width, so far */
    if (!l->x || !l->depth || !order || !used) {
        free(order);
        free(used);
        sonde_flame_layout_free(l);
        return -1;
    }
    /* Every node but the root, grouped by parent and in name order there. */
    uint32_t k = 0;
    for (uint32_t i = 1; i < t->n; i++)
        order[k++] = i;
    sorting s = { .t = t, .p = p };
    qsort_r(order, k, sizeof *order, by_parent_then_name, &s);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t c = order[i], up = t->nodes[c].parent;
        l->x[c] = used[up];
        used[up] += t->nodes[c].total;
    }
    /* Offsets within the parent become offsets from the root: parents come
     * before their children in the tree. */
    for (uint32_t c = 1; c < t->n; c++) {
        l->x[c] += l->x[t->nodes[c].parent];
        l->depth[c] = l->depth[t->nodes[c].parent] + 1;
    }
    free(order);
    free(used);
    return 0;
}

void sonde_flame_colour(const char *name, uint32_t kind, int *r, int *g, int *b)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    if (kind == SONDE_FUNC_TORCH) {
        *r = 40 + (int)(h % 60);
        *g = 150 + (int)((h >> 8) % 80);
        *b = 200 + (int)((h >> 16) % 55);
        return;
    }
    *r = 205 + (int)(h % 50);
    *g = 80 + (int)((h >> 8) % 150);
    *b = 40 + (int)((h >> 16) % 55);
}
