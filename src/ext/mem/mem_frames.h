/* mem_frames.h - the calling thread's Python stack, read in place. */
#ifndef SONDE_MEM_FRAMES_H
#define SONDE_MEM_FRAMES_H

/* One frame: its code object and the offset (in bytes) of the
 * instruction it is running, or -1 before its first one. */
typedef struct mem_frame {
    const void *code;
    int offset;
} mem_frame;

/* Up to max frames of the calling thread, innermost first (with or
 * without the GIL); 0 when it has no Python thread state.  Makes no objects and calls no Python code, so
 * it may run inside an allocator hook. */
int mem_frames(mem_frame *out, int max);

#endif
