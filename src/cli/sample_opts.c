/* sample_opts.c - --mode, --idle, --gil and --thread of the sampling commands; see
 * sample_opts.h. */
#include "sample_opts.h"

#include <string.h>

int cli_take_thread(const char *cmd, void *dest, const char *value)
{
    if (sonde_thread_filter_add(dest, value) < 0)
        return cli_usage_error(cmd, value[0] ? "--thread is given more than %d times"
                                              : "--thread needs a thread's name or id%.0d",
                               SONDE_THREAD_FILTER_MAX);
    return 0;
}

int cli_sample_mode(const char *cmd, const cli_sample_opts *o, int *mode)
{
    int spelled = o->gil ? SONDE_MODE_GIL : o->idle ? SONDE_MODE_WALL : -1;
    *mode = SONDE_MODE_CPU;
    if (!o->mode) {
        if (spelled >= 0)
            *mode = spelled;
        return 0;
    }
    int named = sonde_sample_mode_parse(o->mode);
    if (named < 0)
        return cli_usage_error(cmd, "unknown mode '%s' (use cpu, wall, gil or exception)",
                               o->mode);
    if (spelled >= 0 && spelled != named)
        return cli_usage_error(cmd, "--mode %s and --%s ask for different things: give one",
                               o->mode, o->gil ? "gil" : "idle");
    *mode = named;
    return 0;
}
