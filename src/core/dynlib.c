/* dynlib.c - dlopen and dlsym into a table of functions; see dynlib.h. */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int sonde_dynlib_load(const char *soname, void *table, const sonde_dynlib_fn *fns, size_t n,
                      char *why, size_t whylen)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, whylen, "%s is not installed", soname);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        void *f = dlsym(h, fns[i].name);
        if (!f) {
            snprintf(why, whylen, "the %s here has no %s", soname, fns[i].name);
            dlclose(h);
            return -1;
        }
        /* POSIX: a function pointer and void * have one representation. */
        memcpy((char *)table + fns[i].at, &f, sizeof f);
    }
    return 0;
}
