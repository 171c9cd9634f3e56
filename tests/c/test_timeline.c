/* test_timeline.c - a deterministic timeline within a budget
 * (core/timeline.c): the first slices by start time of all threads
 * together, each thread's a prefix of its own, nested exactly, the
 * dropped ones counted, and no more than twice the budget held. */
#include "core/timeline.h"
#include "harness.h"

/* A thread's slices kept, their starts and ends in the order kept; their
 * number. */
static uint64_t kept_on(const sonde_profile *p, uint32_t thread, uint64_t *starts,
                        uint64_t *ends)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < p->nslices; i++)
        if (p->slices[i].thread == thread) {
            starts[n] = p->slices[i].start_ns;
            ends[n++] = p->slices[i].end_ns;
        }
    return n;
}

/* A profile of one thread calling f (its node in *node), a budget of 4
 * slices; f's function. */
static uint32_t one_call(sonde_profile *p, uint32_t *node)
{
    check(sonde_profile_init(p) == 0, "init");
    int64_t t = sonde_profile_add_thread(p, 1, 1, "main");
    uint32_t f = sonde_profile_func(p, "a.py", 1, "f", "f", SONDE_FUNC_PYTHON);
    *node = sonde_profile_child_for(p, p->threads[t].root, f, 0);
    p->slices_budget = 4;
    return f;
}

static void test_budget(void)
{
    sonde_profile p;
    uint32_t node, f = one_call(&p, &node);
    /* Thread 0: a call [100, 1000) holding an operator [150, 1100) that
     * outlasts it (cut at 1000), then a call [1200, 1300).  Ticks are
     * 2 ns each from tick 50. */
    sonde_span spans0[] = { { 100, 1000, node }, { 1200, 1300, node } };
    sonde_op ops0[] = { { .start = 150, .end = 1100, .func = f, .node = node },
                        { .start = 160, .end = 170, .func = f, .node = SONDE_NO_NODE } };
    check(sonde_timeline_add(&p, 0, spans0, 2, ops0, 2, 50, 2.0) == 0, "thread 0");
    check_u64(p.nslices, 3);
    check_u64(p.slices_dropped, 0);
    /* Thread 1: calls at [120, 130), [140, 150), [2000, 2100). */
    sonde_span spans1[] = { { 120, 130, node }, { 140, 150, node }, { 2000, 2100, node } };
    check(sonde_timeline_add(&p, 1, spans1, 3, NULL, 0, 50, 2.0) == 0, "thread 1");
    check_u64(p.nslices, 4);
    check_u64(p.slices_dropped, 2);
    check(p.slices_cap <= 2 * p.slices_budget, "at most twice the budget held");
    uint64_t starts[8], ends[8];
    check_u64(kept_on(&p, 0, starts, ends), 2);
    check_u64(starts[0], 100);
    check_u64(ends[0], 1900);
    check_u64(starts[1], 200);
    check_u64(ends[1], 1900); /* the operator, cut at its call's end */
    check_u64(kept_on(&p, 1, starts, ends), 2);
    check_u64(starts[0], 140);
    check_u64(starts[1], 180);
    sonde_profile_free(&p);
}

/* GPU kernels share the budget: with a thread's slices at 100-400 ns and
 * kernels at 50, 250 and 900 ns (given out of order), a budget of 4
 * keeps the first four of all by start. */
static void test_kernels(void)
{
    sonde_profile p;
    uint32_t node;
    one_call(&p, &node);
    sonde_span spans[] = { { 100, 200, node }, { 300, 400, node } };
    check(sonde_timeline_add(&p, 0, spans, 2, NULL, 0, 0, 1.0) == 0, "thread");
    int64_t track = sonde_profile_device_track(&p, 0, 7);
    check(track == 0 && sonde_profile_device_track(&p, 0, 7) == 0 &&
          sonde_profile_device_track(&p, 1, 7) == 1, "one track a device and stream");
    uint32_t on = SONDE_SLICE_DEVICE | (uint32_t)track;
    sonde_slice kernels[] = { { 900, 950, on, node }, { 50, 60, on, node },
                              { 250, 270, on, node } };
    check(sonde_timeline_add_kernels(&p, kernels, 3) == 0, "kernels");
    check_u64(p.nslices, 4);
    check_u64(p.slices_dropped, 1);
    uint64_t starts[8], ends[8];
    check_u64(kept_on(&p, on, starts, ends), 2);
    check_u64(starts[0], 50);
    check_u64(starts[1], 250);
    check_u64(ends[1], 270);
    check_u64(kept_on(&p, 0, starts, ends), 2);
    sonde_profile_free(&p);
}

void test_timeline(void)
{
    test_budget();
    test_kernels();
}
