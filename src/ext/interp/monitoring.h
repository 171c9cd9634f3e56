/* monitoring.h - calling sys.monitoring (3.12+) from C, for the tracer's
 * hook (tracer/hook_monitoring.c) and the line tracer
 * (lines/lines_monitoring.c). */
#ifndef SONDE_MONITORING_H
#define SONDE_MONITORING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

/* sys.monitoring.NAME(*args), args built by Py_BuildValue(fmt, ...) as a
 * tuple.  0, or -1 with an exception. */
int sonde_mon_call(const char *name, const char *fmt, ...);

/* sys.monitoring.NAME (MISSING, DISABLE): a new reference, or NULL. */
PyObject *sonde_mon_attr(const char *name);

/* The number of the event called name (sys.monitoring.events.NAME), or -1. */
long sonde_mon_event(const char *name);

/* Registers each callbacks[i] with `tool` for the event named by its
 * ml_name (None instead when on is 0); the events' bits go to *mask.
 * 0, or -1 with an exception. */
int sonde_mon_register(int tool, PyMethodDef *callbacks, size_t n, int on, long *mask);

#endif
#endif
