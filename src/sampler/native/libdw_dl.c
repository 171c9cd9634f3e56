/* libdw_dl.c - elfutils' libdw loaded at run time; see libdw_dl.h. */
#include "libdw_dl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../../core/dynlib.h"

/* Each function of sonde_libdw and its name in libdw.so.1. */
#define FUNCTION(field) { offsetof(sonde_libdw, field), "dwarf_" #field }
static const sonde_dynlib_fn functions[] = {
    FUNCTION(begin),       FUNCTION(end),         FUNCTION(addrdie),   FUNCTION(child),
    FUNCTION(siblingof),   FUNCTION(tag),         FUNCTION(haspc),     FUNCTION(attr),
    FUNCTION(formudata),   FUNCTION(getsrcfiles), FUNCTION(filesrc),   FUNCTION(getsrc_die),
    FUNCTION(linesrc),     FUNCTION(lineno),      FUNCTION(attr_integrate),
    FUNCTION(formstring),
};

static sonde_libdw lib;
static const sonde_libdw *loaded;
static char missing[384];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    char why[160];
    if (sonde_dynlib_load("libdw.so.1", &lib, functions, sizeof functions / sizeof functions[0],
                          why, sizeof why) < 0) {
        snprintf(missing, sizeof missing, "native frames have no file:line: %s%s", why,
                 strstr(why, "not installed") ? " (it reads DWARF line tables; Debian/Ubuntu: "
                                                "apt-get install libdw1, Fedora: dnf install "
                                                "elfutils-libs)" : "");
        return;
    }
    loaded = &lib; /* the library stays loaded for the life of the process */
}

const sonde_libdw *sonde_libdw_get(void)
{
    pthread_once(&once, load);
    return loaded;
}

void sonde_libdw_say_missing(FILE *f)
{
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (!sonde_libdw_get() && !atomic_flag_test_and_set(&said))
        fprintf(f, "sonde: %s\n", missing);
}
