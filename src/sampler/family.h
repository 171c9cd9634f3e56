/* family.h - the Python processes under the process sonde was pointed at, each with a walker.
 *
 * The root is the process sonde was given: the command `record -- CMD`
 * started, or -p PID.  When the root runs Python it is sampled itself.
 * When it does not (a shell, make, tox, env, a script that runs python),
 * its descendants are searched, and the outermost Python processes among
 * them (those with no Python process between them and the root) are
 * sampled: the programs the command runs.  With `all` (--subprocesses)
 * every Python descendant is sampled too: multiprocessing workers,
 * subprocess children, their children.
 *
 * The tree is rediscovered from /proc/PID/task/TID/children on each
 * refresh.  A process joins once its interpreter can be found, leaves
 * when it ends, and is attached afresh when it exec's a new image (its
 * interpreter then lives at another address).  A process found not to be
 * Python is looked at again only when its executable changes (it exec'd)
 * or at a full refresh, so a refresh that waits on a shell costs a few
 * reads of /proc. */
#ifndef SONDE_FAMILY_H
#define SONDE_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "../core/profile.h"
#include "walker.h"

#define SONDE_FAMILY_MAX 64         /* processes sampled at once */
#define SONDE_FAMILY_VISIT_MAX 4096 /* processes looked at in one refresh */

typedef struct sonde_family_member {
    sonde_walker *walker;     /* owned by the family */
    int pid;
    uint64_t image;           /* where the interpreter's file is mapped: changes on exec */
    char label[200];          /* "process PID (command line)" */
} sonde_family_member;

/* A process found not to be Python, with its executable at the time. */
typedef struct sonde_family_other {
    int pid;
    uint64_t dev, ino;
} sonde_family_other;

typedef struct sonde_family {
    int root;                 /* the process sonde was pointed at */
    int all;                  /* sample every Python descendant, not the outermost only */
    sonde_profile *profile;   /* borrowed: where the walkers intern functions */
    sonde_family_member members[SONDE_FAMILY_MAX];
    uint32_t count;
    uint32_t joined;          /* processes that have been members, in all */
    sonde_family_other others[1024];
    uint32_t nothers;
    int root_error;           /* why the root could not be attached (negative errno), or 0 */
    char root_message[512];   /* ... in one line */
    char last_message[512];   /* why the last process that runs Python could not be read */
    int visit[SONDE_FAMILY_VISIT_MAX]; /* refresh's stack of processes to look at */
} sonde_family;

/* A family rooted at pid, nothing attached yet. */
void sonde_family_init(sonde_family *f, int root, int all, sonde_profile *profile);

/* Re-attaches members that exec'd and adds the Python processes found
 * (full: also retries processes that were not Python and did not exec
 * since).  0 while the root runs; -ESRCH once it has ended (exited, or a
 * zombie waiting for its parent); -EMFILE, -ENFILE or -ENOMEM when sonde
 * could not open /proc's files to tell (sonde_proc_alive). */
int sonde_family_refresh(sonde_family *f, int full);

/* The first look at a running root (-p PID): 0 when it runs Python or has
 * started a Python process, else a negative errno with one line in err
 * saying why there is nothing to sample. */
int sonde_family_attach(sonde_family *f, char *err, size_t errlen);

/* Drops member i: its process ended. */
void sonde_family_drop(sonde_family *f, uint32_t i);
void sonde_family_free(sonde_family *f);

#endif
