/* linetable.h - the source line of an instruction, from a code object's line table (every
 * supported version).
 *
 * The table is the bytes object at code_linetable, read from the target: untrusted.  Decoding
 * stays inside `len` bytes, takes time linear in `len`, and rejects malformed tables.
 *   SONDE_PY_LNOTAB (3.8/3.9 co_lnotab): (byte delta u8, line delta i8) pairs; an instruction
 *     past the last pair keeps the last line (the table does not know the code's length).
 *   SONDE_PY_LINETABLE_310 (3.10 co_linetable): (byte length u8, line delta i8) ranges; a delta
 *     of -128 means the range has no line.
 *   SONDE_PY_LOCATIONS_311 (3.11+ co_linetable): location entries, each covering 1-8 code units
 *     (CACHE units included); entries of code 15 have no location. */
#ifndef SONDE_SAMPLER_PYTHON_LINETABLE_H
#define SONDE_SAMPLER_PYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* The line of the instruction at code-unit `index` (2-byte units in every version; see
 * sonde_py_instr_index()): 0 with *line set, or -1 when the index lies past the table, its
 * instruction has no line, or the table is malformed.  `table` may be NULL when len is 0. */
int sonde_py_line_for(enum sonde_py_line_format format, const uint8_t *table, size_t len,
                      int firstlineno, uint32_t index, int *line);

#endif
