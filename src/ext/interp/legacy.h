/* legacy.h - the per-thread C hooks of CPython up to 3.11 (profile and
 * trace functions), for the tracer's hook (tracer/hook_legacy.c) and the
 * line tracer (lines/lines_legacy.c): setting one in any thread, putting
 * one in every thread and taking it out again, reading a thread's stack. */
#ifndef SONDE_LEGACY_H
#define SONDE_LEGACY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000
#include <frameobject.h>

/* The code object a frame runs (borrowed: the running frame holds it). */
static inline PyCodeObject *sonde_frame_code(PyFrameObject *frame)
{
#if PY_VERSION_HEX >= 0x030B0000
    PyCodeObject *code = PyFrame_GetCode(frame);
    Py_DECREF(code);
    return code;
#else
    return frame->f_code;
#endif
}

/* Installs func/obj as thread ts's trace (trace = 1) or profile hook.
 * 0, or -1 with an exception. */
int sonde_legacy_set(PyThreadState *ts, int trace, Py_tracefunc func, PyObject *obj);

/* threading.settrace (trace = 1) or threading.setprofile of hook: what
 * threads started later put in first.  0, or -1 with an exception. */
int sonde_legacy_threading_hook(int trace, PyObject *hook);

/* What sonde_legacy_install and _remove do to each thread: 0, or -1 with
 * an exception. */
typedef int (*sonde_legacy_thread_fn)(PyThreadState *ts, void *arg);

/* Puts a hook in every thread of the calling thread's interpreter: gives
 * thread_hook to threading.settrace (trace = 1) or threading.setprofile,
 * which threads started later call first, then hook(ts, arg) for each
 * running thread.  0, or -1 with an exception, after unhook has taken
 * out what was put in (see sonde_legacy_remove). */
int sonde_legacy_install(int trace, PyObject *thread_hook, sonde_legacy_thread_fn hook,
                         sonde_legacy_thread_fn unhook, void *arg);

/* Takes a hook out: unhook(ts, arg) for each thread (it looks at the
 * thread's slots itself: a program may have replaced sonde's function),
 * then threading's hook.  0, or -1 with an exception (the first one). */
int sonde_legacy_remove(int trace, sonde_legacy_thread_fn unhook, void *arg);

/* Thread ts's Python frames, outermost first: *n frame objects and their
 * code objects, in two new arrays (borrowed: the thread holds its frames,
 * they their code); ts is the calling thread or one waiting for the GIL.
 * 0, or -1 on out of memory (no exception is left set). */
int sonde_legacy_stack(PyThreadState *ts, PyObject ***frames, PyObject ***codes, uint32_t *n);

#endif
#endif
