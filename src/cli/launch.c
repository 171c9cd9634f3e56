/* launch.c - start, wait for and account for a launched program. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "options.h"

const char *launch_python(const sonde_env *env, const char *flag_python)
{
    if (flag_python && *flag_python)
        return flag_python;
    const char *e = getenv("SONDE_PYTHON");
    if (e && *e)
        return e;
    if (env && env->python)
        return env->python;
    return "python3";
}

static int has_launcher(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/sonde/_launch.py", dir) >= sizeof path)
        return 0;
    return access(path, R_OK) == 0;
}

int launch_package_dir(const sonde_env *env, char *out, size_t outlen)
{
    if (outlen < PATH_MAX)
        return -1;
    if (env && env->package_dir && has_launcher(env->package_dir)) {
        snprintf(out, outlen, "%s", env->package_dir);
        return 0;
    }
    /* Beside the executable: build/bin/sonde -> build/python, and
     * PREFIX/bin/sonde -> PREFIX/lib/sonde/python. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            const char *rel[] = { "../python", "../lib/sonde/python" };
            for (size_t i = 0; i < 2; i++) {
                char dir[PATH_MAX];
                if ((size_t)snprintf(dir, sizeof dir, "%s/%s", exe, rel[i]) >= sizeof dir)
                    continue;
                if (has_launcher(dir) && realpath(dir, out) && strlen(out) < outlen)
                    return 0;
            }
        }
    }
    fprintf(stderr, "sonde: cannot find sonde's Python package beside %s: run 'make' "
            "(or 'make install') again\n", n > 0 ? exe : "the sonde command");
    return -1;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pid_t launch_start(char *const argv[])
{
    /* A close-on-exec pipe stays open only if exec failed: the child then
     * writes its errno there. */
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        execvp(argv[0], argv);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    int fork_errno = errno;
    close(pipefd[1]);
    int exec_errno = 0;
    ssize_t got = 0;
    if (pid > 0) {
        do
            got = read(pipefd[0], &exec_errno, sizeof exec_errno);
        while (got < 0 && errno == EINTR);
    }
    close(pipefd[0]);
    if (pid < 0) {
        errno = fork_errno;
        return -1;
    }
    if (got == (ssize_t)sizeof exec_errno) {
        waitpid(pid, NULL, 0);
        errno = exec_errno;
        return -1;
    }
    return pid;
}

int launch_run(char *const argv[], launch_result *r)
{
    double start = now_seconds();
    pid_t pid = launch_start(argv);
    if (pid < 0) {
        fprintf(stderr, "sonde: cannot run Python '%s': %s (use --python PATH or set "
                "SONDE_PYTHON)\n", argv[0], strerror(errno));
        return -1;
    }
    /* The terminal's Ctrl-C goes to the program; sonde waits it out. */
    struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    pid_t w;
    do
        w = wait4(pid, &r->status, 0, &r->usage);
    while (w < 0 && errno == EINTR);
    int wait_errno = errno;
    r->wall = now_seconds() - start;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (w < 0) {
        fprintf(stderr, "sonde: lost track of the program: %s\n", strerror(wait_errno));
        return -1;
    }
    return 0;
}

int launch_exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fflush(NULL);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return SONDE_EXIT_FAILED;
}

/* The launcher: put sonde's package on the path just long enough to
 * import it, so the program sees its own sys.path. */
static const char boot[] =
    "import sys\n"
    "sys.path.insert(0, sys.argv.pop(1))\n"
    "try:\n"
    "    from sonde import _launch\n"
    "except ImportError as e:\n"
    "    sys.stderr.write('sonde: cannot load sonde into Python %d.%d (%s): %s; build it '\n"
    "                     'with: make PYTHON=%s\\n' % (sys.version_info[:2] + (sys.executable,"
    " e, sys.executable)))\n"
    "    sys.exit(1)\n"
    "del sys.path[0]\n"
    "_launch.main()\n";

/* Puts lib first in LD_PRELOAD for the programs started from here on
 * (sonde itself is already running).  0, or -1 after printing why. */
static int preload_set(const char *lib)
{
    if (!lib)
        return 0;
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
    char *value = malloc(len);
    if (!value) {
        fprintf(stderr, "sonde: out of memory\n");
        return -1;
    }
    snprintf(value, len, "%s%s%s", lib, old && *old ? " " : "", old ? old : "");
    int rc = setenv("LD_PRELOAD", value, 1) | setenv("SONDE_PRELOAD", lib, 1);
    free(value);
    if (rc != 0)
        fprintf(stderr, "sonde: cannot set LD_PRELOAD: %s\n", strerror(errno));
    return rc ? -1 : 0;
}

int launch_program_run(const sonde_env *env, const launch_program *prog, launch_result *r)
{
    char pkg[PATH_MAX];
    if (launch_package_dir(env, pkg, sizeof pkg) < 0)
        return -1;
    /* python -c BOOT PKG TOOL STATS OUT FORMAT OPTIONS MODE TARGET ARGS... */
    char **argv = calloc((size_t)prog->nargs + 12, sizeof *argv);
    if (!argv) {
        fprintf(stderr, "sonde: out of memory\n");
        return -1;
    }
    int k = 0;
    argv[k++] = (char *)prog->python;
    argv[k++] = "-c";
    argv[k++] = (char *)boot;
    argv[k++] = pkg;
    argv[k++] = (char *)prog->tool;
    argv[k++] = (char *)prog->stats_path;
    argv[k++] = (char *)prog->out;
    argv[k++] = (char *)prog->format;
    argv[k++] = (char *)prog->options;
    argv[k++] = (char *)prog->mode;
    argv[k++] = (char *)prog->target;
    for (int i = 0; i < prog->nargs; i++)
        argv[k++] = prog->args[i];
    int rc = preload_set(prog->preload);
    if (rc == 0)
        rc = launch_run(argv, r);
    free(argv);
    return rc;
}
