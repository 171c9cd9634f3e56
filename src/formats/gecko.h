/* gecko.h - the Firefox Profiler's files: the Gecko profile format that
 * sonde writes for sampled profiles (-f gecko, gecko.c), and both that
 * format and the Profiler's processed format (what Python 3.15's
 * `profiling.sampling --gecko` writes) read back (gecko_read.c).
 *
 * How sonde's model maps onto the format (the Profiler's source,
 * src/types/gecko-profile.ts and src/profile-logic/process-profile.ts,
 * is the reference; the version written is SONDE_GECKO_VERSION):
 *   - each profile thread is a thread, with its own string, frame and
 *     stack tables in { schema, data } form;
 *   - a stack is a node of the thread's tree (its prefix the parent's
 *     node), a frame a (function, line) pair, its line the line sampled
 *     (null for "the function's");
 *   - a frame's location names its function in the form the Profiler
 *     parses: "QUALNAME (FILE:FIRSTLINE)" for Python code (shown with
 *     its file, as JavaScript is), "SYMBOL (in OBJECT) (FILE:0)" for
 *     native code (a library's function), the bare label for a C
 *     function or label frame ("<GC>", "thread MainThread"), written
 *     "LABEL (~:0)" when the bare label would read as code or a library's
 *     function (a label "0x..." reads as an address: the reader takes an
 *     address as a label);
 *   - samples are the profile's timeline (sonde_sample_event), in time
 *     order: stack, milliseconds since the recording began, and a null
 *     eventDelay (the Profiler requires the column); where ticks are CPU
 *     time (record's cpu mode) and every sample says what it weighed, its
 *     threadCPUDelta too (meta.sampleUnits: ns), which the reader takes
 *     back as the sample's weight;
 *   - a run of samples with a "<GC>" frame on the stack is an interval
 *     marker of category GC named "<GC>" on its thread: from the first
 *     such sample to the first one without (or one period after the
 *     thread's last sample);
 *   - meta.about holds what was profiled (sonde's JSON "about", which the
 *     Profiler ignores), meta.interval the sampling period.
 * A function's name (co_name) is read back as the last dotted part of its
 * qualified name, which is how CPython builds co_qualname. */
#ifndef SONDE_GECKO_H
#define SONDE_GECKO_H

#include <stddef.h>

#include "../core/profile.h"
#include "json_read.h"

/* The Gecko profile format's version written (the Profiler upgrades
 * older ones and refuses newer ones; 34 gave the sources table its
 * present schema). */
#define SONDE_GECKO_VERSION 34

/* The name of the garbage collector's frame (Python 3.15's, sonde's). */
#define SONDE_GECKO_GC_FRAME "<GC>"

/* The forms of a frame's location the Profiler tells apart (its
 * process-profile.ts, in its order): an unsymbolicated address ("0x..."),
 * a library's function ("NAME (in LIB)", optionally followed by " + N" or
 * " (FILE:LINE)"), code in a file ("NAME (FILE:LINE[:COL])[N]", or
 * "FILE:LINE[:COL]"), and anything else, a label. */
enum sonde_gecko_form { SONDE_GECKO_LABEL, SONDE_GECKO_ADDRESS, SONDE_GECKO_NATIVE,
                        SONDE_GECKO_CODE };

/* A location split by those rules; the pointers are into its text. */
typedef struct sonde_gecko_location {
    enum sonde_gecko_form form;
    const char *name;     /* the function's name; LABEL, ADDRESS: the whole text */
    size_t name_len;      /* CODE in the form "FILE:LINE": 0 */
    const char *file;     /* NATIVE: FILE when given, else LIB; CODE: FILE */
    size_t file_len;
    const char *lib;      /* NATIVE: LIB */
    size_t lib_len;
    int32_t line;         /* CODE: LINE; NATIVE: LINE when given; else 0 */
} sonde_gecko_location;

/* Splits the location s[0..n) as the Profiler does (gecko_location.c), in
 * time linear in n.  Never fails. */
void sonde_gecko_location_parse(const char *s, size_t n, sonde_gecko_location *out);

/* 1 when t looks like a Firefox Profiler file: an object with a "meta"
 * object and a "threads" list. */
int sonde_gecko_is(const sonde_jtree *t);

/* Fills p (initialised, empty) from t, a Gecko profile or a processed
 * one: every thread's samples become its tree's counts and the
 * timeline.  The file is untrusted: every index is checked, a stack's
 * prefix must be an earlier stack (so no walk can loop), and the work is
 * linear in the file's size.  0, or -1 with a one-line message. */
int sonde_gecko_read(const sonde_jtree *t, sonde_profile *p, char *err, size_t errlen);

#endif
