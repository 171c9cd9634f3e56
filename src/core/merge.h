/* merge.h - profiles of several processes summed into one (sonde merge,
 * and report, view and diff given several files).
 *
 * Each input's part stays under a frame naming its process, the frame
 * record --subprocesses makes: a C function ("~", 0, "process PID
 * (command)") first under each of the input's thread roots, its threads
 * kept apart from the other inputs' and named after its process
 * ("MainThread in process 12 (python app.py)").  An input whose roots already start
 * with process frames (a merged file, record --subprocesses) is added as
 * it is, so merging merged files gives what merging their inputs gives.
 * Per function, per caller->callee edge and per call path, the figures
 * are the inputs' sums; the process frames add a row each.
 *
 * An input with a calling-context tree (sonde's JSON, pprof, collapsed
 * stacks) is added node by node (sonde_merge_tree); a .prof, which holds
 * only the stats, by its stats (sonde_merge_stats), its process frame
 * becoming the caller of its root functions (those with calls no caller
 * edge accounts for).  A merge is one or the other for all its inputs:
 * sonde_merge_tree while every input has a tree, else sonde_merge_stats
 * (a tree's stats are derived from it first).  The caller checks that
 * the inputs are of one kind and unit (sonde_merge_unit_clash). */
#ifndef SONDE_MERGE_H
#define SONDE_MERGE_H

#include <stddef.h>

#include "about.h"
#include "profile.h"
#include "stats.h"

/* Bytes a process frame's label takes at most, NUL included. */
#define SONDE_MERGE_LABEL_MAX 160

/* The label of a process's frame into out: "process PID (COMMAND)" (the
 * command line cut to 80 characters, on one line), "process PID (FILE)"
 * without a command, "process FILE" without a pid (pid <= 0). */
void sonde_merge_label(char *out, size_t outlen, int pid, const sonde_about *a,
                       const char *file);
/* The same for a process of a distributed job: "process PID (rank R:
 * COMMAND)" when rank >= 0 (torch.distributed's RANK). */
void sonde_merge_label_ranked(char *out, size_t outlen, int pid, const sonde_about *a,
                              const char *file, long rank);

/* 1 when func is a process frame: a C function labelled "process ...". */
int sonde_merge_is_process(const sonde_profile *p, uint32_t func);

/* Why src cannot be summed with dst (both loaded, dst holding what was
 * merged so far or the first input), in words that follow the two file
 * names ("is sampled at 100 Hz, the other at 250 Hz"), or NULL. */
const char *sonde_merge_unit_clash(const sonde_profile *dst, const sonde_stats *ds,
                                   const sonde_profile *src, const sonde_stats *ss,
                                   char *why, size_t whylen);

/* Adds src's threads to dst, each under a process frame labelled label
 * (unless src's are already), with src's timeline; ticks are converted
 * to dst's.  A thread dst has already (the same ids and name: the same
 * process's thread in another window of time) gets src's figures added.
 * 0, or -1 on out of memory. */
int sonde_merge_tree(sonde_profile *dst, const sonde_profile *src, const char *label);

/* Adds src's stats to ds (functions of dst), under a process frame
 * labelled label (unless src's roots are process frames already).  0, or
 * -1 on out of memory. */
int sonde_merge_stats(sonde_profile *dst, sonde_stats *ds, const sonde_profile *src,
                      const sonde_stats *ss, const char *label);

/* After the last input: the timeline put in time order (a stable sort:
 * samples of one time keep their order).  0, or -1 on out of memory. */
int sonde_merge_finish(sonde_profile *dst);

#endif
