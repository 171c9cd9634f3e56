/* inputs.h - one or several profile files read as one: what sonde merge
 * writes, and what report, view and diff draw when given several files.
 *
 * One file is loaded as it is (formats/load.h, or lprof_load.h for a
 * .lprof).  Several are loaded one after the other and summed
 * (core/merge.h for profiles of calls, report/doc_merge.h for lines and
 * mem documents), each under its process's label: "process PID
 * (command)" from what the file says, else the file's name, made unique
 * (" #2") when two files name the same.  The files must be of one kind
 * (profiles of calls, lines, mem), profiles all deterministic or all
 * sampled at one rate, documents of one version and measure: else one
 * line names the two files and why, exit 2.  A file that cannot be read:
 * one line, exit 1. */
#ifndef SONDE_INPUTS_H
#define SONDE_INPUTS_H

#include "../core/buf.h"
#include "../core/profile.h"
#include "../core/stats.h"
#include "../formats/json_read.h"
#include "../formats/load.h"
#include "cli.h"

typedef struct cli_inputs {
    enum sonde_load_kind kind;
    sonde_profile p;       /* SONDE_LOADED_PROFILE: the profile and its stats */
    sonde_stats s;
    sonde_jtree doc;       /* SONDE_LOADED_LINES / _MEM: the document */
    sonde_buf text;        /* several documents: the merged one as JSON (what doc reads) */
    int merged;            /* several files were summed */
} cli_inputs;

/* Reads the n files (n >= 1) into *in for command cmd (its name, for
 * messages); several are summed, each under its process's label, or all
 * under `label` when it is not NULL (diff: the two sides' call paths then
 * match, whatever their pids).  0, or an exit code after one line saying
 * why.  cli_inputs_free() releases *in either way. */
int cli_inputs_load(const sonde_env *env, const char *cmd, char *const *files, int n,
                    const char *label, cli_inputs *in);
void cli_inputs_free(cli_inputs *in);

/* "a.prof" for one file, "a.prof + 3 more" for several: a page's title. */
void cli_inputs_title(char *out, size_t outlen, char *const *files, int n);

#endif
