/* libdw_dl.c - elfutils' libdw loaded at run time; see libdw_dl.h. */
#include "libdw_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Each function of sonde_libdw and its name in libdw.so.1. */
#define FUNCTION(field) { offsetof(sonde_libdw, field), "dwarf_" #field }
static const struct {
    size_t at;
    const char *name;
} functions[] = {
    FUNCTION(begin),       FUNCTION(end),         FUNCTION(addrdie),   FUNCTION(child),
    FUNCTION(siblingof),   FUNCTION(tag),         FUNCTION(haspc),     FUNCTION(attr),
    FUNCTION(formudata),   FUNCTION(getsrcfiles), FUNCTION(filesrc),   FUNCTION(getsrc_die),
    FUNCTION(linesrc),     FUNCTION(lineno),
};

static sonde_libdw lib;
static const sonde_libdw *loaded;
static char missing[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(missing, sizeof missing,
                 "native frames have no file:line: libdw.so.1 is not installed (it reads DWARF "
                 "line tables; Debian/Ubuntu: apt-get install libdw1, Fedora: dnf install "
                 "elfutils-libs)");
        return;
    }
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        void *f = dlsym(h, functions[i].name);
        if (!f) {
            snprintf(missing, sizeof missing,
                     "native frames have no file:line: the libdw.so.1 here has no %s",
                     functions[i].name);
            dlclose(h);
            return;
        }
        /* POSIX: a function pointer and void * have one representation. */
        memcpy((char *)&lib + functions[i].at, &f, sizeof f);
    }
    loaded = &lib; /* the handle stays open for the life of the process */
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
