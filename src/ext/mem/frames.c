/* frames.c - the calling thread's Python stack for sonde mem's sampled
 * allocations, the stacks of the threads that started it, and the line of
 * an instruction (see frames.h).  Up to 3.10 frames are objects linked by
 * f_back; from 3.11 they are _PyInterpreterFrame records whose layout only
 * the interpreter's internal headers give, read here as tracemalloc reads
 * them: frames not started yet, and the C stack's entry records, are
 * skipped.
 *
 * The starting thread runs on while its stack is read.  Holding the GIL,
 * the reader knows that thread's Python frames stand still; without it
 * (native code's threads) every word is copied with process_vm_readv,
 * which fails instead of faulting on memory released meanwhile, at most
 * once a millisecond per starter; no pointer read is followed but to the
 * next frame: a code object is only compared with the sites' (which sonde
 * holds). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030E0000
/* 3.14 moved _PyInterpreterFrame to pycore_interpframe(_structs).h; those headers do not
 * build under -Wextra -Werror, so their warnings are off for them alone. */
#define Py_BUILD_CORE 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "internal/pycore_code.h"
#include "internal/pycore_interpframe.h"
#pragma GCC diagnostic pop
#undef Py_BUILD_CORE
#elif PY_VERSION_HEX >= 0x030B0000
#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE
#else
#include <frameobject.h>
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../../shim/alloc_shim.h"
#include "frames.h"

/* Frames looked at per walk of another thread's stack, skipped ones
 * included: its links may form a loop while it changes. */
#define MAX_STEPS 512

#if PY_VERSION_HEX >= 0x030E0000
/* Whether a frame's executable is a tagged int, not an object (3.15 tags ints in stack
 * references; PyStackRef_AsPyObjectBorrow asserts it is not one). */
static int executable_is_int(_PyStackRef ref)
{
#ifdef Py_INT_TAG
    return (ref.bits & Py_INT_TAG) == Py_INT_TAG;
#else
    (void)ref;
    return 0;
#endif
}
#endif

static int frames(mem_frame *out, int max)
{
    /* This OS thread's state, whether it holds the GIL or not (C code
     * such as ctypes calls allocates with it released): its frames do not
     * change while it runs that code. */
    PyThreadState *ts = PyGILState_GetThisThreadState();
    int n = 0;
    if (!ts)
        return 0;
#if PY_VERSION_HEX >= 0x030E0000
    for (_PyInterpreterFrame *f = ts->current_frame; f && n < max; f = f->previous) {
        /* The interpreter's own frames, and (3.15) a frame whose executable is a tagged int,
         * hold no code object: skipped before anything reads one. */
        if (f->owner >= FRAME_OWNED_BY_INTERPRETER || executable_is_int(f->f_executable) ||
            _PyFrame_IsIncomplete(f))
            continue;
        PyObject *executable = PyStackRef_AsPyObjectBorrow(f->f_executable);
        if (!PyCode_Check(executable))
            continue;
        PyCodeObject *code = (PyCodeObject *)executable;
        out[n++] = (mem_frame){ code, (int)(f->instr_ptr - _PyCode_CODE(code)) * 2 };
    }
#elif PY_VERSION_HEX >= 0x030D0000
    for (_PyInterpreterFrame *f = ts->current_frame; f && n < max; f = f->previous) {
        if (_PyFrame_IsIncomplete(f) || !PyCode_Check(f->f_executable))
            continue;
        PyCodeObject *code = (PyCodeObject *)f->f_executable;
        out[n++] = (mem_frame){ code, (int)(f->instr_ptr - _PyCode_CODE(code)) * 2 };
    }
#elif PY_VERSION_HEX >= 0x030B0000
    for (_PyInterpreterFrame *f = ts->cframe->current_frame; f && n < max; f = f->previous) {
#if PY_VERSION_HEX >= 0x030C0000
        if (f->owner == FRAME_OWNED_BY_CSTACK)
            continue;
#endif
        if (_PyFrame_IsIncomplete(f))
            continue;
        out[n++] = (mem_frame){ f->f_code, (int)(f->prev_instr - _PyCode_CODE(f->f_code)) * 2 };
    }
#else
    for (PyFrameObject *f = ts->frame; f && n < max; f = f->f_back) {
#if PY_VERSION_HEX >= 0x030A0000
        int offset = f->f_lasti < 0 ? -1 : f->f_lasti * 2; /* 3.10 counts code units */
#else
        int offset = f->f_lasti;
#endif
        out[n++] = (mem_frame){ f->f_code, offset };
    }
#endif
    return n;
}

/* ---- the stack of the thread that started the calling one ---- */

/* The thread that started recording: the starter of every thread the
 * shim cannot name one for.  Set by mem_frames_start; read in any thread. */
static const PyThreadState *recorder;
/* The recorder's interpreter, whose thread states are the living
 * starters.  Set with it. */
static PyInterpreterState *interpreter;
/* The shim's answer to "who started me", or NULL without the shim. */
static sonde_alloc_starters_fn shim_starters;

typedef int (*read_fn)(const void *addr, void *out, size_t n);

static int read_held(const void *addr, void *out, size_t n)
{
    memcpy(out, addr, n);
    return 0;
}

static int read_careful(const void *addr, void *out, size_t n)
{
    struct iovec here = { out, n }, there = { (void *)addr, n };
    return process_vm_readv(getpid(), &here, 1, &there, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* Past this many thread states, a starter is not looked for further. */
#define MAX_THREADS 4096

/* Whether ts is one of the interpreter's thread states now: a starter may
 * have ended, its state freed.  Holding the GIL, a state found stays until
 * the GIL is let go (a thread leaves the list with it held); without it,
 * the list is read with `read` (careful), and so is what follows. */
static int alive(const PyThreadState *ts, read_fn read)
{
    const PyThreadState *at = PyInterpreterState_ThreadHead(interpreter);
    for (int i = 0; at && i < MAX_THREADS; i++) {
        if (at == ts)
            return 1;
        if (read(&at->next, &at, sizeof at))
            return 0;
    }
    return 0;
}

/* Up to max frames of ts, innermost first, each read with `read`. */
static int frames_of(const PyThreadState *ts, read_fn read, mem_frame *out, int max)
{
    int n = 0;
#if PY_VERSION_HEX >= 0x030D0000
    _PyInterpreterFrame *at, f;
    if (read(&ts->current_frame, &at, sizeof at))
        return 0;
#elif PY_VERSION_HEX >= 0x030B0000
    _PyCFrame *cframe;
    _PyInterpreterFrame *at, f;
    if (read(&ts->cframe, &cframe, sizeof cframe) || !cframe ||
        read(&cframe->current_frame, &at, sizeof at))
        return 0;
#else
    PyFrameObject *at, f;
    if (read(&ts->frame, &at, sizeof at))
        return 0;
#define previous f_back
#endif
    for (int steps = 0; at && n < max && steps < MAX_STEPS; steps++, at = f.previous) {
        if (read(at, &f, sizeof f))
            break;
#if PY_VERSION_HEX >= 0x030E0000
        if (f.owner >= FRAME_OWNED_BY_INTERPRETER || executable_is_int(f.f_executable))
            continue;
        PyCodeObject *code = (PyCodeObject *)PyStackRef_AsPyObjectBorrow(f.f_executable);
        out[n++] = (mem_frame){ code, (int)(f.instr_ptr - _PyCode_CODE(code)) * 2 };
#elif PY_VERSION_HEX >= 0x030D0000
        if (f.owner == FRAME_OWNED_BY_CSTACK)
            continue;
        PyCodeObject *code = (PyCodeObject *)f.f_executable;
        out[n++] = (mem_frame){ code, (int)(f.instr_ptr - _PyCode_CODE(code)) * 2 };
#elif PY_VERSION_HEX >= 0x030B0000
#if PY_VERSION_HEX >= 0x030C0000
        if (f.owner == FRAME_OWNED_BY_CSTACK)
            continue;
#endif
        out[n++] = (mem_frame){ f.f_code, (int)(f.prev_instr - _PyCode_CODE(f.f_code)) * 2 };
#else
#if PY_VERSION_HEX >= 0x030A0000
        int offset = f.f_lasti < 0 ? -1 : f.f_lasti * 2;
#else
        int offset = f.f_lasti;
#endif
        out[n++] = (mem_frame){ f.f_code, offset };
#undef previous
#endif
    }
    return n;
}

/* Without the GIL a careful read costs a system call per frame, and a
 * library's C threads may allocate a million times a second while their
 * starter waits on one line: each starter's stack is read carefully at
 * most once per STARTER_FRESH_NS, and the copy is lent in between (a line
 * late by at most that much; a starter that waits does not move). */
#define STARTER_FRESH_NS 1000000
#define STARTER_FRAMES 128
#define STARTERS 8

typedef struct starter_copy {
    const PyThreadState *ts;
    uint64_t read_ns;
    int n;
    mem_frame frames[STARTER_FRAMES];
} starter_copy;

/* Taken only inside the accounting's lock (mem_data.lock), which a fork
 * holds: a child never inherits it taken. */
static pthread_mutex_t starters_lock = PTHREAD_MUTEX_INITIALIZER;
static starter_copy starters[STARTERS]; /* starters_lock */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int starter_copied(const PyThreadState *ts, mem_frame *out, int max)
{
    uint64_t now = now_ns();
    pthread_mutex_lock(&starters_lock);
    starter_copy *c = &starters[0];
    for (int i = 0; i < STARTERS; i++) {
        if (starters[i].ts == ts) {
            c = &starters[i];
            break;
        }
        if (starters[i].read_ns < c->read_ns)
            c = &starters[i]; /* else the one read longest ago makes room */
    }
    if (c->ts != ts || now - c->read_ns >= STARTER_FRESH_NS) {
        c->ts = ts;
        c->read_ns = now;
        c->n = alive(ts, read_careful) ? frames_of(ts, read_careful, c->frames, STARTER_FRAMES)
                                       : 0;
    }
    int n = c->n < max ? c->n : max;
    memcpy(out, c->frames, (size_t)n * sizeof *out);
    pthread_mutex_unlock(&starters_lock);
    return n;
}

/* The frames of the threads that started the calling one, nearest
 * starter first (a thread started by a worker works for the worker's
 * starter too); an ended starter has none. */
static int starter_frames(mem_frame *out, int max)
{
    const PyThreadState *self = PyGILState_GetThisThreadState();
    const void *chain[SONDE_ALLOC_STARTERS_MAX];
    int n = shim_starters ? shim_starters(chain, SONDE_ALLOC_STARTERS_MAX) : 0;
    if (n == 0 && recorder)
        chain[n++] = recorder;
    int held = PyGILState_Check(), got = 0;
    for (int i = 0; i < n && got < max; i++) {
        const PyThreadState *ts = chain[i];
        if (ts == self)
            continue;
        if (held)
            got += alive(ts, read_held) ? frames_of(ts, read_held, out + got, max - got) : 0;
        else
            got += starter_copied(ts, out + got, max - got);
    }
    return got;
}

/* Read afresh, not through the starters' copies: a copy the timeline
 * made would be lent to the allocations of the next millisecond, a line
 * late when the recording thread has just moved on. */
static int recorder_frames(mem_frame *out, int max)
{
    return recorder && alive(recorder, read_careful)
               ? frames_of(recorder, read_careful, out, max)
               : 0;
}

void mem_frames_start(void)
{
    recorder = PyThreadState_Get();
    interpreter = recorder->interp;
    shim_starters = (sonde_alloc_starters_fn)dlsym(RTLD_DEFAULT, SONDE_ALLOC_STARTERS);
}

const void *mem_thread_token(void)
{
    return PyGILState_GetThisThreadState();
}

static int line_of(const void *code, int offset)
{
    return PyCode_Addr2Line((PyCodeObject *)code, offset);
}

/* Constant: the hooks read it from any thread. */
const mem_host mem_python_host = { .frames = frames, .starter_frames = starter_frames,
                                   .recorder_frames = recorder_frames, .line_of = line_of };
