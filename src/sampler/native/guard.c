/* guard.c - SIGBUS while reading a mapped file, turned into a jump; see guard.h. */
#include "guard.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

static _Thread_local sonde_native_guard *armed;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)context;
    sonde_native_guard *g = armed;
    if (!g) {
        /* Not a read sonde guards: the default action, as if never caught. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g->fault = info->si_addr;
    siglongjmp(g->jump, 1);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

void sonde_native_guard_begin(sonde_native_guard *g)
{
    pthread_once(&installed, install);
    g->fault = NULL;
    g->outer = armed;
    armed = g;
}

void sonde_native_guard_end(sonde_native_guard *g)
{
    armed = g->outer;
}
