/* merge.c - eval frames replaced by the Python frames they run; see merge.h. */
#include "merge.h"

#include <string.h>

static void put(sonde_merge_out *out, uint32_t max, uint32_t *n, int python, uint32_t index)
{
    if (*n < max)
        out[(*n)++] = (sonde_merge_out){ (uint8_t)python, index };
}

/* Python frames [from, end of the run that starts there): returns the next run's start. */
static uint32_t put_run(const uint8_t *entry, uint32_t np, uint32_t from, sonde_merge_out *out,
                        uint32_t max, uint32_t *n)
{
    uint32_t i = from;
    while (i < np) {
        put(out, max, n, 1, i);
        if (entry[i++])
            break;
    }
    return i;
}

static uint32_t count_runs(const uint8_t *entry, uint32_t np)
{
    uint32_t runs = 0;
    for (uint32_t i = 0; i < np;)
        for (runs++; i < np && !entry[i++];)
            ;
    return runs;
}

int sonde_merge(const uint8_t *kinds, uint32_t nn, const uint8_t *entry, uint32_t np,
                int native_complete, int keep_interp, sonde_merge_out *out, uint32_t max,
                uint32_t *n)
{
    uint32_t evals = 0, runs = count_runs(entry, np);
    for (uint32_t i = 0; i < nn; i++)
        evals += kinds[i] == SONDE_MERGE_EVAL;
    int result;
    if (evals == runs)
        result = SONDE_MERGE_EXACT;
    else if (evals == runs + 1)
        result = SONDE_MERGE_TOLERATED;
    else if (evals < runs && !native_complete)
        result = SONDE_MERGE_PARTIAL;
    else
        result = SONDE_MERGE_AMBIGUOUS;
    /* Frames [0, inner) are inside the innermost eval frame. */
    uint32_t inner = 0;
    while (inner < nn && kinds[inner] != SONDE_MERGE_EVAL)
        inner++;
    int keep_all = keep_interp || (np == 0 && evals == 0);
    *n = 0;
    uint32_t next = 0, skip_empty = result == SONDE_MERGE_TOLERATED;
    for (uint32_t i = 0; i < nn; i++) {
        if (kinds[i] == SONDE_MERGE_EVAL) {
            if (result == SONDE_MERGE_AMBIGUOUS)
                break;
            if (skip_empty)
                skip_empty = 0;   /* the innermost eval frame: no Python frame yet */
            else
                next = put_run(entry, np, next, out, max, n);
        } else if (kinds[i] == SONDE_MERGE_NATIVE || keep_all ||
                   (i < inner && kinds[i] == SONDE_MERGE_INTERP)) {
            put(out, max, n, 0, i);
        }
    }
    while (next < np)   /* PARTIAL's outer runs; AMBIGUOUS's whole stack */
        next = put_run(entry, np, next, out, max, n);
    return result;
}

enum sonde_merge_kind sonde_merge_kind_of(const char *symbol, int in_interpreter)
{
    static const char eval[] = "_PyEval_EvalFrameDefault";
    size_t len = sizeof eval - 1;
    if (symbol && strncmp(symbol, eval, len) == 0 && (symbol[len] == '\0' || symbol[len] == '.'))
        return SONDE_MERGE_EVAL;
    if (!in_interpreter)
        return SONDE_MERGE_NATIVE;
    if (!symbol || strstr(symbol, "call") || strstr(symbol, "Call") ||
        strncmp(symbol, "_PyEval_", 8) == 0)
        return SONDE_MERGE_CALL;
    return SONDE_MERGE_INTERP;
}
