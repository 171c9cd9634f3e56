/* family.h - a process and its Python descendants, each with a walker.
 *
 * Every few hundred milliseconds the sampler checks that each process
 * still runs the image it attached to (exec replaces it).  With
 * --subprocesses it also follows what a program starts:
 * multiprocessing workers, subprocess children, their children.  The
 * family is rediscovered from /proc/PID/task/TID/children every few
 * hundred milliseconds; a descendant joins once its interpreter can be
 * found, leaves when it ends, and is attached afresh when it exec's a new
 * image (its interpreter then lives at another address). */
#ifndef SONDE_FAMILY_H
#define SONDE_FAMILY_H

#include <stdint.h>

#include "../core/profile.h"
#include "walker.h"

#define SONDE_FAMILY_MAX 64   /* processes sampled at once */

typedef struct sonde_family_member {
    sonde_walker *walker;     /* the first member's is the caller's */
    int pid;
    uint64_t image;           /* where the interpreter's file is mapped: changes on exec */
    char label[200];          /* "process PID (command line)" */
} sonde_family_member;

typedef struct sonde_family {
    sonde_family_member members[SONDE_FAMILY_MAX];
    uint32_t count;
    sonde_profile *profile;
    int tried[1024];          /* descendants that are not Python (not tried again) */
    uint32_t ntried;
} sonde_family;

/* A family of one: the process main walks. */
void sonde_family_init(sonde_family *f, sonde_walker *main, sonde_profile *profile);
/* Re-attaches members that exec'd (the first one too: -1 when it exec'd
 * into something that is not Python, and sampling must end).  With
 * descendants, also adds new Python descendants.  0 or -1. */
int sonde_family_refresh(sonde_family *f, int descendants);
/* Drops member i (never the first). */
void sonde_family_drop(sonde_family *f, uint32_t i);
void sonde_family_free(sonde_family *f);

#endif
