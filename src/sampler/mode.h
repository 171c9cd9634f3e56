/* mode.h - what a sample means (--mode cpu|wall|gil|exception).
 *
 * cpu (the default): threads that ran since their last sample, each
 * sample weighed by the CPU time the kernel gave the thread meanwhile
 * (walker.h, cpu_time): a profile's ticks are then nanoseconds of CPU,
 * and shares are shares of CPU, however busy the machine.  wall: every
 * thread every tick, running or not, one tick a sample (py-spy's
 * --idle).  gil: the thread holding the GIL, one tick a sample (--gil).
 * exception: threads handling an exception (inside an except block or
 * a function it calls), under a "<except TYPE>" frame, one tick a
 * sample. */
#ifndef SONDE_SAMPLER_MODE_H
#define SONDE_SAMPLER_MODE_H

#include <stddef.h>

#include "python/layout.h"

enum sonde_sample_mode {
    SONDE_MODE_CPU = 0,
    SONDE_MODE_WALL,
    SONDE_MODE_GIL,
    SONDE_MODE_EXCEPTION,
};

/* The mode named (cpu, wall, gil, exception), or -1. */
int sonde_sample_mode_parse(const char *name);

/* Its name, and one phrase saying what a sample of it counts. */
const char *sonde_sample_mode_name(int mode);
const char *sonde_sample_mode_meaning(int mode);

/* 1 when the mode can be had on the interpreter of this layout; else 0
 * with the reason, one phrase, in why. */
int sonde_sample_mode_supported(int mode, const sonde_py_layout *l, char *why, size_t whylen);

#endif
