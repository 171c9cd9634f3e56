/* mode.c - what a sample means; see mode.h. */
#include "mode.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name, *meaning;
} modes[] = {
    [SONDE_MODE_CPU] = { "cpu", "running threads, each sample weighed by the CPU time the "
                                "thread used since its previous one (times are CPU time)" },
    [SONDE_MODE_WALL] = { "wall", "every thread at every sample, running or waiting (times are "
                                  "wall-clock time per thread)" },
    [SONDE_MODE_GIL] = { "gil", "the thread holding the GIL at each sample" },
    [SONDE_MODE_EXCEPTION] = { "exception", "threads handling an exception at each sample, "
                                            "under \"<except TYPE>\"" },
};

int sonde_sample_mode_parse(const char *name)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(name, modes[i].name) == 0)
            return (int)i;
    return -1;
}

const char *sonde_sample_mode_name(int mode)
{
    return mode >= 0 && (size_t)mode < sizeof modes / sizeof modes[0] ? modes[mode].name : "?";
}

const char *sonde_sample_mode_meaning(int mode)
{
    return mode >= 0 && (size_t)mode < sizeof modes / sizeof modes[0] ? modes[mode].meaning : "?";
}

int sonde_sample_mode_supported(int mode, const sonde_py_layout *l, char *why, size_t whylen)
{
    if (mode == SONDE_MODE_GIL && l->rt_gilstate_tstate_current == SONDE_PY_ABSENT &&
        l->interp_ceval_gil == SONDE_PY_ABSENT) {
        snprintf(why, whylen, "Python %d.%d does not say which thread holds its GIL where sonde "
                 "can read it", (int)l->major, (int)l->minor);
        return 0;
    }
    if (mode == SONDE_MODE_EXCEPTION && (l->ts_exc_info == SONDE_PY_ABSENT ||
                                         l->type_name == SONDE_PY_ABSENT)) {
        snprintf(why, whylen, "Python %d.%d does not say which exception a thread handles "
                 "where sonde can read it", (int)l->major, (int)l->minor);
        return 0;
    }
    return 1;
}
