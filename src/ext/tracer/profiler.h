/* profiler.h - the Profiler type behind sonde.Profile (profiler.c), and
 * its methods that start and stop recording, which the hooks leave out of
 * the profile as cProfile leaves out its own enable() and disable(). */
#ifndef SONDE_PROFILER_H
#define SONDE_PROFILER_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Profiler's methods, by name: their index in profiler_methods. */
enum profiler_method {
    PROFILER_ENABLE,
    PROFILER_DISABLE,
    PROFILER_PAUSE_THREAD,
    PROFILER_CLEAR,
    PROFILER_FORKED,
    PROFILER_PSTATS,
    PROFILER_WRITE,
    PROFILER_TABLE,
    PROFILER_TORCH_BEGIN,
    PROFILER_TORCH_SPANS,
    PROFILER_TORCH_PLACE,
    PROFILER_REGION_ENTER,
    PROFILER_REGION_EXIT,
    PROFILER_NMETHODS
};

/* The type's method table (a C call's key is its entry's address);
 * constant once the module is loaded. */
extern PyMethodDef profiler_methods[PROFILER_NMETHODS + 1];

/* Whether key (a C call's PyMethodDef) is enable, disable, pause_thread
 * or the region methods (which work on the stack of calls as their
 * caller left it). */
static inline int profiler_is_own(const void *key)
{
    return key == &profiler_methods[PROFILER_ENABLE] ||
           key == &profiler_methods[PROFILER_DISABLE] ||
           key == &profiler_methods[PROFILER_PAUSE_THREAD] ||
           key == &profiler_methods[PROFILER_REGION_ENTER] ||
           key == &profiler_methods[PROFILER_REGION_EXIT];
}

/* sonde.ProfilerActiveError (a ValueError and a RuntimeError): enable()
 * while another profiler records.  Set once at import; the module holds it. */
extern PyObject *profiler_active_error;

/* Adds the Profiler type to the module.  0, or -1 with an exception. */
int sonde_profiler_add_type(PyObject *module);

#endif
