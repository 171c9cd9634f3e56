/* cython_name.h - the Python name of a function Cython compiled, from its C symbol.
 *
 * Cython names a module's C functions after the module's dotted name,
 * each part prefixed by its length ("7sklearn_5utils_8_sorting_"), behind
 * a prefix telling what the function is (Cython's Naming.py: __pyx_f_ a
 * cdef function, __pyx_pf_ a def function's body, __pyx_pw_ its Python
 * wrapper, __pyx_gb_ a generator's body; __pyx_fuse_N before one of a
 * fused function's specialisations), a def function's name after a
 * number of its own.  A frame of __pyx_f_7sklearn_5utils_8_sorting_
 * introsort_3way reads better as sklearn.utils._sorting.introsort_3way,
 * the name the .pyx file gives it. */
#ifndef SONDE_NATIVE_CYTHON_NAME_H
#define SONDE_NATIVE_CYTHON_NAME_H

#include <stddef.h>

/* The dotted Python name of Cython's function symbol sym (its module's
 * parts, any class's, and its own name) into out (NUL-terminated, cut to
 * fit).  1, or 0 when sym is no Cython function's symbol (out untouched). */
int sonde_cython_name(const char *sym, char *out, size_t outlen);

#endif
