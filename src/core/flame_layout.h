/* flame_layout.h - where each frame of a flame graph goes, and its
 * colour: the one geometry behind `-f flamegraph` (flamegraph.c draws it
 * as SVG) and sonde view's flame graph, icicle and sunburst (view.c hands
 * it to the page's script), so the pictures agree frame for frame.
 * Children sit side by side inside their parent in name order, as
 * flamegraph.pl draws them; each is as wide as its total. */
#ifndef SONDE_FLAME_LAYOUT_H
#define SONDE_FLAME_LAYOUT_H

#include <stdint.h>

#include "profile.h"
#include "time_tree.h"

typedef struct sonde_flame_layout {
    double *x;          /* start, in the tree's value units from the root's start */
    uint32_t *depth;    /* the root is 0 */
} sonde_flame_layout;

/* Lays t out; p names its functions.  0, or -1 on out of memory. */
int sonde_flame_layout_compute(sonde_flame_layout *l, const sonde_time_tree *t,
                               const sonde_profile *p);
void sonde_flame_layout_free(sonde_flame_layout *l);

/* A colour that depends only on the name and the kind, so a function
 * keeps its colour from one picture to the next: warm for Python and C
 * functions, blue-green for torch operators (enum sonde_func_kind). */
void sonde_flame_colour(const char *name, uint32_t kind, int *r, int *g, int *b);

#endif
