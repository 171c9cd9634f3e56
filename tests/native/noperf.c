/* noperf.c - an LD_PRELOAD library for the tests: perf_event_open is
 * refused (EACCES, as kernel.perf_event_paranoid or a container's seccomp
 * profile refuses it), every other syscall() goes through.  It lets the
 * tests check that sonde then stops threads with ptrace instead. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...)
{
    if (number == SYS_perf_event_open) {
        errno = EACCES;
        return -1;
    }
    long (*next)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
