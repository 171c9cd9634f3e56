/* frames.c - the calling thread's Python stack for sonde mem's sampled
 * allocations, and the line of an instruction (see frames.h).  Up to 3.10 frames are objects
 * linked by f_back; from 3.11 they are _PyInterpreterFrame records whose
 * layout only the interpreter's internal headers give, read here as
 * tracemalloc reads them: frames not started yet, and the C stack's
 * entry records, are skipped. */
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

#include "frames.h"

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
        PyObject *executable = PyStackRef_AsPyObjectBorrow(f->f_executable);
        if (f->owner >= FRAME_OWNED_BY_INTERPRETER || _PyFrame_IsIncomplete(f) ||
            !PyCode_Check(executable))
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

static int line_of(const void *code, int offset)
{
    return PyCode_Addr2Line((PyCodeObject *)code, offset);
}

/* Constant: the hooks read it from any thread. */
const mem_host mem_python_host = { .frames = frames, .line_of = line_of };
