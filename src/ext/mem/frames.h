/* frames.h - what sonde mem's accounting asks of the interpreter
 * (mem_host, account.h): the calling thread's Python stack, read in place,
 * the stacks of the threads that started it, and the line of an
 * instruction. */
#ifndef SONDE_MEM_FRAMES_H
#define SONDE_MEM_FRAMES_H

#include "../../mem/account.h"

/* frames: up to max frames of the calling thread, innermost first (with
 * or without the GIL), 0 when it has no Python thread state;
 * starter_frames: the same of the threads that started it, nearest
 * first (as the shim says, else the thread that called
 * mem_frames_start); line_of: PyCode_Addr2Line.  None makes objects
 * or calls Python code, so they may run inside an allocator hook.
 * Constant. */
extern const mem_host mem_python_host;

/* Called by the thread that starts recording, with the GIL. */
void mem_frames_start(void);

/* The calling thread's token for the shim (alloc_shim.h): its Python
 * thread state, or NULL. */
const void *mem_thread_token(void);

#endif
