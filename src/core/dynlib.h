/* dynlib.h - a shared library's functions, loaded when first needed.
 *
 * sonde builds without the headers of the libraries it can do without
 * (zlib for gzipped pprof files, elfutils' libdw for native frames'
 * file:line): each is opened by its soname at run time and its functions
 * bound into a struct of function pointers that the caller declares as the
 * library's ABI has them.  Absent, the caller goes on without it and says
 * so. */
#ifndef SONDE_DYNLIB_H
#define SONDE_DYNLIB_H

#include <stddef.h>

/* One function: its field's offset in the caller's table, and its name. */
typedef struct sonde_dynlib_fn {
    size_t at;
    const char *name;
} sonde_dynlib_fn;

/* Opens soname and sets each table field fns[i].at to the function
 * fns[i].name.  0 (the library stays loaded for the life of the process),
 * or -1 with why in why[0..whylen): "libz.so.1 is not installed" or
 * "the libz.so.1 here has no inflate" (the table is then not to be used). */
int sonde_dynlib_load(const char *soname, void *table, const sonde_dynlib_fn *fns, size_t n,
                      char *why, size_t whylen);

#endif
