/* test_ops.c - operators placed into a calling-context tree (core/ops.c):
 * beneath the innermost span open at their start, nested as
 * torch.profiler nests them (its _remove_dup_nodes included), their time
 * taken from their parent's self time. */
#include "core/ops.h"
#include "core/step_parts.h"
#include "harness.h"

/* A torch function named name; its id (`same` is its string id). */
static uint32_t op_func(sonde_profile *p, const char *name, uint32_t *same)
{
    uint32_t f = sonde_profile_func(p, SONDE_TORCH_FILE, 0, name, name, SONDE_FUNC_TORCH);
    *same = p->funcs[f].name;
    return f;
}

static uint32_t child(const sonde_profile *p, uint32_t parent, uint32_t func)
{
    uint32_t c = p->nodes[parent].first_child;
    while (c != SONDE_NO_NODE && p->nodes[c].func != func)
        c = p->nodes[c].next_sibling;
    return c;
}

static void test_placement(void)
{
    sonde_profile p;
    check(sonde_profile_init(&p) == 0, "init");
    int64_t t = sonde_profile_add_thread(&p, 1, 1, "main");
    uint32_t root = p.threads[t].root;
    uint32_t fmain = sonde_profile_func(&p, "a.py", 1, "main", "main", SONDE_FUNC_PYTHON);
    uint32_t fwork = sonde_profile_func(&p, "a.py", 9, "work", "work", SONDE_FUNC_PYTHON);
    uint32_t nmain = sonde_profile_child_for(&p, root, fmain, 0);
    uint32_t nwork = sonde_profile_child_for(&p, nmain, fwork, 0);
    p.nodes[nmain].calls = 1;
    p.nodes[nmain].total = 1000;
    p.nodes[nmain].self = 400;
    p.nodes[nwork].calls = 2;
    p.nodes[nwork].total = p.nodes[nwork].self = 600;
    /* main [0, 1000) calls work twice: [100, 400) and [500, 800). */
    sonde_span spans[] = { { 500, 800, nwork }, { 0, 1000, nmain }, { 100, 400, nwork } };
    uint32_t s_mm, s_mean, s_sum, s_add;
    uint32_t mm = op_func(&p, "aten::mm", &s_mm), mean = op_func(&p, "aten::mean", &s_mean);
    uint32_t sum = op_func(&p, "aten::sum", &s_sum), add = op_func(&p, "aten::add", &s_add);
    sonde_op ops[] = {
        /* in work's first call: mm [110, 300) with sum [150, 200) in it */
        { .start = 150, .end = 200, .func = sum, .same = s_sum },
        { .start = 110, .end = 300, .func = mm, .same = s_mm },
        /* in work's second: mean [510, 700) > mean [520, 690) (its only
         * child, of its name: not counted) > sum [530, 600) */
        { .start = 520, .end = 690, .func = mean, .same = s_mean, .id = 2 },
        { .start = 530, .end = 600, .func = sum, .same = s_sum },
        { .start = 510, .end = 700, .func = mean, .same = s_mean, .id = 4 },
        /* in main itself, between the calls of work: add [420, 480) */
        { .start = 420, .end = 480, .func = add, .same = s_add },
        /* after main: under the thread */
        { .start = 1100, .end = 1150, .func = add, .same = s_add },
    };
    size_t top = 0, placed = 0;
    check(sonde_ops_place(&p, root, spans, 3, ops, sizeof ops / sizeof *ops, &top, &placed) == 0,
          "place");
    check_u64(top, 4);
    /* Sorted by start, each with its node: the duplicate mean with none. */
    check_u64(ops[0].start, 110);
    check(ops[0].node != SONDE_NO_NODE && ops[0].node == child(&p, nwork, mm), "mm's node");
    check_u64(ops[4].start, 520);
    check(ops[4].node == SONDE_NO_NODE, "the duplicate mean has no node");
    /* what ran in it (its kernels) goes to the mean holding it, which
     * keeps its own node; each keeps the caller's number */
    check_u64(ops[4].id, 2);
    check_u64(ops[3].id, 4);
    check(ops[3].node != SONDE_NO_NODE && ops[4].home == ops[3].node &&
          ops[3].home == ops[3].node && ops[0].home == ops[0].node, "homes");
    check_u64(placed, 3);
    uint32_t n_mm = child(&p, nwork, mm), n_mean = child(&p, nwork, mean);
    check(n_mm != SONDE_NO_NODE && n_mean != SONDE_NO_NODE, "operators beneath work");
    check_u64(p.nodes[n_mm].calls, 1);
    check_u64(p.nodes[n_mm].total, 190);
    check_u64(p.nodes[n_mm].self, 140);
    check_u64(p.nodes[child(&p, n_mm, sum)].total, 50);
    check_u64(p.nodes[n_mean].calls, 1);
    check_u64(p.nodes[n_mean].total, 190);
    check(child(&p, n_mean, mean) == SONDE_NO_NODE, "the duplicate mean is not a node");
    check_u64(p.nodes[child(&p, n_mean, sum)].total, 70);
    check_u64(p.nodes[n_mean].self, 120);
    /* Each counted operator's own self time, the nodes' by the call: mm's
     * less sum's, the outer mean's less the sum in the mean it holds. */
    check_u64(ops[0].self, 140);
    check_u64(ops[1].self, 50);
    check_u64(ops[3].self, 120);
    check_u64(ops[5].self, 70);
    /* work's self time lost its operators' time; main's the add's. */
    check_u64(p.nodes[nwork].self, 600 - 190 - 190);
    check_u64(p.nodes[nwork].total, 600);
    check_u64(p.nodes[child(&p, nmain, add)].total, 60);
    check_u64(p.nodes[nmain].self, 400 - 60);
    check_u64(p.nodes[child(&p, root, add)].total, 50);
    sonde_profile_free(&p);
}

/* Steps in time order: a time falls in the step whose span holds it,
 * none before the first, between two windows or after the last. */
static void test_step_at(void)
{
    sonde_profile p;
    check(sonde_profile_init(&p) == 0, "init");
    sonde_step steps[] = { { 100, 200, 0, 2 }, { 200, 300, 0, 3 }, { 500, 600, 0, 7 } };
    p.steps = steps;
    p.nsteps = 3;
    check_u64(sonde_step_at(&p, 50), SONDE_NO_STEP);
    check_u64(sonde_step_at(&p, 100), 2);
    check_u64(sonde_step_at(&p, 199), 2);
    check_u64(sonde_step_at(&p, 250), 3);
    check_u64(sonde_step_at(&p, 400), SONDE_NO_STEP);
    check_u64(sonde_step_at(&p, 600), 7);
    check_u64(sonde_step_at(&p, 601), SONDE_NO_STEP);
    /* parts add up per node and step */
    check(sonde_step_part_add(&p, 5, 2, 1, 40, 40) == 0 &&
          sonde_step_part_add(&p, 5, 3, 1, 10, 10) == 0 &&
          sonde_step_part_add(&p, 5, 2, 1, 20, -30) == 0, "parts");
    check_u64(p.nstep_parts, 2);
    check_u64(p.step_parts[0].calls, 2);
    check_u64(p.step_parts[0].total, 60);
    check(p.step_parts[0].self == 10, "self summed");
    p.steps = NULL;
    p.nsteps = 0;
    sonde_profile_free(&p);
}

void test_ops(void)
{
    test_placement();
    test_step_at();
}
