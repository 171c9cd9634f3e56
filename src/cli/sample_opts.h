/* sample_opts.h - the options every sampling command (record, top, dump) takes to choose
 * what a sample means and which threads are read: --mode, py-spy's --idle and --gil, and
 * --thread, declared once for their option tables. */
#ifndef SONDE_CLI_SAMPLE_OPTS_H
#define SONDE_CLI_SAMPLE_OPTS_H

#include <stddef.h>

#include "../sampler/mode.h"
#include "../sampler/thread_filter.h"
#include "options.h"

typedef struct cli_sample_opts {
    const char *mode;              /* --mode NAME, or NULL */
    int idle, gil;                 /* py-spy's --idle (wall) and --gil (gil) */
    sonde_thread_filter threads;   /* --thread, each; zeroed is empty (free it) */
} cli_sample_opts;

/* --thread's reader: adds the value to the sonde_thread_filter at dest. */
int cli_take_thread(const char *cmd, void *dest, const char *value);

#define CLI_SAMPLE_OPTIONS(T, field)                                                         \
    { .long_name = "mode", .arg = "MODE", .type = CLI_STRING,                                \
      .offset = offsetof(T, field.mode),                                                     \
      .help = "what a sample counts: cpu (default: running threads, each\n"                  \
              "weighed by the CPU it used since its last sample), wall\n"                    \
              "(every thread, running or not), gil (the thread holding\n"                    \
              "the GIL), exception (threads handling an exception, under\n"                  \
              "\"<except TYPE>\")" },                                                        \
    { .long_name = "idle", .type = CLI_FLAG, .offset = offsetof(T, field.idle), .set = 1,    \
      .help = "--mode wall (py-spy's spelling)" },                                           \
    { .long_name = "gil", .type = CLI_FLAG, .offset = offsetof(T, field.gil), .set = 1,      \
      .help = "--mode gil (py-spy's spelling)" },                                            \
    { .long_name = "thread", .arg = "THREAD", .type = CLI_CALL,                            \
      .offset = offsetof(T, field.threads), .call = cli_take_thread,                         \
      .help = "read only this thread (again for more): its name\n"                         \
              "(threading's, or the kernel's comm) or kernel id; with\n"                      \
              "--native only these threads are ever stopped" }

/* The mode the options ask for into *mode (cpu when none): --mode, else
 * --gil, else --idle; --mode with a spelling that says otherwise is an
 * error.  0, or SONDE_EXIT_USAGE after printing one line. */
int cli_sample_mode(const char *cmd, const cli_sample_opts *o, int *mode);

#endif
