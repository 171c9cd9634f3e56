/* fixture.c - hand-built calling-context trees; see fixture.h. */
#include "fixture.h"

uint32_t fixture_thread(sonde_profile *p, uint64_t ident, uint64_t native_id,
                        const char *name)
{
    int64_t t = sonde_profile_add_thread(p, ident, native_id, name);
    return p->threads[t].root;
}

uint32_t fixture_node(sonde_profile *p, uint32_t parent, uint32_t func, uint64_t calls,
                      uint64_t total, uint64_t self)
{
    uint32_t n = sonde_profile_add_child(p, parent, NULL, func);
    p->nodes[n].calls = calls;
    p->nodes[n].total = total;
    p->nodes[n].self = self;
    return n;
}
