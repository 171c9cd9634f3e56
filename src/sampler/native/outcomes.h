/* outcomes.h - how a native stack's unwind ended and how its merge with the
 * Python frames came out: the two enums the native sampler counts by, and
 * the sizes of the tally's arrays that count them (sampler.h). */
#ifndef SONDE_NATIVE_OUTCOMES_H
#define SONDE_NATIVE_OUTCOMES_H

/* How an unwind ended (unwind.h). */
enum sonde_native_end {
    SONDE_NATIVE_COMPLETE = 0,   /* reached the outermost frame */
    SONDE_NATIVE_DEPTH,          /* deeper than SONDE_NATIVE_MAX_DEPTH */
    SONDE_NATIVE_OUT_OF_COPY,    /* a read fell outside the stack copy */
    SONDE_NATIVE_NO_UNWIND_INFO, /* no CFI and no usable frame pointer */
    SONDE_NATIVE_BAD_FRAME,      /* CFI that cannot be followed, or a frame that goes nowhere */
    SONDE_NATIVE_ENDS            /* how many ways there are */
};

/* How a merge came out (merge.h says when each happens). */
enum sonde_merge_result {
    SONDE_MERGE_EXACT = 0,
    SONDE_MERGE_TOLERATED,    /* one eval frame more than runs (the innermost left empty) */
    SONDE_MERGE_PARTIAL,      /* an incomplete native stack: runs left over put outermost */
    SONDE_MERGE_AMBIGUOUS,    /* counts that no rule explains */
    SONDE_MERGE_RESULTS       /* how many results there are */
};

#endif
