/* collapsed_read.h - collapsed stacks ("root;...;leaf COUNT") into the profile model.
 *
 * What sonde's -f collapsed, py-spy, austin, Python 3.15's
 * profiling.sampling --collapsed and Brendan Gregg's stackcollapse
 * scripts write: one line per stack, frames outermost first joined by
 * ';', then a space and a count.  Frames and thread roots are read as
 * collapsed_frame.h says.  Each count becomes that many samples of its
 * stack, on its thread's calling-context tree, as a pprof file of
 * samples gives; no rate is known, so the profile is sampled at 1 Hz and
 * its figures are samples.  A function is its (file, name): its line is
 * the smallest line a frame of it shows (the one nearest its first
 * line), and each node keeps the line its frame was at.
 *
 * Blank lines are skipped and "\r\n" ends a line as "\n" does.  The
 * file is untrusted: a line is at most SONDE_COLLAPSED_MAX_LINE bytes
 * of text (tab, and no other byte below 0x20, nor 0x7f), at most
 * SONDE_COLLAPSED_MAX_DEPTH frames, none empty; a count is digits and
 * the counts sum to at most SONDE_COLLAPSED_MAX_SAMPLES.  The first
 * error wins and names its line. */
#ifndef SONDE_COLLAPSED_READ_H
#define SONDE_COLLAPSED_READ_H

#include <stddef.h>
#include <stdint.h>

#include "../core/profile.h"

#define SONDE_COLLAPSED_MAX_LINE (1u << 20)
#define SONDE_COLLAPSED_MAX_DEPTH 65536u
/* 2^53 - 1: every sum of samples stays exact in a double. */
#define SONDE_COLLAPSED_MAX_SAMPLES 9007199254740991ull

/* 1 when data looks like collapsed stacks: its first line that is not
 * blank starts with text (its first 4 KiB) and holds a ';' there or ends
 * in " DIGITS"; or it holds only blank lines (which the reader then
 * refuses with its own message, as it does a line too long). */
int sonde_collapsed_is(const uint8_t *data, size_t len);

/* Fills p (initialised, empty) from the collapsed stacks data[0..len).
 * 0, or -1 with a message in err (out of memory included). */
int sonde_collapsed_read(const uint8_t *data, size_t len, sonde_profile *p, char *err,
                         size_t errlen);

#endif
