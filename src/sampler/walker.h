/* walker.h - one snapshot of every Python thread's stack in another process.
 *
 * The walker attaches to a process by reading its memory only (no ptrace
 * stop, nothing loaded into it): it finds _PyRuntime, picks the layout of
 * that CPython version, and on each call to sonde_walker_sample follows
 * interpreter -> thread states -> frames -> code objects.  Code objects are
 * resolved once into the caller's profile (file, first line, name,
 * qualname) and cached with their line table.  From 3.11 a thread's frames
 * sit in its data-stack chunk, which is copied in one read, and the code
 * objects of a whole stack are checked in one scatter read; the
 * interpreter, its GIL and the first thread state are read together from
 * where the last snapshot found them, and a thread's frames outside its
 * chunk together with the chunk (and, for the thread holding the GIL, the
 * garbage collector's flag), from where its last walk found them: a
 * sample costs three or four system calls per thread, not one per frame.  Everything read is untrusted: depths,
 * thread counts and string lengths are capped, and a read that fails
 * because the target was mid-update marks that thread's sample torn
 * instead of failing the whole snapshot.  What the caller asks beyond
 * frames is read in the same walk: each thread's CPU time from /proc
 * (cpu_time), the exception it handles (read_exceptions), and whether a
 * thread filter keeps it (filter: one it leaves out is not read).  A
 * walker is used from one thread at a time: it owns every buffer it reads
 * into. */
#ifndef SONDE_WALKER_H
#define SONDE_WALKER_H

#include <stddef.h>
#include <stdint.h>

#include "../core/profile.h"
#include "../core/u64map.h"
#include "proc/mem.h"
#include "proc/runtime.h"
#include "python/layout.h"
#include "python/unicode.h"
#include "thread_filter.h"

/* Frames kept per thread, innermost first: a deeper stack keeps its
 * innermost SONDE_WALK_MAX_DEPTH frames and is marked truncated.  Above
 * Python's default recursion limit (1000), and at most one scatter read
 * (SONDE_PROC_SCATTER_MAX) of code objects. */
#define SONDE_WALK_MAX_DEPTH 1024
#define SONDE_WALK_MAX_INTERPS 1024  /* interpreters one snapshot walks */
/* The words of the _asyncio module's debug offsets (_Py_AsyncioModuleDebugOffsets, 3.14+), in
 * three groups each led by its struct's size: the task object, the interpreter state (its list
 * of the tasks of threads that have ended) and the thread state (its running loop and task, its
 * list of tasks). */
enum sonde_async_word {
    SONDE_ASYNC_TASK_SIZE, SONDE_ASYNC_TASK_NAME, SONDE_ASYNC_TASK_AWAITED_BY,
    SONDE_ASYNC_TASK_IS_TASK, SONDE_ASYNC_TASK_AWAITED_BY_IS_SET, SONDE_ASYNC_TASK_CORO,
    SONDE_ASYNC_TASK_NODE, SONDE_ASYNC_INTERP_SIZE, SONDE_ASYNC_INTERP_TASKS_HEAD,
    SONDE_ASYNC_THREAD_SIZE, SONDE_ASYNC_THREAD_LOOP, SONDE_ASYNC_THREAD_TASK,
    SONDE_ASYNC_THREAD_TASKS_HEAD, SONDE_ASYNC_OFFSETS
};
#define SONDE_ASYNC_CURRENT_MAX 16  /* event loops whose running task is read (up to 3.13) */
#define SONDE_WALK_BATCH 256   /* threads walked per call: a snapshot takes as many calls as it needs */

typedef struct sonde_frame_sample {
    uint32_t func;   /* function id in the walker's profile */
    int32_t line;    /* the line the frame is at */
} sonde_frame_sample;

typedef struct sonde_thread_sample {
    uint64_t tstate;       /* the thread state's address: stable while the thread lives */
    uint64_t thread_id;    /* threading.get_ident() (pthread_self) */
    uint64_t native_id;    /* the kernel's thread id, 0 when unknown */
    int64_t interp_id;     /* its interpreter's id: 0 the main one, else a subinterpreter */
    int holds_gil;         /* 1 when this thread holds the GIL */
    int in_gc;             /* 1 when it holds the GIL while its interpreter's garbage
                              collector runs: it is collecting */
    int on_cpu;            /* 1 running, 0 sleeping or blocked (or, with cpu_time, no
                              CPU used since its last sample), -1 unknown */
    int cpu_read;          /* with cpu_time: cpu_ns was read (else unknown) */
    uint64_t cpu_ns;       /* with cpu_time: CPU ns the thread used since its CPU was
                              last taken (see sonde_walker.cpu_time) */
    int filtered;          /* left out by the walker's filter: not read */
    int undecided;         /* the filter waits for its Python name (walker.c) */
    int in_except;         /* with read_exceptions: it handles an exception ... */
    uint32_t exc_func;     /* ... of this type (a function id; SONDE_NO_FUNC unknown) */
    int torn;              /* the stack could not be read whole this time */
    int truncated;         /* deeper than SONDE_WALK_MAX_DEPTH: outer frames dropped */
    uint64_t outer_frame;  /* the outermost Python frame's address (0 when truncated) */
    uint64_t running_task; /* with async_found: the asyncio task the thread runs (0: none) */
    uint32_t task_depth;   /* ... and how many of its innermost frames are that task's, its
                              coroutine's frame the last (0: that frame was not met) */
    uint64_t loop_frame;   /* the innermost frame running asyncio's run_forever (0: none),
                              whose loop's tasks are this thread's (asyncio_sets.h) */
    uint32_t depth;
    sonde_frame_sample frames[SONDE_WALK_MAX_DEPTH];
    /* entry[i]: frame i is the first (outermost) Python frame of one C
     * call of the evaluation loop, where native frames merge (see
     * native/merge.h): every frame up to 3.10, is_entry in 3.11, the
     * frame just inside a shim frame from 3.12; the outermost always. */
    uint8_t entry[SONDE_WALK_MAX_DEPTH];
} sonde_thread_sample;

typedef struct sonde_code_info sonde_code_info;
typedef struct sonde_outside_frames sonde_outside_frames;

#define SONDE_WALK_STATE_MAX 1280  /* bytes of a thread state read (the running asyncio task
                                      lies at 872 in 3.14's, 1032 in 3.15's) */

typedef struct sonde_walker {
    sonde_proc proc;
    sonde_runtime runtime;
    sonde_py_layout layout;
    sonde_profile *profile;      /* borrowed: where functions are interned */
    sonde_u64map code_index;     /* code object address -> codes[] index */
    sonde_code_info *codes;
    uint32_t ncodes;
    size_t codes_cap;
    sonde_u64map lines;          /* codes[] index << 32 | instruction index -> its line */
    int64_t pthread_tid_offset;  /* <= 3.10: where struct pthread keeps the TID; -1 unknown */
    uint8_t *chunk_buf;          /* a copy of the thread's newest stack chunk (3.11+) */
    uint8_t *code_blocks;        /* code object headers of one stack, read together */
    /* Where the last snapshot found the interpreter, its GIL and its first
     * thread state: each snapshot reads them all again, with that thread
     * state, in one scatter read, and goes field by field only when one
     * of them has moved.  head_state is the first thread state as that
     * read found it, while head_fresh. */
    uint64_t interp, gil, head;
    int head_fresh;
    /* Subinterpreters: the interpreter after the first in the list (0
     * when it is the only one), read with it; the interpreter of the
     * thread state a batch stopped at, and its id; how many interpreters
     * this snapshot has reached (their list is the target's). */
    uint64_t head_next;
    uint64_t cursor_interp;
    int64_t cursor_interp_id;
    uint32_t interps_walked;
    uint8_t head_state[SONDE_WALK_STATE_MAX];
    /* The collection under way: its interpreter's collector flag (its
     * address; 0 none seen) and the thread seen collecting (walker.c's
     * collector()). */
    uint64_t gc_flag, gc_tstate;
    /* Per thread, the frames its last walk read outside its stack chunk
     * (every frame up to 3.10; shim and base frames from 3.12), read
     * again with the chunk in one scatter read into outside_blocks. */
    sonde_outside_frames *outside;
    uint8_t *outside_blocks;
    /* A code object's names while they are resolved (too large for the stack). */
    char code_file[SONDE_PY_STR_UTF8_MAX], code_name[SONDE_PY_STR_UTF8_MAX],
        code_qualname[SONDE_PY_STR_UTF8_MAX];
    struct sonde_stat_fd {       /* /proc/PID/task/TID/stat kept open, read with pread */
        uint64_t tid;
        int fd;
        int sched_fd;            /* its schedstat: -1 not opened yet, -2 none */
        int cpu_seen;            /* cpu_ns holds a reading */
        uint64_t cpu_ns;         /* the thread's CPU time when it was last read */
        uint64_t cpu_credit;     /* CPU it used that no sample has weighed yet */
        uint64_t taken_at;       /* CLOCK_MONOTONIC ns of its last weighed sample */
    } stat_fds[SONDE_WALK_BATCH];   /* the most recently used ones */
    uint32_t nstat_fds;
    /* Set by the caller: a thread whose /proc state says it is not on a
     * CPU is not walked (depth 0, on_cpu 0); its state is read from /proc
     * first, where the thread state gives its native id (3.11+). */
    int skip_idle;
    /* Set by the caller: each thread's CPU time (schedstat's on-CPU ns,
     * else stat's utime + stime) is read instead of its state alone; a
     * thread that is running and used CPU no sample has weighed yet gets
     * some of it in cpu_ns (on_cpu 1): at most the time since its last
     * weighed sample, so that the steps the kernel's figure moves by at
     * its scheduler tick are spread over the samples that saw the thread
     * run; any other is left unread (on_cpu 0) and its time stays for
     * the next sample that sees it run.  A thread's first sight takes at
     * most cpu_first_ns. */
    int cpu_time;
    uint64_t cpu_first_ns;
    /* Set by the caller: only the threads this filter keeps are read
     * (the others: filtered); NULL reads every thread. */
    struct sonde_thread_filter *filter;
    /* Set by the caller: each thread's handled exception is read
     * (in_except, exc_func), where the layout has it. */
    int read_exceptions;
    char exc_name[136];          /* "<except NAME>" while it is resolved */
    /* --async (asyncio_tasks.h): the _asyncio module's debug offsets, once found (they appear
     * when the program imports asyncio; looked for at most four times a second until then, and
     * at once when a frame of asyncio's code is met), and what each type met on the task graph
     * is to it (type address -> asyncio_tasks.c's type_kind). */
    int async_found;
    int async_hint;              /* a frame of asyncio's own code was met: look again now */
    uint64_t async_looked_ns;
    uint64_t async_off[SONDE_ASYNC_OFFSETS];
    sonde_u64map async_types;
    /* Up to 3.13 (asyncio_sets.h): asyncio.tasks' WeakSet data, eager set and _current_tasks,
     * once found from a frame running run_forever (by the walk that first meets one, where the
     * caller set async_wanted); each loop's running task with its coroutine's frame, read
     * before each snapshot; and what each type met is to those sets. */
    int async_wanted;
    uint64_t async_sets[3];
    struct {
        uint64_t frame, task;
    } async_current[SONDE_ASYNC_CURRENT_MAX];
    uint32_t async_ncurrent;
    sonde_u64map async_set_types;
    /* ... and every task, as record --async last read them (asyncio_tasks.c keeps them a
     * while: their awaiters are checked against the target as they are used) */
    struct sonde_async_set_task *async_met;
    uint32_t async_nmet;
    uint64_t async_met_ns;
    sonde_u64map exc_types;      /* type object address -> function id */
} sonde_walker;

/* Prepares an unattached walker that interns functions into profile
 * (sonde_walker_open does this first; tests attach one by hand).  0, or
 * -ENOMEM. */
int sonde_walker_init(sonde_walker *w, sonde_profile *profile);

/* Attaches to pid and interns functions into profile.  0, or a negative
 * errno with one line in err (see sonde_runtime_find). */
int sonde_walker_open(sonde_walker *w, int pid, sonde_profile *profile, char *err,
                      size_t errlen);
void sonde_walker_close(sonde_walker *w);

/* Walks the threads from *cursor (0: the first) into out[0 .. *n), at
 * most max and at most SONDE_WALK_BATCH of them, and leaves in *cursor
 * the thread state to go on from (0 once the list's end was reached): a
 * snapshot of every thread is calls until *cursor is 0 again.  Every
 * interpreter's threads are walked, the newest interpreter's first (at
 * most SONDE_WALK_MAX_INTERPS of them).  The lists are the target's, and
 * untrusted: a thread list may be cyclic, so the caller bounds how many
 * calls (or how long) one snapshot takes.  0 (some threads may
 * be torn), or -ESRCH when the process has gone, or another negative
 * errno when even the interpreter could not be read (nothing walked). */
int sonde_walker_sample(sonde_walker *w, uint64_t *cursor, sonde_thread_sample *out,
                        uint32_t max, uint32_t *n);

/* Walks only the thread whose state is at tstate (its `tstate` in an
 * earlier sonde_walker_sample) into out, as that call would; out's
 * native_id is left 0 where the interpreter does not keep it (<= 3.10).
 * 0, or a negative errno when the thread state cannot be read. */
int sonde_walker_sample_thread(sonde_walker *w, uint64_t tstate, sonde_thread_sample *out);

/* The function and line of a frame read by the caller (a suspended
 * coroutine's): its code object at `code` (untagged) and its instruction
 * field `raw_instr`, as a walk would name them.  0, or -1 when the code
 * object cannot be read. */
int sonde_walker_name_frame(sonde_walker *w, uint64_t code, uint64_t raw_instr,
                            sonde_frame_sample *out);

/* The thread's name: "MainThread", or a threading.Thread's name read from
 * its Thread object; in a subinterpreter followed by " (interpreter N)",
 * or "interpreter N" alone when it has no name.  0, or -1 when it has none that can be read. */
int sonde_walker_thread_name(const sonde_walker *w, const sonde_thread_sample *s, char *out,
                             size_t outlen);

/* Fills on_cpu of each sample from /proc where it is not known yet (needs
 * native ids): with cpu_time, cpu_ns too; with a filter, decides the
 * threads it waited for (now that their ids and names are known). */
void sonde_walker_read_states(sonde_walker *w, sonde_thread_sample *out, uint32_t n);

/* With a filter: decides each thread it has not decided yet (a thread it
 * leaves out: filtered, its frames dropped). */
void sonde_walker_decide_threads(sonde_walker *w, sonde_thread_sample *out, uint32_t n);

/* Takes each sample's CPU (cpu_ns, cpu_read), as cpu_time does, where it
 * was not taken yet: for stacks read otherwise (native frames).  A
 * thread with no CPU since gets on_cpu 0. */
void sonde_walker_read_cpu(sonde_walker *w, sonde_thread_sample *out, uint32_t n);

/* The CPU time thread tid has used since it started, in ns, into *ns (as
 * cpu_time reads it).  0, or -1 when it cannot be read. */
int sonde_walker_thread_cpu(sonde_walker *w, uint64_t tid, uint64_t *ns);

#endif
