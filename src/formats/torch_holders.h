/* torch_holders.h - which slices of a run --torch timeline a PyTorch trace
 * writes: every operator and record_function region, and of the Python
 * calls only those that hold one (the others, most of a program's calls,
 * would make the trace a hundred times the size of torch's own and show
 * nothing about the operators), each with its innermost enclosing Python
 * call.  Read by the tensorboard and chrome writers. */
#ifndef SONDE_FORMATS_TORCH_HOLDERS_H
#define SONDE_FORMATS_TORCH_HOLDERS_H

#include <stdint.h>

#include "../core/profile.h"

typedef struct sonde_torch_holders {
    uint8_t *keep;           /* per slice: 1 when it is written */
    uint32_t *python_parent; /* per slice: the Python call holding it, UINT32_MAX: none */
} sonde_torch_holders;

/* Whether slice sl is a PyTorch operator or region. */
int sonde_slice_is_torch(const sonde_profile *p, const sonde_slice *sl);

/* Whether slice sl is one of thread t's that a writer can read (not a
 * kernel, a real node). */
int sonde_slice_on_thread(const sonde_profile *p, const sonde_slice *sl, uint32_t t);

/* Marks p's slices into *h (its arrays allocated here).  0, or -1 when out
 * of memory (nothing is left allocated). */
int sonde_torch_holders_mark(const sonde_profile *p, sonde_torch_holders *h);

void sonde_torch_holders_free(sonde_torch_holders *h);

#endif
