/* launch.h - starting a program and waiting for its end.
 *
 * The command line stays outside the profiled process: it starts the
 * program, waits for it (reading what /proc knows of its end before
 * reaping it with wait4(), which gives the run's resource usage), and
 * passes its exit code on.  Ctrl-C reaches the program, not sonde;
 * SIGTERM and SIGHUP sent to sonde alone are passed on to it.  Running a
 * Python program under sonde's in-process tools is launcher.h's. */
#ifndef SONDE_LAUNCH_H
#define SONDE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "cli.h"

/* The interpreter to launch: --python, else $SONDE_PYTHON, else the one
 * sonde runs in, else the one a command installed from a wheel was
 * installed for (its venv's), else "python3" (install_paths.c). */
const char *launch_python(const sonde_env *env, const char *flag_python);

/* The folder that holds the sonde package (with its compiled extension),
 * of those beside a command installed from wheels for several Pythons the
 * one for python's version (NULL: any).  0, or -1 after printing why. */
int launch_package_dir_for(const sonde_env *env, const char *python, char *out, size_t outlen);
int launch_package_dir(const sonde_env *env, char *out, size_t outlen);

typedef struct launch_result {
    int status;            /* as from waitpid */
    struct rusage usage;   /* of the program and its waited-for children */
    double wall;           /* seconds */
    int64_t start_ns;      /* when it started: ns since the epoch (CLOCK_REALTIME) */
    double children_cpu;   /* user + system seconds of the children it waited for
                              (/proc/PID/stat), or -1 when unknown */
    double run_delay;      /* seconds its main thread was ready to run but waited for a
                              CPU (/proc/PID/schedstat), or -1 when unknown */
    double memory_stall;   /* seconds tasks of the machine stalled for memory while it
                              ran (/proc/pressure/memory), or -1 when unknown */
    long long swap_ins;    /* pages the machine swapped in while it ran (/proc/vmstat),
                              or -1 when unknown */
} launch_result;

/* Starts argv (argv[0] looked up on PATH) and waits until it has exec'd.
 * Its pid, or -1 with errno saying why (pipe, fork or exec failed; a
 * child whose exec failed is already reaped). */
pid_t launch_start(char *const argv[]);

/* Runs argv (argv[0] = interpreter, looked up on PATH) to completion,
 * passing SIGTERM and SIGHUP on to it.  0, or -1 after printing why it
 * could not start. */
int launch_run(char *const argv[], launch_result *r);

/* The exit code to pass on for a wait status; re-raises a fatal signal
 * on sonde itself first, so the caller sees what a bare run would give. */
int launch_exit_code(int status);

#endif
