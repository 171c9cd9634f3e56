/* lines_table.h - line_profiler's table from a lines JSON document
 * (what sonde lines -o writes), for sonde lines, sonde report and
 * sonde.LineProfiler.print_stats alike.
 *
 * Times are shown either in one unit for the whole table (sonde's -u s,
 * ms, us, ns, or kernprof's -u 1e-6, a number of seconds), or by default
 * each with its own unit and three significant digits ("12.3 ms",
 * "456 ns"), so that a fast line's Per Hit never reads 0.0 beside a slow
 * line's Time. */
#ifndef SONDE_LINES_TABLE_H
#define SONDE_LINES_TABLE_H

#include <stddef.h>

#include "../core/buf.h"
#include "../formats/json_read.h"

/* The nanoseconds in one `unit` ("s", "ms", "us", "ns", or seconds as a
 * number from 1e-12 to 1e6) into *ns, and the table's "Timer unit:" text
 * for it into label.  0, or -1 when it is none of these. */
int sonde_lines_unit_parse(const char *unit, double *ns, char *label, size_t labellen);

/* Appends the table to b; unit as above, or NULL for a unit per time.
 * 0, or -1 with a message when the document is not one or the unit is bad. */
int sonde_lines_table_write(sonde_buf *b, const sonde_jtree *t, const char *unit, char *err,
                      size_t errlen);

#endif
