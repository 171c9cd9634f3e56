/* memory.h - the memory profiler behind sonde mem and sonde.MemoryProfiler,
 * as the line tracer drives it: the one header the line tracer includes
 * for it.
 *
 * The line tracer registers the code objects whose lines get figures
 * (mem_add_site), starts and stops the memory profiler with itself, and
 * with line events tells it where the program is (mem.h).  The accounting
 * itself (src/mem) compiles without Python; this side holds what needs the
 * interpreter: the allocator hooks (hooks.c), reading a thread's stack
 * (frames.c), naming code objects and writing the document (document.c).
 * Everything here runs with the GIL held. */
#ifndef SONDE_MEMORY_H
#define SONDE_MEMORY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "../../mem/mem.h"

/* A new memory profiler for these settings (see LineTracer's docstring),
 * seeded from SONDE_SEED when set; NULL with an exception.  Freed with
 * mem_free once stopped. */
mem_data *mem_new(uint64_t sample_bytes, uint64_t interval_ns, int line_events);
void mem_free(mem_data *m);

/* Registers code, lines first .. first + nlines - 1, shown as `name` in
 * the document; hits: the line tracer's counts of those lines with line
 * events (borrowed: the tracer outlives m), else NULL.  Its site, or
 * MEM_NO_SITE with an exception (out of memory). */
uint32_t mem_add_site(mem_data *m, PyCodeObject *code, PyObject *name, int first, int nlines,
                      const uint64_t *hits);

/* From the stack: frames of code (sonde's launcher, which started the
 * program) and outside it are not the program's; stacks end below it.
 * code stays alive while m is used (the caller holds it). */
void mem_set_floor(mem_data *m, PyObject *code);

/* Starts recording: the hooks go in.  0, or -1 with an exception.  Stops
 * it: open activations close, the hooks come out. */
int mem_start(mem_data *m);
void mem_stop(mem_data *m);

/* In a child the program forked (sonde mem --subprocesses): recording
 * goes on from zero, now (src/mem/account.h's mem_account_forked).  0, or
 * -1 with an exception. */
int mem_forked(mem_data *m);

/* The document `sonde mem -o` writes (docs/formats.md), as bytes;
 * source_of(file, line) gives a line's text.  m is stopped.  NULL with an
 * exception. */
PyObject *mem_document(mem_data *m, PyObject *source_of);

#endif
