/* lprof_load.h - line_profiler's .lprof files for sonde report and view.
 *
 * A .lprof is a pickle of line_profiler's LineStats.  sonde reads it in
 * Python (python/sonde/_line_stats.py, the reader LineStats.from_files
 * uses: an unpickler that lets through that class and nothing else, so a
 * file from anywhere runs no code; every field checked), which turns it
 * into sonde's lines document (docs/formats.md); the command draws that
 * as it draws `sonde lines -o FILE.json`. */
#ifndef SONDE_LPROF_LOAD_H
#define SONDE_LPROF_LOAD_H

#include "../formats/json_read.h"
#include "cli.h"

/* Whether file is to be read as a .lprof: its name ends in .lprof, or it
 * is a regular file that starts as a pickle does (0x80, protocol 2 to 5). */
int cli_lprof_is(const char *file);

/* The lines document of the .lprof file into doc (freed with
 * sonde_jtree_free).  0, or an exit code after one line saying why (a
 * file that is not line_profiler's, no Python to read it with). */
int cli_lprof_load(const sonde_env *env, const char *file, sonde_jtree *doc);

#endif
