/* dump_async.h - sonde dump --async: the asyncio tasks of each thread, each under the task
 * that awaits it, with its coroutine chain (as Python 3.14's `python -m asyncio pstree`). */
#ifndef SONDE_DUMP_ASYNC_H
#define SONDE_DUMP_ASYNC_H

#include <stdint.h>

#include "../core/buf.h"
#include "../sampler/walker.h"

/* One thread whose tasks are shown: its state, the frame running its event loop (walker.h's
 * loop_frame), kernel id and name. */
typedef struct cli_async_thread {
    uint64_t tstate, loop_frame, native_id;
    char name[64];
} cli_async_thread;

/* The tasks of threads[0 .. n) and of threads that have ended, into b.  0, or -1 with one line
 * in err (no task lists in this version, asyncio not imported, out of memory). */
int cli_dump_async(sonde_buf *b, sonde_walker *w, int pid, const cli_async_thread *threads,
                   uint32_t n, char *err, size_t errlen);

#endif
