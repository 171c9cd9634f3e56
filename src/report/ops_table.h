/* ops_table.h - the operator table a torch.profiler user knows.
 *
 * `sonde report FILE --ops`: one row per PyTorch operator or region of a
 * profile recorded with `sonde run --torch` (functions of kind
 * SONDE_FUNC_TORCH), with key_averages().table()'s columns: Name, Self CPU
 * %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls, and its
 * "Self CPU time total" line.  Percentages are of the operators' self
 * time together, as torch's are.  With by_caller, a row per operator and
 * Python function that ran it (the nearest Python function above it in
 * the tree, which a .prof file does not keep: the tree must be there),
 * shown as file:first line(name), the file as py-spy shows it.
 * Operators recorded with their shapes (--torch-shapes) make one row per
 * operator, or with by_shape one per operator and input shapes, with
 * torch's "Input Shapes" column.  A profile recorded with --torch-memory
 * (a JSON one: memory is kept per node) adds torch's CPU Mem and Self CPU
 * Mem columns: net bytes allocated while the operator ran, callees
 * included, and less its nested operators'; a region, which sonde records
 * as a frame, gets those of the operators beneath it (self 0).  With
 * one_process, the table of one process of several (`--by-process`: a
 * rank of a distributed job), from the tree beneath its frame.  With
 * by_step, a row per operator (or region) and training step, under a
 * Step column: the calls that began in that step, their time and their
 * self time as torch.profiler counts it (a region's: less the operators
 * and regions run in it), the percentages of the step's own self time,
 * without GPU or memory columns. */
#ifndef SONDE_OPS_TABLE_H
#define SONDE_OPS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"

typedef struct sonde_ops_opts {
    const char *sort;   /* see sonde_ops_sort_known */
    long limit;         /* rows; 0 = all */
    int by_caller;
    int by_shape;
    int by_step;        /* a row per operator and training step (step_parts.h),
                         * in step order, `limit` rows of each */
    int one_process;    /* only the operators beneath a node of function
                         * process_func (a process's frame), from the tree */
    uint32_t process_func;
} sonde_ops_opts;

/* 1 when key names an order of the operator table: cpu_time_total (or
 * cumtime), self_cpu_time_total (tottime), count (ncalls, calls),
 * cpu_time (the average) or name. */
int sonde_ops_sort_known(const char *key);
/* The sort keys --ops takes, for a message: "cpu_time_total, ... or name". */
extern const char sonde_ops_sort_names[];

/* Appends the table to b.  0, or -1 with a message (no operators in the
 * profile, no tree for by_caller, no shapes for by_shape, no steps for
 * by_step). */
int sonde_ops_table_write(sonde_buf *b, const sonde_profile *p, const sonde_stats *s,
                          const sonde_ops_opts *o, char *err, size_t errlen);

#endif
