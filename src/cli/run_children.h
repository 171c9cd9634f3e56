/* run_children.h - --subprocesses: the program's part and every followed
 * child's, summed into one: run's profiles, each under a frame naming its
 * process ("process PID (command)", as record --subprocesses and merge
 * name them); lines' documents, with the parts listed (report/doc_merge.h).
 *
 * The private folder's side (python/sonde/_launch.py): the program leaves
 * its calls in DIR/out (sonde's JSON) and its pid first in DIR/owner; a
 * child it forks, or a Python it starts that loads sonde's boot, leaves
 * DIR/children/PID.out, its command line in PID.argv (NUL-separated) and
 * what it has to say in PID.said. */
#ifndef SONDE_RUN_CHILDREN_H
#define SONDE_RUN_CHILDREN_H

#include "../core/about.h"
#include "../core/profile.h"
#include "../core/stats.h"
#include "launcher.h"

/* The children's files the folder holds at most (more are said and left out). */
#define RUN_CHILDREN_MAX 4096

/* The sum into p and s (initialised here; the caller frees them): the
 * program's part labelled with about's command line, each child's with
 * its own, in order of pid; p's about is about with the processes counted.
 * Prints each child's said lines.  *children: the children summed.  0, or
 * SONDE_EXIT_FAILED after printing why. */
int run_children_load(const launcher_session *run, const sonde_about *about, sonde_profile *p,
                      sonde_stats *s, int *children);

/* lines --subprocesses: the program's document (DIR/out, labelled with
 * about's command line) and each child's summed (mem: as mem documents),
 * the sum written over DIR/out.  Prints each child's said lines.
 * *children: the children summed.  0, or SONDE_EXIT_FAILED after
 * printing why. */
int run_children_sum_documents(const launcher_session *run, const sonde_about *about, int mem,
                               int *children);

#endif
