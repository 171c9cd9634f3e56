/* launcher.c - a Python program run under sonde's launcher, and what it
 * left in the private folder; see launcher.h. */
#include "launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/pyversions.h"
#include "../formats/json_about.h"
#include "options.h"

/* What runs first in the interpreter: written for every Python (2.7
 * included), so that one that sonde cannot use says so in a line; then
 * sonde's package goes on the path just long enough to import it, so the
 * program sees its own sys.path.  `python -c` imports linecache on 3.13,
 * a script or a module run does not: it goes, to be imported (and
 * profiled) when the program asks for it. */
static const char boot[] =
    "import sys\n"
    "def said(line):\n"
    "    f = open(sys.argv[1] + '/said', 'a')\n"
    "    f.write('sonde: ' + line + '\\n')\n"
    "    f.close()\n"
    "v = sys.version_info\n"
    "if not (3, " SONDE_PY_STR(SONDE_PY_FIRST_MINOR) ") <= v[:2] <= (3, "
    SONDE_PY_STR(SONDE_PY_LAST_MINOR) "):\n"
    "    said('%s is Python %d.%d: sonde runs programs with Python "
    SONDE_PY_RANGE " (choose one '\n"
    "         'with --python PATH or SONDE_PYTHON)' % (sys.executable, v[0], v[1]))\n"
    "    sys.exit(1)\n"
    "if v[:2] >= (3, 13) and sys.argv[6] != 'code':\n"
    "    sys.modules.pop('linecache', None)\n"
    "sys.path.insert(0, sys.argv.pop(2))\n"
    "try:\n"
    "    from sonde import _launch\n"
    "except ImportError as e:\n"
    "    said('cannot load sonde into Python %d.%d (%s): %s; build it with: make PYTHON=%s'\n"
    "         % (v[0], v[1], sys.executable, e, sys.executable))\n"
    "    sys.exit(1)\n"
    "del sys.path[0]\n"
    "_launch.main()\n";

/* What the launcher may say, printed at most (its lines are short). */
#define SAID_MAX (64 * 1024)

/* Puts lib first in LD_PRELOAD for the programs started from here on
 * (sonde itself is already running).  0, or -1 after printing why. */
static int preload_set(const char *lib)
{
    if (!lib)
        return 0;
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
    char *value = malloc(len);
    if (!value)
        return cli_fail(-1, "out of memory");
    snprintf(value, len, "%s%s%s", lib, old && *old ? " " : "", old ? old : "");
    int rc = setenv("LD_PRELOAD", value, 1) | setenv("SONDE_PRELOAD", lib, 1);
    free(value);
    return rc ? cli_fail(-1, "cannot set LD_PRELOAD: %s", strerror(errno)) : 0;
}

int launcher_open(launcher_session *s)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char cwd[PATH_MAX] = "";
    if (tmp[0] != '/' && !getcwd(cwd, sizeof cwd))
        return cli_fail(-1, "cannot tell the current folder: %s", strerror(errno));
    if ((size_t)snprintf(s->dir, sizeof s->dir, "%s%s%s/sonde-XXXXXX", cwd, cwd[0] ? "/" : "",
                         tmp) >= sizeof s->dir) {
        s->dir[0] = '\0';
        return cli_fail(-1, "the temporary folder's name (TMPDIR) is too long");
    }
    if (!mkdtemp(s->dir)) {
        int e = errno;
        s->dir[0] = '\0';
        return cli_fail(-1, "cannot create a folder in %s: %s (set TMPDIR to one that can be "
                        "written)", tmp, strerror(e));
    }
    return 0;
}

int launcher_path(const launcher_session *s, const char *name, char *out, size_t len)
{
    return (size_t)snprintf(out, len, "%s/%s", s->dir, name) < len ? 0 : -1;
}

static int has_file(const launcher_session *s, const char *name)
{
    char path[PATH_MAX];
    return launcher_path(s, name, path, sizeof path) == 0 && access(path, F_OK) == 0;
}

/* Prints what the launcher said; 1 when it said anything. */
static int print_said(const launcher_session *s)
{
    char path[PATH_MAX];
    FILE *f = launcher_path(s, "said", path, sizeof path) == 0 ? fopen(path, "rb") : NULL;
    if (!f)
        return 0;
    static char text[SAID_MAX]; /* off the stack; the command line is one thread */
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    fflush(stdout);
    fwrite(text, 1, n, stderr);
    fflush(stderr);
    return n > 0;
}

/* How a process ended, for a message: "ended with exit status 1", "was
 * killed by signal 9 (Killed)". */
static void describe_end(int status, char *out, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(out, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, len, "ended with exit status %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The outcome of a finished launch, with the line that says what went
 * wrong when the launcher could not say it itself. */
static enum launcher_outcome conclude(const launcher_session *s, const launcher_program *prog,
                                      const char *profile)
{
    int said = print_said(s);
    char end[96];
    describe_end(s->result.status, end, sizeof end);
    if (!has_file(s, "started")) {
        if (!said)
            cli_fail(0, "'%s' %s before the program started: is it Python " SONDE_PY_RANGE "? "
                     "(choose one with --python PATH or SONDE_PYTHON)", prog->python, end);
        return LAUNCHER_NOT_STARTED;
    }
    if (has_file(s, profile))
        return LAUNCHER_PROFILE;
    if (!has_file(s, "unsaved"))
        cli_fail(0, "no profile: the program %s before sonde could write one%s", end,
                 WIFSIGNALED(s->result.status) ? ""
                 : " (it replaced itself with exec, left from C code, or changed user)");
    return LAUNCHER_NO_PROFILE;
}

enum launcher_outcome launcher_run(const sonde_env *env, const launcher_program *prog,
                                   const char *profile, launcher_session *s)
{
    memset(s, 0, sizeof *s);
    s->outcome = LAUNCHER_NOT_RUN;
    char pkg[PATH_MAX];
    if (launch_package_dir(env, pkg, sizeof pkg) < 0 || launcher_open(s) < 0)
        return s->outcome;
    /* python -c BOOT DIR PKG TOOL FORMAT OPTIONS MODE TARGET ARGS... */
    char **argv = calloc((size_t)prog->nargs + 12, sizeof *argv);
    if (!argv) {
        cli_fail(0, "out of memory");
        return s->outcome;
    }
    int k = 0;
    argv[k++] = (char *)prog->python;
    argv[k++] = "-c";
    argv[k++] = (char *)boot;
    argv[k++] = s->dir;
    argv[k++] = pkg;
    argv[k++] = (char *)prog->tool;
    argv[k++] = (char *)prog->format;
    argv[k++] = (char *)prog->options;
    argv[k++] = (char *)prog->mode;
    argv[k++] = (char *)prog->target;
    for (int i = 0; i < prog->nargs; i++)
        argv[k++] = prog->args[i];
    if (preload_set(prog->preload) == 0 && launch_run(argv, &s->result) == 0)
        s->outcome = conclude(s, prog, profile);
    free(argv);
    return s->outcome;
}

/* Appends what is left of the descriptor *ctx to b (a
 * sonde_outfile_fill). */
static int copy_fd(sonde_buf *b, void *ctx)
{
    int in = *(const int *)ctx;
    char chunk[65536];
    for (;;) {
        ssize_t n = read(in, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            snprintf(b->why, sizeof b->why, "cannot read the profile sonde left: %s",
                     strerror(errno));
        if (n <= 0)
            return (int)n;
        sonde_buf_put(b, chunk, (size_t)n);
        if (!sonde_buf_ok(b))
            return -1;
    }
}

int launcher_prepare_load(const launcher_session *s, const char *name, char *path, size_t len,
                          sonde_profile *p, sonde_stats *st)
{
    if (launcher_path(s, name, path, len) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "the temporary folder's name is too long");
    if (sonde_profile_init(p) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_stats_init(st);
    return 0;
}

int launcher_deliver(const launcher_session *s, const char *name, const cli_output *dest)
{
    char path[PATH_MAX];
    errno = ENAMETOOLONG;
    int in = launcher_path(s, name, path, sizeof path) == 0 ? open(path, O_RDONLY | O_CLOEXEC)
                                                            : -1;
    if (in < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot read the profile sonde left in %s: %s",
                        s->dir, strerror(errno));
    int rc = cli_output_fill(dest, copy_fd, &in);
    close(in);
    return rc;
}

/* The bytes of the folder's file `name` into b.  0, or -1 with why in
 * b->why (or b->oom set). */
static int read_file(const launcher_session *s, const char *name, sonde_buf *b)
{
    char path[PATH_MAX];
    errno = ENAMETOOLONG;
    int in = launcher_path(s, name, path, sizeof path) == 0 ? open(path, O_RDONLY | O_CLOEXEC)
                                                            : -1;
    if (in < 0) {
        snprintf(b->why, sizeof b->why, "cannot read the file '%.64s' sonde left: %s", name,
                 strerror(errno));
        return -1;
    }
    int rc = copy_fd(b, &in);
    close(in);
    return rc;
}

int launcher_about(const launcher_session *s, const launcher_program *prog, sonde_about *a)
{
    const launch_result *r = &s->result;
    const char *flag = strcmp(prog->mode, "module") == 0 ? "-m"
                       : strcmp(prog->mode, "code") == 0 ? "-c" : NULL;
    int rc = sonde_about_add_arg(a, prog->python, strlen(prog->python));
    if (flag)
        rc |= sonde_about_add_arg(a, flag, 2);
    rc |= sonde_about_add_arg(a, prog->target, strlen(prog->target));
    for (int i = 0; i < prog->nargs; i++)
        rc |= sonde_about_add_arg(a, prog->args[i], strlen(prog->args[i]));
    char cwd[PATH_MAX]; /* the program started in sonde's own folder */
    if (getcwd(cwd, sizeof cwd))
        rc |= sonde_about_set(&a->cwd, cwd, strlen(cwd));
    a->start_ns = r->start_ns;
    a->wall = r->wall;
    a->cpu = (double)r->usage.ru_utime.tv_sec + (double)r->usage.ru_utime.tv_usec * 1e-6 +
             (double)r->usage.ru_stime.tv_sec + (double)r->usage.ru_stime.tv_usec * 1e-6;
    /* sys.executable NUL sys.version, as the launcher wrote them */
    sonde_buf interp;
    sonde_buf_init(&interp);
    if (read_file(s, "interpreter", &interp) == 0 && interp.len < 65536 && interp.data) {
        const char *nul = memchr(interp.data, '\0', interp.len);
        if (nul) {
            size_t exe = (size_t)(nul - interp.data);
            if (exe)
                rc |= sonde_about_set(&a->executable, interp.data, exe);
            rc |= sonde_about_set(&a->version, nul + 1, interp.len - exe - 1);
        }
    }
    if (!sonde_buf_ok(&interp))
        rc = -1;
    sonde_buf_free(&interp);
    return rc ? -1 : 0;
}

/* The document with its about: a sonde_outfile_fill. */
typedef struct with_about {
    const sonde_buf *doc;
    const sonde_about *about;
} with_about;

static int fill_with_about(sonde_buf *b, void *ctx)
{
    const with_about *w = ctx;
    sonde_json_about_insert(b, w->doc->data ? w->doc->data : "", w->doc->len, w->about, 0);
    return sonde_buf_ok(b) ? 0 : -1;
}

int launcher_deliver_about(const launcher_session *s, const char *name, const sonde_about *a,
                           const cli_output *dest)
{
    sonde_buf doc;
    sonde_buf_init(&doc);
    int rc;
    if (read_file(s, name, &doc) < 0 || !sonde_buf_ok(&doc)) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", doc.why[0] ? doc.why : "out of memory");
    } else {
        with_about w = { .doc = &doc, .about = a };
        rc = cli_output_fill(dest, fill_with_about, &w);
    }
    sonde_buf_free(&doc);
    return rc;
}

void launcher_close(launcher_session *s)
{
    if (!s->dir[0])
        return;
    DIR *d = opendir(s->dir);
    if (d) {
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL)
            if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, ".."))
                unlinkat(dirfd(d), ent->d_name, 0);
        closedir(d);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
}

int launcher_exit_code(const launcher_session *s)
{
    if (s->outcome == LAUNCHER_NOT_RUN ||
        (s->outcome == LAUNCHER_NOT_STARTED && !WIFSIGNALED(s->result.status)))
        return SONDE_EXIT_FAILED;
    return launch_exit_code(s->result.status);
}
