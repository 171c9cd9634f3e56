/* asyncio_sets.h - the asyncio tasks of Pythons up to 3.13, which keep no list per thread:
 * every task is in the asyncio.tasks module's sets, and who awaits whom only in each task's
 * _fut_waiter (asyncio_tasks.h reads 3.14's lists, and builds the task graph from either).
 *
 * The module is found from the globals of a frame running BaseEventLoop.run_forever (its
 * base_events module names it `tasks`): its `_all_tasks` (up to 3.11) or `_scheduled_tasks`
 * (3.12, 3.13) WeakSet, `_eager_tasks` set (3.12, 3.13) and `_current_tasks` dict (loop -> the
 * task it runs).  A task's fields and a coroutine's frame are where that version's
 * Modules/_asynciomodule.c and genobject.h put them (no header publishes TaskObj: the offsets
 * were measured on each version and are checked by the tests against the program's own view).
 * Everything read is the target's memory, bounded, and type-checked before it is followed. */
#ifndef SONDE_ASYNCIO_SETS_H
#define SONDE_ASYNCIO_SETS_H

#include <stdint.h>

#include "walker.h"

/* One task as read from the sets. */
typedef struct sonde_async_set_task {
    uint64_t addr, loop, name, coro, fut_waiter;
} sonde_async_set_task;

/* 1 when w's Python keeps its tasks in sets (up to 3.13, not free-threaded). */
int sonde_async_sets_kept(const sonde_walker *w);

/* Finds the sets through the globals of loop_frame, a frame running run_forever, into w
 * (async_found).  0, or -1 (they stay unknown). */
int sonde_async_sets_find(sonde_walker *w, uint64_t loop_frame);

/* The event loop the run_forever frame loop_frame runs (its self), or 0. */
uint64_t sonde_async_sets_loop(const sonde_walker *w, uint64_t loop_frame);

/* Reads which task each loop runs now (_current_tasks) into w->async_current, each with the
 * address of its coroutine's frame, as a thread's stack holds it. */
void sonde_async_sets_current(sonde_walker *w);

/* Every task of the sets into out (room for max): how many; *cut set when a set was torn or
 * held more than max. */
uint32_t sonde_async_sets_tasks(sonde_walker *w, sonde_async_set_task *out, uint32_t max,
                                int *cut);

/* Where a task keeps its _fut_waiter (TaskObj's task_fut_waiter), or 0 where the version
 * keeps its tasks otherwise. */
uint64_t sonde_async_sets_waiter_offset(const sonde_walker *w);

/* The tasks a future gathers (asyncio.gather's _GatheringFuture: its _children) into out
 * (room for max): how many; 0 for any other object. */
uint32_t sonde_async_sets_gathered(sonde_walker *w, uint64_t fut, uint64_t *out, uint32_t max);

/* The frame of coroutine coro: its code object and instruction field (as the walker names
 * frames), and, while it is suspended, the object on top of its stack (what it awaits, when
 * the caller finds that to be a coroutine or generator; else 0).  0, or -1 when it has no
 * frame (it ended) or cannot be read. */
int sonde_async_sets_coro(sonde_walker *w, uint64_t coro, uint64_t *code, uint64_t *instr,
                          uint64_t *awaited);

#endif
