/* merge.h - one stack from a thread's native frames and its Python frames.
 *
 * The interpreter's evaluation loop (_PyEval_EvalFrameDefault, and its
 * .cold part, which is the same frame) shows in the native stack once per
 * C-level call into Python; each such frame is replaced by the Python
 * frames it was running.  Which Python frames those are depends on the
 * version: up to 3.10 every Python call is one C call (one frame per eval
 * frame); 3.11 runs Python-to-Python calls inside one eval call, and marks
 * the first frame of each eval call (is_entry); 3.12+ push a shim frame
 * (owned by the C stack) under the first frame of each eval call.  The
 * walker turns either mark into `entry` on the outermost Python frame of
 * each run (walker.h: entry[]), so one rule serves every version: runs (innermost first) are
 * matched to eval frames (innermost first).  The interpreter's other
 * frames are dropped unless asked for where Python frames stand for them
 * (between eval frames, and outside the outermost); inside the innermost
 * eval frame its own work is kept (sorted()'s list_sort, the garbage
 * collector, the libc calls they make), its call machinery is not (the
 * functions that take a call to a builtin or an extension:
 * PyObject_Vectorcall, cfunction_call ...); a stack without Python
 * (start-up, shutdown) keeps every frame.  Every other native frame is
 * kept where it is.
 *
 * The match is exact when the counts agree.  One eval frame more than
 * runs is tolerated: it is the innermost, caught entering or leaving a
 * call before its Python frame exists; it gets no Python frames.  An
 * incomplete native stack (the unwind stopped early) may hold fewer eval
 * frames: the runs left over are outer to everything it holds and go at
 * the outer end.  Any other disagreement is ambiguous: the result is the
 * native frames inside the innermost eval frame (they were called by the
 * innermost Python frame whatever else is wrong) under the whole Python
 * stack, and the caller counts it.  Nothing is guessed or dropped. */
#ifndef SONDE_NATIVE_MERGE_H
#define SONDE_NATIVE_MERGE_H

#include <stdint.h>

#include "outcomes.h"

enum sonde_merge_kind {
    SONDE_MERGE_NATIVE = 0,   /* a frame to keep: extension, library, program */
    SONDE_MERGE_EVAL,         /* the evaluation loop: replaced by Python frames */
    SONDE_MERGE_INTERP,       /* the interpreter's own work: kept inside the innermost eval frame */
    SONDE_MERGE_CALL,         /* its call machinery, or code without a name: dropped by default */
};

typedef struct sonde_merge_out {   /* one frame of the merged stack */
    uint8_t python;                /* 1: python[index], 0: native[index] */
    uint32_t index;
} sonde_merge_out;

/* Merges native kinds[0 .. nn) and Python frames with entry marks
 * entry[0 .. np) (both innermost first) into out[0 .. *n), innermost
 * first, at most max (the outer end is cut beyond).  keep_interp keeps
 * every frame of the interpreter; native_complete says the unwind reached the
 * outermost frame.  Returns an enum sonde_merge_result. */
int sonde_merge(const uint8_t *kinds, uint32_t nn, const uint8_t *entry, uint32_t np,
                int native_complete, int keep_interp, sonde_merge_out *out, uint32_t max,
                uint32_t *n);

/* The kind of a native frame: its symbol name (NULL when none covers it)
 * and whether its object is the interpreter (libpython, or a python
 * executable with the interpreter linked in).  Call machinery: a name
 * that says "call" (PyObject_Vectorcall, _PyObject_MakeTpCall,
 * cfunction_call, method_vectorcall_O ...) or _PyEval's other functions. */
enum sonde_merge_kind sonde_merge_kind_of(const char *symbol, int in_interpreter);

#endif
