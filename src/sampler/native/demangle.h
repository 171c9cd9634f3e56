/* demangle.h - C++ names of native symbols, bounded in time and memory.
 *
 * libstdc++'s __cxa_demangle is the reference (the demangler g++ itself
 * uses), but it has no bound: a short mangled name whose substitutions
 * nest (S_, S0_, ... each naming the one before twice) demangles into
 * hundreds of megabytes, seconds of work for one legal 170-byte symbol.
 * So it runs in a helper process forked on first use, under an address
 * space limit, and each name is given a budget of the helper's CPU time
 * (a bomb's demangler keeps walking its tree after memory runs out; an
 * ordinary name takes microseconds, however loaded the machine) and a
 * wall-clock deadline: a name over the input bound, whose demangler runs
 * out of memory or time, or whose result is over the output bound keeps
 * its mangled form (the helper is killed and started again on the next
 * name when it overran).  The names given up are remembered, so a bomb
 * seen at many addresses costs its budget once.  The helper reads names from a socket and exits when it closes;
 * it dies with sonde (PR_SET_PDEATHSIG).  Protected by a mutex: callable
 * from any thread. */
#ifndef SONDE_NATIVE_DEMANGLE_H
#define SONDE_NATIVE_DEMANGLE_H

#include <stddef.h>

#define SONDE_DEMANGLE_MAX_MANGLED 4096u        /* longer names are not demangled */
#define SONDE_DEMANGLE_MAX_NAME (64u << 10)     /* a longer result keeps the mangled name */
#define SONDE_DEMANGLE_MAX_MEMORY (64u << 20)   /* the helper's address space beyond sonde's */
#define SONDE_DEMANGLE_CPU_MS 200               /* the helper's CPU time a name, at most */
#define SONDE_DEMANGLE_DEADLINE_MS 10000        /* and the wall-clock time (a starved helper) */

/* The demangled form of name (a C++ one: "_Z..."), cut to fit outlen
 * (NUL-terminated), into out; else name itself, cut alike.  Returns 1
 * when out is demangled, 0 when it is name (not C++, over a bound, or no
 * helper could be started). */
int sonde_native_demangle(const char *name, char *out, size_t outlen);

#endif
