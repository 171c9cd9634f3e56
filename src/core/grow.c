/* grow.c - growing an array by doubling; see grow.h. */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>

#define FIRST_CAP 16

void *sonde_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t max)
{
    if (need <= *cap)
        return arr;
    if (need > max || elem == 0 || need > SIZE_MAX / elem)
        return NULL;
    size_t more = *cap > max / 2 ? max : *cap * 2;
    if (more < FIRST_CAP)
        more = FIRST_CAP < max ? FIRST_CAP : max;
    if (more < need)
        more = need;
    if (more > SIZE_MAX / elem)
        more = SIZE_MAX / elem;
    void *bigger = realloc(arr, more * elem);
    if (!bigger)
        return NULL;
    *cap = more;
    return bigger;
}
