/* lines_table.h - line_profiler's table from a lines JSON document
 * (what sonde lines -o writes), for sonde lines, sonde report and
 * sonde.LineProfiler.print_stats alike. */
#ifndef SONDE_LINES_TABLE_H
#define SONDE_LINES_TABLE_H

#include <stddef.h>

#include "../core/buf.h"
#include "json_read.h"

/* Appends the table to b; unit is "s", "ms", "us", "ns" or NULL for the
 * most readable.  0, or -1 with a message when the document is not one. */
int sonde_lines_table(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                      size_t errlen);

#endif
