/* table.h - the pstats-style text report.
 *
 * The table pstats prints (ncalls tottime percall cumtime percall
 * filename:lineno(function)), sorted and cut, or the callers/callees
 * listings of the functions a regular expression selects. */
#ifndef SONDE_TABLE_H
#define SONDE_TABLE_H

#include <stddef.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

typedef struct sonde_table_opts {
    const char *sort;        /* tottime, cumtime, ncalls, pcalls, name, file, line */
    long limit;              /* rows; 0 = all */
    const char *callers_re;  /* extended regex, or NULL */
    const char *callees_re;
} sonde_table_opts;

/* 1 when key names a sort order (aliases: time, cumulative, calls, filename). */
int sonde_table_sort_known(const char *key);

/* Appends the report to b: the table, or, when callers_re or callees_re
 * is given, only what they ask for (as pstats' print_callers does).  0, or
 * -1 with a message (bad regex, bad key). */
int sonde_table_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                      const sonde_table_opts *o, char *err, size_t errlen);

/* The label pstats shows: "file:line(name)", or "{label}" for C functions
 * (as terminal text: sonde_buf_text_str). */
void sonde_table_func_label(sonde_buf *b, const sonde_profile *p, uint32_t func);

#endif
