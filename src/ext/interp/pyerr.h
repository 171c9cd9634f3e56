/* pyerr.h - keeping a Python program's pending exception intact around
 * code of sonde's that may raise and clear its own. */
#ifndef SONDE_PYERR_H
#define SONDE_PYERR_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct saved_error {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} saved_error;

static inline saved_error error_save(void)
{
    saved_error e;
#if PY_VERSION_HEX >= 0x030C0000
    e.exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&e.type, &e.value, &e.tb);
#endif
    return e;
}

static inline void error_restore(saved_error e)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(e.exc);
#else
    PyErr_Restore(e.type, e.value, e.tb);
#endif
}

#endif
