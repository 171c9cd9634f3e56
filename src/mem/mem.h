/* mem.h - sonde mem as the line tracer sees it: the few calls that tell
 * the memory profiler where the program is (the whole model: account.h).
 *
 * With line events, the line tracer reports each activation of a traced
 * function it opens and closes (mem_frame_enter / mem_frame_leave) and
 * each line the innermost one starts (mem_line); the memory profiler keeps
 * a shadow stack per thread in step with the tracer's, and gives each line
 * the bytes its thread allocated and released between the line's start
 * and its end, callees included.  The line tracer's event sources also
 * say when the interpreter made an object only to report an event
 * (mem_forget), which is not the program's memory.
 *
 * Every call here is for the calling thread, which holds the GIL (the
 * caller's promise: this part compiles without Python). */
#ifndef SONDE_MEM_H
#define SONDE_MEM_H

#include <stdint.h>

typedef struct mem_data mem_data;

/* A code object the memory profiler follows (see memory.h's
 * mem_add_site) is a site, named by its index. */
#define MEM_NO_SITE UINT32_MAX
/* Code nested in a traced function (a lambda, a comprehension): it runs
 * on its function's lines, which count its bytes already. */
#define MEM_NESTED (UINT32_MAX - 1)

/* An activation of `site` (or MEM_NESTED) starts on top of the thread's
 * stack.  0, or -1 on out of memory (nothing was pushed). */
int mem_frame_enter(mem_data *m, uint32_t site);
/* The activation on top ends: its open line closes. */
void mem_frame_leave(mem_data *m);
/* The activation on top starts `line` (-1: a line that is not its own):
 * the line it had open closes. */
void mem_line(mem_data *m, int line);

/* Marks what the calling thread allocates until mem_busy_end as sonde's
 * own (nested pairs are fine). */
void mem_busy_begin(void);
void mem_busy_end(void);

/* An interpreter event: the block this thread sampled last, if any, was
 * the program's (see mem_forget_fresh). */
void mem_event(void);
/* Takes back the block at p, made by the interpreter only because sonde
 * is listening (an event's argument, a frame object made for a trace
 * function): as if it had never been allocated. */
void mem_forget(void *p);
/* mem_forget(p) when p is still the block this thread's last sample
 * followed, with no event since; then as mem_event. */
void mem_forget_fresh(void *p);

#endif
