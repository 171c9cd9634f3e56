/* test_profile.c - the profile model: function labels, threads, tree, merging. */
#include <stdio.h>
#include <stdlib.h>

#include "core/profile.h"
#include "harness.h"

/* Adds a thread; its root node. */
static uint32_t thread_root(sonde_profile *p, uint64_t ident, uint64_t native_id,
                            const char *name)
{
    int64_t t = sonde_profile_add_thread(p, ident, native_id, name);
    return p->threads[t].root;
}

/* Gives node n its figures. */
static void set(sonde_profile *p, uint32_t n, uint64_t calls, uint64_t total, uint64_t self)
{
    p->nodes[n].calls = calls;
    p->nodes[n].total = total;
    p->nodes[n].self = self;
}

/* The child of parent running func in a node array, or SONDE_NO_NODE. */
static uint32_t child_for(const sonde_node *nodes, uint32_t parent, uint32_t func)
{
    uint32_t c = nodes[parent].first_child;
    while (c != SONDE_NO_NODE && nodes[c].func != func)
        c = nodes[c].next_sibling;
    return c;
}

static void test_functions(void)
{
    sonde_profile p;
    check(sonde_profile_init(&p) == 0, "init");
    check_dbl(p.seconds_per_tick, 1e-9);
    uint32_t f = sonde_profile_func(&p, "a.py", 3, "f", "C.f", SONDE_FUNC_PYTHON);
    check_u64(f, 0);
    /* The label (file, line, name) decides; the qualname does not. */
    check_u64(sonde_profile_func(&p, "a.py", 3, "f", "other", SONDE_FUNC_PYTHON), f);
    check_u64(sonde_profile_func(&p, "a.py", 4, "f", NULL, SONDE_FUNC_PYTHON), 1);
    check_u64(sonde_profile_func(&p, "b.py", 3, "f", NULL, SONDE_FUNC_PYTHON), 2);
    check_u64(sonde_profile_func(&p, "a.py", 3, "g", NULL, SONDE_FUNC_PYTHON), 3);
    uint32_t len = sonde_profile_func(&p, "~", 0, "<built-in method builtins.len>", NULL,
                                      SONDE_FUNC_C);
    check_u64(len, 4);
    check_u64(p.nfuncs, 5);
    check_str(sonde_profile_str(&p, p.funcs[f].file), "a.py");
    check_str(sonde_profile_str(&p, p.funcs[f].name), "f");
    check_str(sonde_profile_str(&p, p.funcs[f].qualname), "C.f");
    check_u64(p.funcs[f].line, 3);
    check_str(sonde_profile_str(&p, p.funcs[len].qualname), "<built-in method builtins.len>");
    check_u64(p.funcs[len].kind, SONDE_FUNC_C);

    /* Past the first 256 function slots every label is still found. */
    char name[32];
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof name, "fn%d", i);
        sonde_profile_func(&p, "many.py", i, name, NULL, SONDE_FUNC_PYTHON);
    }
    int wrong = 0;
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof name, "fn%d", i);
        wrong += sonde_profile_func(&p, "many.py", i, name, NULL, SONDE_FUNC_PYTHON) !=
                 (uint32_t)(5 + i);
    }
    check_u64(wrong, 0);
    check_u64(p.nfuncs, 605);
    sonde_profile_free(&p);
}

static void test_threads_and_children(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    uint32_t f = sonde_profile_func(&p, "a.py", 1, "f", NULL, SONDE_FUNC_PYTHON);
    uint32_t g = sonde_profile_func(&p, "a.py", 9, "g", NULL, SONDE_FUNC_PYTHON);
    check_u64(sonde_profile_add_thread(&p, 140, 7001, "MainThread"), 0);
    check_u64(sonde_profile_add_thread(&p, 141, 7002, "worker"), 1);
    uint32_t root = p.threads[0].root;
    check_u64(root, 1);
    check_u64(p.threads[1].root, 2);
    check_u64(p.nodes[root].func, SONDE_NO_FUNC);
    check_u64(p.threads[1].ident, 141);
    check_u64(p.threads[1].native_id, 7002);
    check_str(sonde_profile_str(&p, p.threads[1].name), "worker");
    check(sonde_profile_set_thread_name(&p, 1, "pool-1") == 0, "rename");
    check_str(sonde_profile_str(&p, p.threads[1].name), "pool-1");
    check(sonde_profile_set_thread_name(&p, 2, "x") == -1, "no thread 2");

    /* Children are found by the tracer's key. */
    int key_a, key_b;
    uint32_t a = sonde_profile_add_child(&p, root, &key_a, f);
    uint32_t b = sonde_profile_add_child(&p, root, &key_b, f);
    check_u64(sonde_profile_find_child(&p, root, &key_a), a);
    check_u64(sonde_profile_find_child(&p, root, &key_b), b);
    check_u64(sonde_profile_find_child(&p, root, &f), SONDE_NO_NODE);
    check_u64(p.nodes[a].parent, root);
    check_u64(p.nodes[b].func, f);
    /* ...or by function: the first child of f is reused, g is new. */
    uint32_t by_f = sonde_profile_child_for(&p, root, f, 0);
    check(by_f == a || by_f == b, "child_for reuses an f child");
    uint32_t by_g = sonde_profile_child_for(&p, root, g, 0);
    check(by_g != a && by_g != b && by_g != SONDE_NO_NODE, "child_for adds g");
    check_u64(sonde_profile_child_for(&p, root, g, 0), by_g);

    /* Thousands of children move the node array; keys still find them. */
    static int keys[3000];
    uint32_t under = p.threads[1].root;
    for (int i = 0; i < 3000; i++)
        sonde_profile_add_child(&p, under, &keys[i], g);
    int wrong = 0;
    for (int i = 0; i < 3000; i++) {
        uint32_t c = sonde_profile_find_child(&p, under, &keys[i]);
        wrong += c == SONDE_NO_NODE || p.nodes[c].parent != under;
    }
    check_u64(wrong, 0);
    check_u64(sonde_profile_find_child(&p, root, &key_a), a);
    sonde_profile_free(&p);
}

/* record --every's next interval: a cleared tree keeps the functions and
 * strings, has no thread, node or sample left, and a wide node's index
 * finds only the children made after the clear. */
static void test_clear_tree(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    uint32_t funcs[20];
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        funcs[i] = sonde_profile_func(&p, "a.py", i + 1, name, NULL, SONDE_FUNC_PYTHON);
    }
    uint32_t root = (uint32_t)sonde_profile_add_thread(&p, 140, 7001, "MainThread");
    root = p.threads[root].root;
    for (int i = 0; i < 20; i++) /* wide: indexed */
        p.nodes[sonde_profile_child_for(&p, root, funcs[i], 0)].total = 5;
    sonde_profile_add_event(&p, 10, 0, root);
    sonde_profile_clear_tree(&p);
    check_u64(p.nthreads, 0);
    check_u64(p.nnodes, 1);
    check_u64(p.nevents, 0);
    check_u64(p.nfuncs, 20);
    check_str(sonde_profile_str(&p, p.funcs[funcs[7]].name), "f7");

    root = (uint32_t)sonde_profile_add_thread(&p, 140, 7001, "MainThread");
    root = p.threads[root].root;
    check_u64(root, 1);
    uint32_t made = 0;
    for (int i = 0; i < 20; i += 2) /* half of them, in another order */
        made += sonde_profile_child_for(&p, root, funcs[19 - i], 0) != SONDE_NO_NODE;
    check_u64(made, 10);
    check_u64(p.nnodes, 12);
    uint64_t stale = 0;
    for (uint32_t n = 1; n < p.nnodes; n++)
        stale += p.nodes[n].total;
    check_u64(stale, 0);
    /* found again, not made twice; the others are new */
    check_u64(sonde_profile_child_for(&p, root, funcs[19], 0), 2);
    check_u64(sonde_profile_child_for(&p, root, funcs[0], 0), 12);
    sonde_profile_free(&p);
}

/* The compact copy keeps threads, tree, figures and timeline, and only
 * the functions (and their mappings) the tree uses. */
static void test_compact(void)
{
    sonde_profile p, c;
    sonde_profile_init(&p);
    p.sample_rate = 100;
    p.seconds_per_tick = 0.01;
    uint32_t unused = sonde_profile_func(&p, "a.py", 1, "gone", NULL, SONDE_FUNC_PYTHON);
    uint32_t f = sonde_profile_func(&p, "a.py", 5, "f", NULL, SONDE_FUNC_PYTHON);
    uint32_t g = sonde_profile_func(&p, "libx.so", 0, "g", NULL, SONDE_FUNC_NATIVE);
    p.funcs[g].mapping = sonde_profile_mapping(&p, "/lib/libx.so", "ab12", 0x1000, 0x2000, 0);
    p.funcs[g].address = 0x1234;
    sonde_profile_mapping(&p, "/lib/liby.so", "", 0x3000, 0x4000, 0); /* of no function kept */
    uint32_t r0 = thread_root(&p, 1, 11, "MainThread");
    uint32_t r1 = thread_root(&p, 2, 12, "worker");
    uint32_t a = sonde_profile_child_for(&p, r1, f, 7);
    uint32_t b = sonde_profile_child_for(&p, a, g, 0);
    set(&p, r1, 0, 5, 0);
    set(&p, a, 0, 5, 2);
    set(&p, b, 0, 3, 3);
    set(&p, r0, 0, 0, 0);
    sonde_profile_add_weighted_event(&p, 40, 1, b, 9);
    check(sonde_profile_compact(&c, &p) == 0, "compact");
    check_u64(c.nfuncs, 2);
    check_u64(c.nthreads, 2);
    check_str(sonde_profile_str(&c, c.threads[1].name), "worker");
    check_u64(c.threads[1].native_id, 12);
    uint32_t ca = c.nodes[c.threads[1].root].first_child;
    check_str(sonde_profile_str(&c, c.funcs[c.nodes[ca].func].name), "f");
    check_u64(c.nodes[ca].line, 7);
    check_u64(c.nodes[ca].total, 5);
    check_u64(c.nodes[ca].self, 2);
    uint32_t cb = c.nodes[ca].first_child;
    const sonde_func *cg = &c.funcs[c.nodes[cb].func];
    check_u64(c.nodes[cb].self, 3);
    check_u64(cg->kind, SONDE_FUNC_NATIVE);
    check_u64(cg->address, 0x1234);
    check_u64(c.nmappings, 1);
    check_str(sonde_profile_str(&c, c.mappings[cg->mapping - 1].build_id), "ab12");
    check_u64(c.nodes[c.threads[1].root].total, 5);
    check_u64(c.nevents, 1);
    check_u64(c.events[0].node, cb);
    check_u64(c.events[0].thread, 1);
    check_u64(c.events[0].weight, 9);
    check_dbl(c.sample_rate, 100);
    (void)unused;
    sonde_profile_free(&c);
    sonde_profile_free(&p);
}

/* Two threads, and in one of them two f nodes (two code objects with one
 * label): the merged tree has one f under the root with summed figures. */
static void test_merged_tree(void)
{
    sonde_profile p;
    sonde_profile_init(&p);
    uint32_t f = sonde_profile_func(&p, "a.py", 1, "f", NULL, SONDE_FUNC_PYTHON);
    uint32_t g = sonde_profile_func(&p, "a.py", 5, "g", NULL, SONDE_FUNC_PYTHON);
    uint32_t h = sonde_profile_func(&p, "a.py", 9, "h", NULL, SONDE_FUNC_PYTHON);
    int key1, key2;

    uint32_t ra = thread_root(&p, 1, 0, "A");
    set(&p, ra, 0, 13, 0);
    uint32_t f1 = sonde_profile_add_child(&p, ra, &key1, f);
    set(&p, f1, 2, 10, 4);
    set(&p, sonde_profile_add_child(&p, f1, NULL, g), 3, 6, 6);
    uint32_t f2 = sonde_profile_add_child(&p, ra, &key2, f);
    set(&p, f2, 1, 3, 1);
    set(&p, sonde_profile_add_child(&p, f2, NULL, g), 1, 2, 2);
    set(&p, sonde_profile_add_child(&p, f2, NULL, h), 1, 0, 0);

    uint32_t rb = thread_root(&p, 2, 0, "B");
    set(&p, rb, 0, 13, 0);
    uint32_t f3 = sonde_profile_add_child(&p, rb, NULL, f);
    set(&p, f3, 1, 5, 1);
    set(&p, sonde_profile_add_child(&p, f3, NULL, g), 1, 4, 4);
    set(&p, sonde_profile_add_child(&p, rb, NULL, h), 4, 8, 8);

    sonde_node *m;
    uint32_t count;
    check(sonde_profile_merged_tree(&p, 1, &m, &count) == 0, "merged_tree");
    /* placeholder, root, f, f;g, f;h, h */
    check_u64(count, 6);
    check_u64(m[1].func, SONDE_NO_FUNC);
    check_u64(m[1].total, 26);
    uint32_t mf = child_for(m, 1, f), mh = child_for(m, 1, h);
    uint32_t mfg = child_for(m, mf, g), mfh = child_for(m, mf, h);
    check(mf && mh && mfg && mfh, "every merged path exists");
    check_u64(m[mf].calls, 4);
    check_u64(m[mf].total, 18);
    check_u64(m[mf].self, 6);
    check_u64(m[mfg].calls, 5);
    check_u64(m[mfg].total, 12);
    check_u64(m[mfg].self, 12);
    check_u64(m[mfg].parent, mf);
    check_u64(m[mfh].calls, 1);
    check_u64(m[mfh].total, 0);
    check_u64(m[mh].calls, 4);
    check_u64(m[mh].total, 8);
    check_u64(m[mh].self, 8);
    check_u64(child_for(m, 1, g), SONDE_NO_NODE);
    free(m);
    sonde_profile_free(&p);
}

void test_profile(void)
{
    test_functions();
    test_threads_and_children();
    test_clear_tree();
    test_compact();
    test_merged_tree();
}
