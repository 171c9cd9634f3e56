/* lines.h - the line tracer behind sonde lines and sonde.LineProfiler
 * (and, in memory mode, sonde mem and sonde.MemoryProfiler).
 *
 * Only code objects registered with it are traced.  For each of their
 * lines it counts hits (the line events that begin it: a line in a loop is
 * hit once per iteration), iterations (the line events that repeat the
 * line a call is on: a comprehension's items; see lines_state.h) and
 * time: from the line's
 * event to the next line event of the same frame activation, callees
 * included, as line_profiler measures.  A frame that yields, returns or
 * unwinds closes its open line; a resumed generator or coroutine starts a
 * new activation.  Up to 3.11 the events come from PyEval_SetTrace (a
 * per-thread hook, like tracer/hook_legacy.c); from 3.12 from sys.monitoring's
 * LINE and PY_* events switched on for the registered code objects only,
 * so the rest of the program runs at full speed. */
#ifndef SONDE_LINES_H
#define SONDE_LINES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Adds the LineTracer type to the module.  0, or -1 with an exception. */
int sonde_lines_add_type(PyObject *module);

#endif
