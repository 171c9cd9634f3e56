/* pprof.h - pprof's profile.proto (gzipped), the format of go tool
 * pprof, Pyroscope, Parca and Google Cloud Profiler: written for every
 * profile sonde makes, read from sonde's and other tools' files.
 *
 * Writing (pprof.c, pprof_mem.c): see those files for what each sample
 * type holds.  Reading (pprof_read.c) turns a file into the profile
 * model: a sampled profile when its first sample type is a count of
 * samples ("samples"/"count"), else one of weights (the default sample
 * type, or the last one; "calls"/"count" beside it gives the calls). */
#ifndef SONDE_PPROF_H
#define SONDE_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"
#include "format.h"
#include "json_read.h"

/* The comments that say what was profiled (p->about, p->pid): each
 * prefix, then its value; the command line quoted as a POSIX shell takes
 * it (sonde_about_command). */
#define SONDE_PPROF_COMMAND "command: "
#define SONDE_PPROF_EXECUTABLE "executable: "
#define SONDE_PPROF_VERSION "python_version: "
#define SONDE_PPROF_CPU "cpu_s: "
#define SONDE_PPROF_PROCESSES "processes: "
#define SONDE_PPROF_VERDICT "verdict: "
#define SONDE_PPROF_PID "pid: "
#define SONDE_PPROF_CWD "cwd: "

/* A sonde mem document (mem -o) as a heap profile into b.  0, or -1 with
 * a message in err (not a mem document, or out of memory). */
int sonde_pprof_mem_write(sonde_buf *b, const sonde_jtree *t, char *err, size_t errlen);

/* 1 when data may be a pprof file: gzip, or protobuf that starts with a
 * field of profile.proto's Profile. */
int sonde_pprof_is(const uint8_t *data, size_t len);

/* Fills p (initialised, empty) from the pprof file data[0..len), gzipped
 * or not.  The file is untrusted: lengths, indexes and ids are checked,
 * sizes capped; the first error wins.  0, or -1 with a message. */
int sonde_pprof_read(const uint8_t *data, size_t len, sonde_profile *p, char *err,
                     size_t errlen);

#endif
