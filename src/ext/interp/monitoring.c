/* monitoring.c - sys.monitoring from C; see monitoring.h. */
#include "monitoring.h"

#if PY_VERSION_HEX >= 0x030C0000

#include <stdarg.h>

PyObject *sonde_mon_attr(const char *name)
{
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *mon = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    PyObject *attr = mon ? PyObject_GetAttrString(mon, name) : NULL;
    Py_XDECREF(mon);
    Py_XDECREF(sys);
    return attr;
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

long sonde_mon_event(const char *name)
{
    PyObject *events = sonde_mon_attr("events");
    PyObject *v = events ? PyObject_GetAttrString(events, name) : NULL;
    long bit = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    Py_XDECREF(events);
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
