/* mem_table.h - memory_profiler's table from a mem JSON document (what
 * sonde mem -o writes), with sonde's columns and the leaks, for sonde mem,
 * sonde report and sonde.MemoryProfiler.print_stats alike. */
#ifndef SONDE_MEM_TABLE_H
#define SONDE_MEM_TABLE_H

#include <stddef.h>

#include "../core/buf.h"
#include "../formats/json_read.h"

/* Appends the table to b.  0, or -1 with a message when the document is
 * not a mem profile. */
int sonde_mem_table_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen);

#endif
