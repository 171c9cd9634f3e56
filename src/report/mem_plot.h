/* mem_plot.h - the memory-over-time picture of a mem JSON document, as
 * mprof plot draws it: RSS and the followed heap against time, with a row
 * of bars per profiled function showing when it ran.  Self-contained SVG. */
#ifndef SONDE_MEM_PLOT_H
#define SONDE_MEM_PLOT_H

#include <stddef.h>

#include "../core/buf.h"
#include "../formats/json_read.h"

/* Appends the SVG to b.  0, or -1 with a message when the document has no
 * timeline. */
int sonde_mem_plot_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen);

#endif
