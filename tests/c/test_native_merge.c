/* test_native_merge.c - native and Python frames merged, on stacks built by hand.
 *
 * Each case is a thread as an interpreter version would show it: native
 * frames (innermost first) by kind, and the Python frame chain with that
 * version's marks (none up to 3.10, is_entry in 3.11, shims from 3.12).
 * The merged stack is written as one string: native frames by their
 * letter names, Python frames by their names, innermost first. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "sampler/native/merge.h"

enum { N = SONDE_MERGE_NATIVE, E = SONDE_MERGE_EVAL, I = SONDE_MERGE_INTERP, C = SONDE_MERGE_CALL };

/* How a version marks the first Python frame of each eval call. */
enum marks_kind {
    MARKS_NONE,    /* <= 3.10: every frame is its own eval call */
    MARKS_ENTRY,   /* 3.11: marks[i] is frame i's is_entry */
    MARKS_SHIM,    /* 3.12+: marks[i] says frame i is a shim (owned by the C stack) */
};

/* The entry marks of the chain's Python frames, as the walker reads them
 * (walker.h: entry[]), worked out here from the raw chain by hand. */
static void entries_of(enum marks_kind how, const uint8_t *marks, uint32_t nraw, uint8_t *entry,
                       uint32_t *np)
{
    *np = 0;
    for (uint32_t i = 0; i < nraw; i++) {
        if (how == MARKS_SHIM && marks[i])
            continue;
        uint8_t e = 1;
        if (how == MARKS_ENTRY)
            e = marks[i] != 0;
        else if (how == MARKS_SHIM)
            e = i + 1 == nraw || marks[i + 1];
        entry[(*np)++] = e;
    }
}

typedef struct merged {
    char text[512];
    int result;
} merged;

/* Merges natives (names[i] of kind kinds[i]) with the raw Python chain
 * pyraw (shims named "shim") marked as `how` says. */
static merged run(const char *const *names, const uint8_t *kinds, uint32_t nn,
                  const char *const *pyraw, const uint8_t *marks, uint32_t nraw,
                  enum marks_kind how, int complete, int keep_interp, uint32_t max)
{
    const char *py[64];
    uint32_t np = 0;
    for (uint32_t i = 0; i < nraw; i++)
        if (!(how == MARKS_SHIM && marks[i]))
            py[np++] = pyraw[i];
    uint8_t entry[64];
    uint32_t ne;
    entries_of(how, marks, nraw, entry, &ne);
    check_u64(ne, np);
    sonde_merge_out out[128];
    uint32_t n;
    merged m = { "", 0 };
    m.result = sonde_merge(kinds, nn, entry, np, complete, keep_interp, out, max, &n);
    for (uint32_t i = 0; i < n; i++)
        snprintf(m.text + strlen(m.text), sizeof m.text - strlen(m.text), "%s%s", i ? " " : "",
                 out[i].python ? py[out[i].index] : names[out[i].index]);
    return m;
}

#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* <= 3.10: module -> f -> g, each a C call of the eval loop; g calls
 * into a C library (lib_b calls lib_c). */
static void test_each_frame_its_own_eval(void)
{
    const char *names[] = { "lib_c", "lib_b", "eval", "call", "vectorcall", "eval", "call",
                            "eval", "run_mod", "main" };
    const uint8_t kinds[] = { N, N, E, I, I, E, I, E, I, N };
    const char *py[] = { "g", "f", "<module>" };
    const uint8_t marks[] = { 0, 0, 0 };
    merged m = run(names, kinds, COUNT(kinds), py, marks, 3, MARKS_NONE, 1, 0, 128);
    check_str(m.text, "lib_c lib_b g f <module> main");
    check_u64(m.result, SONDE_MERGE_EXACT);
    m = run(names, kinds, COUNT(kinds), py, marks, 3, MARKS_NONE, 1, 1, 128);
    check_str(m.text, "lib_c lib_b g call vectorcall f call <module> run_mod main");
}

/* 3.11: module -> f -> sorted(key=k) run in one eval call; sorted calls
 * k through C, a second eval call whose first frame (k) is is_entry; k
 * calls a C library. */
static void test_entry_frames(void)
{
    const char *names[] = { "lib", "eval.cold", "call", "sorted", "eval", "run", "main" };
    const uint8_t kinds[] = { N, E, I, I, E, I, N };
    const char *py[] = { "k", "sorted_caller", "f", "<module>" };
    const uint8_t is_entry[] = { 1, 0, 0, 1 };
    merged m = run(names, kinds, COUNT(kinds), py, is_entry, 4, MARKS_ENTRY, 1, 0,
                   128);
    check_str(m.text, "lib k sorted_caller f <module> main");
    check_u64(m.result, SONDE_MERGE_EXACT);
    /* Read without the marks (as <= 3.10), four runs for two eval
     * frames: ambiguous, so the whole Python stack under the frames
     * the innermost Python frame called. */
    m = run(names, kinds, COUNT(kinds), py, is_entry, 4, MARKS_NONE, 1, 0, 128);
    check_str(m.text, "lib k sorted_caller f <module>");
    check_u64(m.result, SONDE_MERGE_AMBIGUOUS);
}

/* 3.12+: the same program, its eval calls told apart by the shim frame
 * each pushes under its first frame. */
static void test_shim_frames(void)
{
    const char *names[] = { "lib", "eval", "call", "sorted", "eval", "run", "main" };
    const uint8_t kinds[] = { N, E, I, I, E, I, N };
    const char *py[] = { "k", "shim", "sorted_caller", "f", "<module>", "shim" };
    const uint8_t shim[] = { 0, 1, 0, 0, 0, 1 };
    merged m = run(names, kinds, COUNT(kinds), py, shim, 6, MARKS_SHIM, 1, 0, 128);
    check_str(m.text, "lib k sorted_caller f <module> main");
    check_u64(m.result, SONDE_MERGE_EXACT);
    /* Shims ignored (the chain read as one run): the counts no longer
     * agree, and the merge says so (tolerated, not exact). */
    const uint8_t no_shim_marks[] = { 0, 0, 0, 0, 0, 0 };
    const char *flat[] = { "k", "sorted_caller", "f", "<module>" };
    m = run(names, kinds, COUNT(kinds), flat, no_shim_marks, 4, MARKS_ENTRY, 1, 0,
            128);
    check_u64(m.result, SONDE_MERGE_TOLERATED);
    check_str(m.text, "lib k sorted_caller f <module> main");
}

/* An eval frame caught entering its call (its Python frame not pushed
 * yet): tolerated, it gets no Python frames. */
static void test_one_eval_too_many(void)
{
    const char *names[] = { "eval", "call", "eval", "main" };
    const uint8_t kinds[] = { E, I, E, N };
    const char *py[] = { "f", "<module>" };
    const uint8_t is_entry[] = { 0, 1 };
    merged m = run(names, kinds, COUNT(kinds), py, is_entry, 2, MARKS_ENTRY, 1, 0,
                   128);
    check_str(m.text, "f <module> main");
    check_u64(m.result, SONDE_MERGE_TOLERATED);
}

/* An unwind that stopped early: the runs it did not reach are outermost. */
static void test_incomplete_native_stack(void)
{
    const char *names[] = { "lib", "eval", "call" };
    const uint8_t kinds[] = { N, E, I };
    const char *py[] = { "g", "f", "<module>" };
    const uint8_t marks[] = { 0, 0, 0 };
    merged m = run(names, kinds, COUNT(kinds), py, marks, 3, MARKS_NONE, 0, 0, 128);
    check_str(m.text, "lib g f <module>");
    check_u64(m.result, SONDE_MERGE_PARTIAL);
    /* The same counts from a complete unwind cannot be explained. */
    m = run(names, kinds, COUNT(kinds), py, marks, 3, MARKS_NONE, 1, 0, 128);
    check_u64(m.result, SONDE_MERGE_AMBIGUOUS);
    check_str(m.text, "lib g f <module>");
}

/* Two eval frames too many, and none at all (a thread that never ran
 * Python has no Python frames: exact, all native). */
static void test_ambiguous_and_native_only(void)
{
    const char *names[] = { "lib", "eval", "eval", "eval", "main" };
    const uint8_t kinds[] = { N, E, E, E, N };
    const char *py[] = { "f" };
    const uint8_t marks[] = { 0 };
    merged m = run(names, kinds, COUNT(kinds), py, marks, 1, MARKS_NONE, 1, 0, 128);
    check_u64(m.result, SONDE_MERGE_AMBIGUOUS);
    check_str(m.text, "lib f");
    const char *worker[] = { "dgemm_kernel", "blas_thread_server", "start_thread", "clone3" };
    const uint8_t native_kinds[] = { N, N, N, N };
    m = run(worker, native_kinds, 4, NULL, NULL, 0, MARKS_NONE, 1, 0, 128);
    check_u64(m.result, SONDE_MERGE_EXACT);
    check_str(m.text, "dgemm_kernel blas_thread_server start_thread clone3");
}

/* The interpreter's own work inside the innermost eval frame stays, its
 * call machinery does not; a stack with no Python frame keeps everything. */
static void test_interpreter_frames_no_python_frame_stands_for(void)
{
    const char *names[] = { "memcmp", "unsafe_latin_compare", "list_sort", "builtin_sorted",
                            "cfunction_vectorcall", "eval", "list_sort", "eval", "main" };
    const uint8_t kinds[] = { N, I, I, I, C, E, I, E, I };
    const char *py[] = { "g", "f" };
    const uint8_t marks[] = { 0, 0 };
    merged m = run(names, kinds, COUNT(kinds), py, marks, 2, MARKS_NONE, 1, 0, 128);
    check_u64(m.result, SONDE_MERGE_EXACT);
    check_str(m.text, "memcmp unsafe_latin_compare list_sort builtin_sorted g f");
    /* An extension called through the call machinery. */
    const char *lib_names[] = { "sqlite3_step", "pysqlite_step", "cfunction_call", "eval",
                                "main" };
    const uint8_t lib_kinds[] = { N, N, C, E, I };
    m = run(lib_names, lib_kinds, COUNT(lib_kinds), py, marks, 1, MARKS_NONE, 1, 0, 128);
    check_str(m.text, "sqlite3_step pysqlite_step g");
    const char *shutdown[] = { "dict_dealloc", "PyObject_CallOneArg", "finalize_modules",
                               "Py_FinalizeEx", "Py_RunMain", "main", "__libc_start_call_main" };
    const uint8_t shutdown_kinds[] = { I, C, I, I, I, I, N };
    m = run(shutdown, shutdown_kinds, COUNT(shutdown_kinds), NULL, NULL, 0, MARKS_NONE, 1, 0,
            128);
    check_u64(m.result, SONDE_MERGE_EXACT);
    check_str(m.text, "dict_dealloc PyObject_CallOneArg finalize_modules Py_FinalizeEx "
                      "Py_RunMain main __libc_start_call_main");
}

static void test_cut_at_max(void)
{
    const char *names[] = { "lib", "eval", "main" };
    const uint8_t kinds[] = { N, E, N };
    const char *py[] = { "g", "f" };
    const uint8_t marks[] = { 0, 1 };
    merged m = run(names, kinds, COUNT(kinds), py, marks, 2, MARKS_ENTRY, 1, 0, 2);
    check_str(m.text, "lib g");
}

static void test_kinds(void)
{
    check_u64(sonde_merge_kind_of("_PyEval_EvalFrameDefault", 1), SONDE_MERGE_EVAL);
    check_u64(sonde_merge_kind_of("_PyEval_EvalFrameDefault.cold", 1), SONDE_MERGE_EVAL);
    check_u64(sonde_merge_kind_of("_PyEval_EvalFrameDefaultX", 1), SONDE_MERGE_CALL);
    check_u64(sonde_merge_kind_of("_PyEval_Vector", 1), SONDE_MERGE_CALL);
    check_u64(sonde_merge_kind_of("PyObject_Vectorcall", 1), SONDE_MERGE_CALL);
    check_u64(sonde_merge_kind_of("_PyObject_MakeTpCall", 1), SONDE_MERGE_CALL);
    check_u64(sonde_merge_kind_of("list_sort", 1), SONDE_MERGE_INTERP);
    check_u64(sonde_merge_kind_of(NULL, 1), SONDE_MERGE_CALL);
    check_u64(sonde_merge_kind_of("ffi_call", 0), SONDE_MERGE_NATIVE);
    check_u64(sonde_merge_kind_of(NULL, 0), SONDE_MERGE_NATIVE);
}

void test_native_merge(void)
{
    test_each_frame_its_own_eval();
    test_entry_frames();
    test_shim_frames();
    test_one_eval_too_many();
    test_incomplete_native_stack();
    test_ambiguous_and_native_only();
    test_interpreter_frames_no_python_frame_stands_for();
    test_cut_at_max();
    test_kinds();
}
