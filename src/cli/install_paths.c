/* install_paths.c - where the sonde command finds its Python package and
 * which interpreter it launches by default, however it was installed; see
 * launch.h.
 *
 * The package (sonde/_launch.py, the extension, libsonde_alloc.so) is
 * looked for beside the running executable: build/bin/sonde ->
 * build/python; PREFIX/bin/sonde (make install) -> PREFIX/lib/sonde/python;
 * and BIN/sonde installed from a wheel (pip copies the command into the
 * scheme's scripts folder: a venv's or pipx's bin/, ~/.local/bin,
 * /usr/local/bin) -> BIN/../lib/python3.X/site-packages (dist-packages on
 * Debian's system Python).  An installed command launches the interpreter
 * it was installed for: its venv's python3, else python3.X beside it or on
 * PATH, whose version the extension beside it was built for. */
#include "launch.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "path_search.h"

/* Wheel installs considered beside one command (one per Python version). */
#define MAX_INSTALLS 16

static int has_launcher(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/sonde/_launch.py", dir) >= sizeof path)
        return 0;
    return access(path, R_OK) == 0;
}

/* The folder of the running executable (symbolic links resolved, as pipx's
 * ~/.local/bin/sonde -> its venv's bin/sonde).  0, or -1 when unknown. */
static int exe_dir(char *out, size_t len)
{
    out[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0) {
        out[0] = '\0';
        return -1;
    }
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash) {
        out[0] = '\0';
        return -1;
    }
    *slash = '\0';
    return 0;
}

/* The minor version X of a folder .../lib/python3.X/..., or -1. */
static int folder_minor(const char *dir)
{
    const char *p = strstr(dir, "/lib/python3.");
    if (!p)
        return -1;
    char *end;
    long minor = strtol(p + strlen("/lib/python3."), &end, 10);
    return *end == '/' && minor >= 0 && minor < 100 ? (int)minor : -1;
}

/* The minor version X of an interpreter whose file, links resolved, is
 * named python3.X (the usual name under pyenv, a venv's link, Debian), or
 * -1 when its name does not say. */
static int python_minor(const char *python)
{
    char found[PATH_MAX], real[PATH_MAX];
    const char *path = python;
    if (!strchr(python, '/')) { /* looked up on PATH, as exec does */
        if (cli_find_on_path(python, found, sizeof found) < 0)
            return -1;
        path = found;
    }
    if (!realpath(path, real))
        return -1;
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    char *end;
    if (strncmp(base, "python3.", 8) != 0)
        return -1;
    long minor = strtol(base + 8, &end, 10);
    return *end == '\0' && end != base + 8 && minor < 100 ? (int)minor : -1;
}

/* The wheel install beside the command in dir: the site-packages folder
 * holding the package for Python 3.`minor` (any when minor is -1; the
 * first found when none is for that version).  0, or -1 when there is
 * none. */
static int wheel_install(const char *dir, int minor, char *out, size_t outlen)
{
    char pattern[PATH_MAX];
    if ((size_t)snprintf(pattern, sizeof pattern, "%s/../lib/python3.*/*-packages", dir) >=
            sizeof pattern)
        return -1;
    glob_t g;
    if (glob(pattern, GLOB_NOSORT | GLOB_ONLYDIR, NULL, &g) != 0)
        return -1;
    int chosen = -1;
    for (size_t i = 0; i < g.gl_pathc && i < MAX_INSTALLS; i++) {
        const char *base = strrchr(g.gl_pathv[i], '/');
        if (strcmp(base, "/site-packages") != 0 && strcmp(base, "/dist-packages") != 0)
            continue;
        if (!has_launcher(g.gl_pathv[i]))
            continue;
        if (chosen < 0 || (minor >= 0 && folder_minor(g.gl_pathv[i]) == minor))
            chosen = (int)i;
    }
    int rc = chosen >= 0 && realpath(g.gl_pathv[chosen], out) && strlen(out) < outlen ? 0 : -1;
    globfree(&g);
    return rc;
}

/* The build tree's or make install's package beside the command in dir. */
static int source_install(const char *dir, char *out, size_t outlen)
{
    const char *rel[] = { "../python", "../lib/sonde/python" };
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rel[i]) >= sizeof path)
            continue;
        if (has_launcher(path) && realpath(path, out) && strlen(out) < outlen)
            return 0;
    }
    return -1;
}

const char *launch_python(const sonde_env *env, const char *flag_python)
{
    if (flag_python && *flag_python)
        return flag_python;
    const char *e = getenv("SONDE_PYTHON");
    if (e && *e)
        return e;
    if (env && env->python)
        return env->python;
    static char own[PATH_MAX];
    char dir[PATH_MAX], pkg[PATH_MAX], path[PATH_MAX];
    if (exe_dir(dir, sizeof dir) < 0 || source_install(dir, pkg, sizeof pkg) == 0 ||
        wheel_install(dir, -1, pkg, sizeof pkg) < 0)
        return "python3";
    int minor = folder_minor(pkg);
    /* A venv's own interpreter, else the version the extension is for. */
    if ((size_t)snprintf(path, sizeof path, "%s/../pyvenv.cfg", dir) < sizeof path &&
        access(path, R_OK) == 0 &&
        (size_t)snprintf(own, sizeof own, "%s/python3", dir) < sizeof own &&
        access(own, X_OK) == 0)
        return own;
    if (minor < 0)
        return "python3";
    if ((size_t)snprintf(own, sizeof own, "%s/python3.%d", dir, minor) < sizeof own &&
        access(own, X_OK) == 0)
        return own;
    snprintf(own, sizeof own, "python3.%d", minor);
    return own;
}

int launch_package_dir_for(const sonde_env *env, const char *python, char *out, size_t outlen)
{
    if (outlen < PATH_MAX)
        return -1;
    if (env && env->package_dir && has_launcher(env->package_dir)) {
        snprintf(out, outlen, "%s", env->package_dir);
        return 0;
    }
    char dir[PATH_MAX];
    if (exe_dir(dir, sizeof dir) == 0 &&
        (source_install(dir, out, outlen) == 0 ||
         wheel_install(dir, python ? python_minor(python) : -1, out, outlen) == 0))
        return 0;
    return cli_fail(-1, "cannot find sonde's Python package beside %s: run 'make' (or 'make "
                    "install') again, or reinstall sonde with pip",
                    dir[0] ? dir : "the sonde command");
}

int launch_package_dir(const sonde_env *env, char *out, size_t outlen)
{
    return launch_package_dir_for(env, NULL, out, outlen);
}
