/* ops.h - operators placed into a calling-context tree.
 *
 * A deterministic tracer knows when each call began and ended; an
 * operator profiler (PyTorch's, over Kineto and RecordFunction) knows when
 * each operator ran on each thread, nested as its scopes nest, but not
 * which Python call ran it.  sonde_ops_place joins the two on one clock:
 * each operator becomes a node beneath the operator it ran inside, or,
 * for a top-level one, beneath the innermost call open on its thread when
 * it started; its time then leaves that node's self time, so totals stay
 * what they were and self times add up.
 *
 * Nesting follows torch.profiler's own rule (an operator is inside the
 * last one that started before it and had not yet ended), so that self
 * times equal key_averages()'.  Cost: O(n log n) for n spans and
 * operators, no memory beyond a stack as deep as the nesting. */
#ifndef SONDE_OPS_H
#define SONDE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* One call of a node, in the profile's ticks. */
typedef struct sonde_span {
    uint64_t start, end;
    uint32_t node;
} sonde_span;

/* One operator run, in the profile's ticks; func is a SONDE_FUNC_TORCH
 * function of the profile, `same` the same number for every run of one
 * operator whatever its input shapes (the string id of its plain name);
 * node and home are set by sonde_ops_place. */
typedef struct sonde_op {
    uint64_t start, end;
    uint32_t func;
    uint32_t same;
    uint32_t node;
    uint32_t home;       /* the node that holds what ran in it: node, or for one
                          * not counted the node it runs in (its kernels go there) */
    uint32_t id;         /* the caller's number for it (sonde_ops_place keeps it) */
    uint64_t self;       /* set by sonde_ops_place for one counted: its time less
                          * that of the operators counted directly in it */
    int64_t mem;         /* net CPU bytes allocated while it ran (--torch-memory) */
    int64_t device_mem;  /* the same of the GPU's allocator */
} sonde_op;

/* Places one thread's ops beneath its spans (both in any order: they are
 * sorted here by start, the longer first on a tie), under root where no
 * span is open, and sets each op's node (SONDE_NO_NODE for one that is
 * not counted, being the only one inside one of its name: see ops.c).
 * Adds to *top the
 * top-level operators (in no other), and to *placed those of them a span
 * held.  0, or -1 on out of memory (the operators placed so far stay). */
int sonde_ops_place(sonde_profile *p, uint32_t root, sonde_span *spans, size_t nspans,
                    sonde_op *ops, size_t nops, size_t *top, size_t *placed);

#endif
