/* grow.h - the one way an array grows: by doubling, every size checked.
 *
 * An array that grows an element at a time keeps its capacity beside its
 * count, and asks sonde_grow for room before each append; doubling makes n
 * appends cost O(n) copies.  Every size is checked: a count past the
 * caller's limit (say UINT32_MAX for arrays named by 32-bit indexes), or a
 * byte size past SIZE_MAX, fails as an allocation does, never wraps. */
#ifndef SONDE_GROW_H
#define SONDE_GROW_H

#include <stddef.h>

/* Room for `need` elements of `elem` bytes in arr, which has room for
 * *cap: arr itself when it has it; else arr reallocated to twice *cap (at
 * least `need` and 16, at most `max` elements) and *cap updated.  NULL
 * when need is above max or memory runs out: arr and *cap are then
 * unchanged, and arr is still the caller's to free.  The new elements are
 * not initialised; need is at least 1. */
void *sonde_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t max);

#endif
