/* fixture.h - builds calling-context trees by hand for the unit tests. */
#ifndef SONDE_TEST_FIXTURE_H
#define SONDE_TEST_FIXTURE_H

#include <stdint.h>

#include "core/profile.h"
#include "core/stats.h"

enum { FIXTURE_MAIN, FIXTURE_WORK, FIXTURE_LEN };

/* The writers' fixture, a quarter second per tick (calls, total, self):
 *   thread 1 (node 1): main 1 40 10 (node 2) -> work 2 30 24 (3) -> len 4 6 6 (4)
 *   thread 2 (node 5): work 1 8 6 (6) -> work 1 2 2 (7)
 * Functions: main (app.py:1), work (app.py:5, qualname Worker.work), and
 * <built-in method builtins.len>.  work: ncalls 4, pcalls 3 (node 7 is
 * recursive), tottime (24+6+2)/4 = 8, cumtime (30+8)/4 = 9.5.  Edges in
 * walk order: main->work, work->len, work->work.  p and s initialised. */
void fixture_app(sonde_profile *p, sonde_stats *s);
/* Only the fixture's three functions, for trees of another shape. */
void fixture_app_funcs(sonde_profile *p);

/* Adds a thread; its root node. */
uint32_t fixture_thread(sonde_profile *p, uint64_t ident, uint64_t native_id,
                        const char *name);
/* A new child of parent for func with these figures (ticks). */
uint32_t fixture_node(sonde_profile *p, uint32_t parent, uint32_t func, uint64_t calls,
                      uint64_t total, uint64_t self);

/* text with its lines sorted (collapsed stacks have no defined order),
 * malloc'd: the caller frees it. */
char *fixture_sorted_lines(const char *text);

#endif
