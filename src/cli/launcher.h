/* launcher.h - a Python program run under sonde's in-process tools.
 *
 * `sonde run`, `sonde lines` and `sonde mem` start the interpreter on
 * sonde's launcher (python/sonde/_launch.py) with a private folder, where
 * the launcher leaves what the run produced: the lines it has to say
 * ("said"), a mark that the program started ("started"), and the profile,
 * each file whole or absent.  What the user sees is printed and written
 * from sonde's own process: on the standard error it was given, and -o
 * relative to the folder sonde was started in, whatever the program did
 * to its own descriptors and working folder. */
#ifndef SONDE_LAUNCHER_H
#define SONDE_LAUNCHER_H

#include <limits.h>
#include <stddef.h>

#include "../core/about.h"
#include "../core/profile.h"
#include "../core/stats.h"
#include "cli.h"
#include "launch.h"
#include "output.h"

typedef struct launcher_program {
    const char *python;      /* the interpreter */
    const char *tool;        /* "run" (the tracer), "lines" or "mem" (the line tracer) */
    const char *format;      /* run: the format of the folder's "out" (for -o), or "" */
    const char *options;     /* the tool's other options, as JSON */
    const char *mode;        /* "script", "module" or "code" */
    const char *target;      /* the script, module or code */
    char **args;             /* the program's own arguments */
    int nargs;
    const char *preload;     /* a library to preload (LD_PRELOAD), or NULL; the
                                launcher takes it off again for the program's
                                own children (SONDE_PRELOAD names it) */
    int children;            /* run --subprocesses: the folder gets children/, where
                                every child followed leaves its files (PID.out,
                                PID.argv, PID.said: run_children.h) */
} launcher_program;

enum launcher_outcome {
    LAUNCHER_NOT_RUN,      /* the interpreter could not be started */
    LAUNCHER_NOT_STARTED,  /* it ended before the program's first line */
    LAUNCHER_NO_PROFILE,   /* the program ran, and ended leaving no profile */
    LAUNCHER_PROFILE,      /* the profile is in the folder */
};

typedef struct launcher_session {
    char dir[PATH_MAX];            /* the private folder (absolute), or "" */
    launch_result result;
    enum launcher_outcome outcome;
} launcher_session;

/* Runs prog to its end with a fresh private folder, then prints what the
 * launcher said, and one line when the program did not start or left no
 * file named `profile` in the folder.  Returns the outcome (also kept in
 * s->outcome); the folder stays until launcher_close(). */
enum launcher_outcome launcher_run(const sonde_env *env, const launcher_program *prog,
                                   const char *profile, launcher_session *s);

/* Makes s's fresh private folder under $TMPDIR (else /tmp), absolute: the
 * program may change its working folder (launcher_run calls it; a command
 * that runs another driver may too).  0, or -1 after printing why. */
int launcher_open(launcher_session *s);

/* The path of the folder's file `name`, into out: 0, or -1 if too long. */
int launcher_path(const launcher_session *s, const char *name, char *out, size_t len);

/* The path of the folder's file `name` into path, and p and st made
 * empty to load it into (the caller frees them).  0, or SONDE_EXIT_FAILED
 * after printing why (nothing to free). */
int launcher_prepare_load(const launcher_session *s, const char *name, char *path, size_t len,
                          sonde_profile *p, sonde_stats *st);

/* The bytes of the folder's file `name` into b (appended).  0, or -1
 * with why in b->why (or b->oom set). */
int launcher_read(const launcher_session *s, const char *name, sonde_buf *b);

/* Copies the folder's file `name` to dest.  0, or SONDE_EXIT_FAILED
 * after printing why. */
int launcher_deliver(const launcher_session *s, const char *name, const cli_output *dest);

/* What was profiled, as the command knows it once prog has run in s:
 * the command line a bare run would have (the interpreter, the script,
 * -m MODULE or -c CODE, the program's arguments), the interpreter's path
 * and sys.version (the launcher left them in the folder), when it
 * started, its wall time and CPU time (user + system, its waited-for
 * children included), into a (initialised).  0, or -1 on out of memory. */
int launcher_about(const launcher_session *s, const launcher_program *prog, sonde_about *a);

/* launcher_deliver for a JSON document sonde wrote (doc.h's envelope):
 * copied to dest with `"about": {...}` (a) after its envelope.  0, or
 * SONDE_EXIT_FAILED after printing why. */
int launcher_deliver_about(const launcher_session *s, const char *name, const sonde_about *a,
                           const cli_output *dest);

/* Removes the private folder and what it holds. */
void launcher_close(launcher_session *s);

/* The command's exit code: the program's own (a signal that ended it is
 * raised on sonde first, see launch_exit_code), or SONDE_EXIT_FAILED when
 * it never started. */
int launcher_exit_code(const launcher_session *s);

#endif
