/* launch.h - starting a Python program under sonde's in-process engine.
 *
 * The command line stays outside the profiled process: it starts the
 * interpreter on sonde's launcher (python/sonde/_launch.py), waits for it
 * with wait4() to get the run's resource usage, and reads back the
 * profile the launcher wrote.  Ctrl-C reaches the program, not sonde. */
#ifndef SONDE_LAUNCH_H
#define SONDE_LAUNCH_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "cli.h"

/* The interpreter to launch: --python, else $SONDE_PYTHON, else the one
 * sonde runs in, else "python3". */
const char *launch_python(const sonde_env *env, const char *flag_python);

/* The folder that holds the sonde package (with its compiled extension).
 * 0, or -1 after printing why. */
int launch_package_dir(const sonde_env *env, char *out, size_t outlen);

typedef struct launch_result {
    int status;            /* as from waitpid */
    struct rusage usage;   /* of the program and its waited-for children */
    double wall;           /* seconds */
} launch_result;

/* Starts argv (argv[0] looked up on PATH) and waits until it has exec'd.
 * Its pid, or -1 with errno saying why (pipe, fork or exec failed; a
 * child whose exec failed is already reaped). */
pid_t launch_start(char *const argv[]);

/* Runs argv (argv[0] = interpreter, looked up on PATH) to completion.
 * 0, or -1 after printing why it could not start. */
int launch_run(char *const argv[], launch_result *r);

/* A Python program to run under one of sonde's in-process tools. */
typedef struct launch_program {
    const char *python;      /* the interpreter */
    const char *tool;        /* "run" (the tracer), "lines" or "mem" (the line tracer) */
    const char *stats_path;  /* where the run tool writes its stats, or "" */
    const char *out;         /* -o, or "" */
    const char *format;      /* -f of the run tool, or "" */
    const char *options;     /* the tool's other options, as JSON */
    const char *mode;        /* "script", "module" or "code" */
    const char *target;      /* the script, module or code */
    char **args;             /* the program's own arguments */
    int nargs;
    const char *preload;     /* a library to preload (LD_PRELOAD), or NULL; the
                                launcher takes it off again for the program's
                                own children (SONDE_PRELOAD names it) */
} launch_program;

/* Runs the program under python/sonde/_launch.py to completion.  0, or -1
 * after printing why it could not start. */
int launch_program_run(const sonde_env *env, const launch_program *prog, launch_result *r);

/* The exit code to pass on for a wait status; re-raises a fatal signal
 * on sonde itself first, so the caller sees what a bare run would give. */
int launch_exit_code(int status);

#endif
