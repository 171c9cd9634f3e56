/* monitoring.c - sys.monitoring from C; see monitoring.h. */
#include "monitoring.h"

#if PY_VERSION_HEX >= 0x030C0000

#include <stdarg.h>

PyObject *sonde_mon_attr(const char *name)
{
    PyObject *mon = PySys_GetObject("monitoring"); /* borrowed; no import: a profiler that
                                                      turns on and off at each call of a
                                                      decorated function calls this often */
    if (!mon) {
        PyErr_SetString(PyExc_RuntimeError, "sys.monitoring is missing");
        return NULL;
    }
    return PyObject_GetAttrString(mon, name);
}

int sonde_mon_call(const char *name, const char *fmt, ...)
{
    PyObject *fn = sonde_mon_attr(name);
    va_list ap;
    va_start(ap, fmt);
    PyObject *args = fn ? Py_VaBuildValue(fmt, ap) : NULL;
    va_end(ap);
    PyObject *r = args ? PyObject_CallObject(fn, args) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(args);
    Py_XDECREF(fn);
    return r ? 0 : -1;
}

/* The events' bits, by name: constants of sys.monitoring, looked up once.
 * The names are the callers' string constants.  GIL. */
static struct {
    const char *name;
    long bit;
} known_events[24];

long sonde_mon_event(const char *name)
{
    size_t i = 0;
    for (; i < sizeof known_events / sizeof known_events[0] && known_events[i].name; i++)
        if (known_events[i].name == name)
            return known_events[i].bit;
    PyObject *events = sonde_mon_attr("events");
    PyObject *v = events ? PyObject_GetAttrString(events, name) : NULL;
    long bit = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    Py_XDECREF(events);
    if (bit >= 0 && i < sizeof known_events / sizeof known_events[0]) {
        known_events[i].name = name;
        known_events[i].bit = bit;
    }
    return bit;
}

int sonde_mon_register(int tool, PyMethodDef *callbacks, size_t n, int on, long *mask)
{
    *mask = 0;
    for (size_t i = 0; i < n; i++) {
        long bit = sonde_mon_event(callbacks[i].ml_name);
        PyObject *fn = bit < 0 ? NULL : on ? PyCFunction_New(&callbacks[i], NULL) : Py_NewRef(Py_None);
        int rc = fn ? sonde_mon_call("register_callback", "(ilO)", tool, bit, fn) : -1;
        Py_XDECREF(fn);
        if (rc < 0)
            return -1;
        *mask |= bit;
    }
    return 0;
}

#endif
