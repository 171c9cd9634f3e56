/* frames.h - what sonde mem's accounting asks of the interpreter
 * (mem_host, account.h): the calling thread's Python stack, read in place,
 * and the line of an instruction. */
#ifndef SONDE_MEM_FRAMES_H
#define SONDE_MEM_FRAMES_H

#include "../../mem/account.h"

/* frames: up to max frames of the calling thread, innermost first (with
 * or without the GIL), 0 when it has no Python thread state; line_of:
 * PyCode_Addr2Line.  Neither makes objects nor calls Python code, so they
 * may run inside an allocator hook.  Constant. */
extern const mem_host mem_python_host;

#endif
