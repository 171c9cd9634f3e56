/* fixture.h - builds calling-context trees by hand for the unit tests. */
#ifndef SONDE_TEST_FIXTURE_H
#define SONDE_TEST_FIXTURE_H

#include <stdint.h>

#include "core/profile.h"

/* Adds a thread; its root node. */
uint32_t fixture_thread(sonde_profile *p, uint64_t ident, uint64_t native_id,
                        const char *name);
/* A new child of parent for func with these figures (ticks). */
uint32_t fixture_node(sonde_profile *p, uint32_t parent, uint32_t func, uint64_t calls,
                      uint64_t total, uint64_t self);

#endif
