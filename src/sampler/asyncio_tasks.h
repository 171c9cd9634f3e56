/* asyncio_tasks.h - the asyncio tasks of another process and who awaits whom (dump --async),
 * read from outside as the stacks are.
 *
 * Where the interpreter keeps each thread's tasks in a linked list (layout task_lists), the
 * _asyncio module publishes where a task keeps its name, coroutine and awaiters in a section of
 * its own file, .AsyncioDebug (the executable, libpython or _asyncio*.so, once asyncio is
 * imported); Pythons up to 3.13 keep every task in asyncio.tasks' sets instead, and who awaits
 * whom only in each task's _fut_waiter (asyncio_sets.h).  Each task's coroutine chain is read
 * from the coroutine it runs down through the coroutines each one awaits (the object on top of
 * a suspended frame's stack), so it is named innermost first, as a stack is.  record --async
 * reads a running task's chain of awaiting tasks at each sample in place of the event loop's
 * frames, and with --async-mode all every suspended task's stack too.  Every list, chain and
 * set is the target's memory, and bounded. */
#ifndef SONDE_ASYNCIO_TASKS_H
#define SONDE_ASYNCIO_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "walker.h"

#define SONDE_ASYNC_MAX_TASKS 8192    /* tasks read, over every list */
#define SONDE_ASYNC_MAX_CHAIN 256     /* coroutines of one task's chain */
#define SONDE_ASYNC_MAX_WAITERS 1024  /* entries of one task's set of awaiters */

typedef struct sonde_async_task {
    uint64_t addr;          /* the Task object */
    uint64_t tstate;        /* the thread state whose list holds it; 0: the interpreter's (tasks
                               of threads that have ended) */
    char name[128];         /* its name, as task.get_name() gives it */
    uint32_t first_frame, nframes;   /* its chain in graph.frames, innermost first */
    uint32_t first_waiter, nwaiters; /* in graph.waiters: the objects awaiting it */
    int chain_cut;          /* the chain was longer than SONDE_ASYNC_MAX_CHAIN, or a
                               coroutine of it could not be read: its outer part is shown */
} sonde_async_task;

typedef struct sonde_async_graph {
    sonde_async_task *tasks;
    uint32_t ntasks;
    sonde_frame_sample *frames;
    uint32_t nframes;
    uint64_t *waiters;
    uint32_t nwaiters;
    int lists_cut;          /* a list was torn or longer than the bound: tasks are missing */
    int not_imported;       /* no _asyncio module is loaded: there are no tasks */
    int no_loop;            /* up to 3.13: no thread read runs an event loop, through which the
                               tasks are found: none are known */
} sonde_async_graph;

/* A thread whose tasks are read: its state, and the frame running its event loop's
 * run_forever (walker.h's loop_frame: how 3.13 and earlier tell a thread's tasks), or 0. */
typedef struct sonde_async_thread {
    uint64_t tstate, loop_frame;
} sonde_async_thread;

/* Whether the tasks of w's process can be read: 0, or -1 with one line in err when its Python
 * keeps no task lists. */
int sonde_async_check(const sonde_walker *w, char *err, size_t errlen);

/* Reads the tasks of threads[0 .. n) and the interpreter's list (3.14+; up to 3.13 every
 * task, those of no thread given under tstate 0), naming frames through w.  0 (none, and
 * not_imported or no_loop where they cannot be found yet); or -1 with one line in err: the
 * version's tasks cannot be read, or out of memory. */
int sonde_async_read(sonde_walker *w, const sonde_async_thread *threads, uint32_t n,
                     sonde_async_graph *g, char *err, size_t errlen);
void sonde_async_free(sonde_async_graph *g);

/* record --async, before each snapshot: looks for the _asyncio module's offsets (3.14+: at
 * most four times a second until the program has imported asyncio; now_ns is CLOCK_MONOTONIC),
 * or reads which task each event loop runs (up to 3.13), so that walks read each thread's
 * running task (walker.h's running_task and task_depth). */
void sonde_async_look(sonde_walker *w, uint64_t now_ns);

/* record --async: a thread sample running a task gets, in place of the frames beyond the task's
 * coroutine (the event loop's), a "<task NAME>" frame, the coroutine chain of the task awaiting
 * it, that one's "<task NAME>", and so on down to a task nothing awaits (at most 64 tasks, and
 * SONDE_WALK_MAX_DEPTH frames in all). */
void sonde_async_reroot(sonde_walker *w, sonde_thread_sample *s);

/* record --async-mode all: at (initialised here) maps each task's address to its index in g.
 * 0, or -1 on out of memory. */
int sonde_async_index(const sonde_async_graph *g, sonde_u64map *at);

/* record --async-mode all: the stack of g's task k, suspended, into s's frames (the caller sets
 * its thread): its coroutine chain, its "<task NAME>", then the chain and name of the task
 * awaiting it, and so on, as sonde_async_reroot goes on from a running one (at: by
 * sonde_async_index). */
void sonde_async_task_stack(sonde_walker *w, const sonde_async_graph *g, const sonde_u64map *at,
                            uint32_t k, sonde_thread_sample *s);

/* The index of the task at address addr in g, or -1. */
int64_t sonde_async_find(const sonde_async_graph *g, uint64_t addr);

#endif
