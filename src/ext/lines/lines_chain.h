/* lines_chain.h - a program's own trace function beside sonde's line hook
 * (up to 3.11, where a thread has one trace slot).  sys.settrace, a
 * debugger (pdb) or a C tracer (coverage's) put their function in the
 * slot sonde's hook is in; lines_legacy.c takes the slot back at the next
 * event and holds the program's function in a chain, which it passes
 * every event on to, so both see every line, and sys.gettrace answers
 * what it would answer in a bare run. */
#ifndef SONDE_LINES_CHAIN_H
#define SONDE_LINES_CHAIN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000
#include <frameobject.h>

/* The program's trace function and its object (a strong reference), as
 * the interpreter would call them. */
typedef struct trace_chain {
    PyObject_HEAD
    Py_tracefunc func;
    PyObject *obj;
} trace_chain;

/* A new chain to func and obj; NULL with an exception. */
PyObject *trace_chain_new(Py_tracefunc func, PyObject *obj);

/* Whether o is a chain (the hook's object in a thread that has one). */
int trace_chain_check(PyObject *o);

/* Passes an event on to the program's function, as the interpreter
 * would: its answer (0, or -1 with an exception).  The chain stays alive
 * while the function runs, even if it takes the slot away. */
int trace_chain_pass(PyObject *chain, PyFrameObject *frame, int what, PyObject *arg);

/* Puts sys.gettrace in place of the interpreter's while sonde's hook is
 * in, and back again: it answers the program's function where a thread
 * holds one, None where sonde's hook is alone.  hook is sonde's trace
 * function.  0, or -1 with an exception. */
int trace_chain_gettrace_install(Py_tracefunc hook);
int trace_chain_gettrace_remove(void);

#endif
#endif
