/* code_name.h - the one way sonde names Python code objects, in every
 * mode: the tracer (sonde run), the line tracer and the memory profiler;
 * and turns Python's text into the bytes profiles and documents hold.
 *
 * A code object is its file, first line, name and qualified name (3.11+;
 * the name before).  Profile strings are bytes: UTF-8 where the text has
 * it, else the file system's own bytes (os.fsencode: a file name that is
 * not UTF-8 is kept as Python decoded it, surrogate escapes and all), so
 * two files are never merged under one placeholder.  The writers turn
 * such bytes back into the interpreter's str (pstats), \udcXX escapes
 * (JSON) or U+FFFD (pages). */
#ifndef SONDE_CODE_NAME_H
#define SONDE_CODE_NAME_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../../core/profile.h"

/* s as profile bytes (see above): a new bytes object, or NULL with an
 * exception (out of memory).  Anything but a str gives `fallback`. */
PyObject *sonde_text_bytes(PyObject *s, const char *fallback);

/* The function of p that code stands for, created when new; SONDE_NO_FUNC
 * on out of memory (no exception is left set). */
uint32_t sonde_code_func(sonde_profile *p, PyCodeObject *code);

/* For documents written in C from Python's text: s as profile bytes, kept
 * alive by the list `keep` (anything but a str gives "").  Their text, or
 * NULL with an exception. */
const char *sonde_keep_text(PyObject *keep, PyObject *s);
/* The same for source_of(file, line): a line's text as a document shows
 * it. */
const char *sonde_keep_source(PyObject *keep, PyObject *source_of, PyObject *file, int line);

#endif
