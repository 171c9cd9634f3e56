/* runtime.h - finding CPython's _PyRuntime inside another process.
 *
 * _PyRuntime (3.7+) is the root of everything a sampler walks:
 * interpreters, threads, frames.  It lives either in the executable
 * (a static build such as Debian's /usr/bin/python3) or in a shared
 * libpython3.X.so.  Both files are read from disk through /proc/PID (so a
 * process in a container is seen through its own root), their symbols
 * give _PyRuntime's link-time address, and the process's memory map gives
 * the load bias to add.  Nothing is loaded into or run in the process. */
#ifndef SONDE_RUNTIME_H
#define SONDE_RUNTIME_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "../../core/pyversions.h"
#include "mem.h"

typedef struct sonde_runtime {
    uint64_t addr;            /* of _PyRuntime in the process */
    uint64_t bias;            /* load bias of the file it is in */
    int major, minor;
    int micro;                /* -1 when unknown */
    uint32_t hexversion;      /* PY_VERSION_HEX, 0 when unknown */
    const char *version_from; /* "_Py_DebugOffsets", "Py_Version" or "file name" */
    int in_libpython;         /* 1: a shared libpython; 0: the executable */
    char path[PATH_MAX];      /* that file, as the process's memory map names it */
} sonde_runtime;

/* Finds _PyRuntime and the Python version in process p.  0, or a
 * negative errno with one line in err: -ENOEXEC the process is not
 * CPython, -ENOTSUP a version outside the supported ones, -ESRCH the process has
 * gone, -EPERM/-EACCES not allowed, others from reading files. */
int sonde_runtime_find(const sonde_proc *p, sonde_runtime *out, char *err, size_t errlen);

#endif
