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

/* What runs first in the interpreter: the program is started as a bare
 * run would be (`python SCRIPT ARGS`, `-m MODULE`, `-c CODE`), with the
 * private folder first on PYTHONPATH, so that the interpreter imports this
 * as sitecustomize (written into the folder) during its start-up.  It
 * takes the folder off sys.path and the program's view of PYTHONPATH
 * (os.environ; the process's own environment keeps it, so that a program
 * that execs itself is launched again; with --subprocesses os.environ
 * keeps it too, so that a child started with a copy of it, as torchrun
 * starts its workers, is followed), imports the interpreter's own
 * sitecustomize if it has one (where there is none, another process
 * fails the import as the interpreter's own search would, leaving none in
 * sys.modules), and in the first process to get here (or
 * one that has exec'd itself again: the same pid and arguments) hands
 * over to sonde's launcher (python/sonde/_launch.py), which starts the
 * program's tool as the interpreter starts the program.  With run
 * --subprocesses (the folder has children/), a later Python process the
 * program starts is armed the same way as a child followed, its files in
 * children/ (_launch.arm_child); one sonde cannot load is left to run
 * unprofiled, saying why in its PID.said.  Written for every Python (2.7
 * included), so that one sonde cannot use says so in a line; sonde's
 * package goes on the path just long enough to import it (where it has no
 * extension for this Python, the interpreter's own installed sonde is
 * used, if it has one). */
static const char boot[] =
    "import os, sys\n"
    "def _sonde_boot(boot):\n"
    "    folder = os.path.dirname(os.path.abspath(boot.__file__))\n"
    "    if folder in sys.path:\n"
    "        sys.path.remove(folder)\n"
    "    if sys.version_info[0] >= 3 and not os.path.isdir(folder + '/children'):\n"
    "        data, key = os.environ._data, os.environ.encodekey('PYTHONPATH')\n"
    "        value, mine = data.get(key, b''), os.fsencode(folder)\n"
    "        if value == mine:\n"
    "            del data[key]\n"
    "        elif value.startswith(mine + b':'):\n"
    "            data[key] = value[len(mine) + 1:]\n"
    "    del sys.modules['sitecustomize']\n"
    "    import site\n"
    "    site.execsitecustomize()\n"
    "    theirs = 'sitecustomize' in sys.modules\n"
    "    sys.modules.setdefault('sitecustomize', boot)\n"
    "    f = open('/proc/self/cmdline', 'rb')\n"
    "    me = str(os.getpid()).encode('ascii') + b' ' + f.read().partition(b'\\0')[2]\n"
    "    f.close()\n"
    "    child = False\n"
    "    try:\n"
    "        fd = os.open(folder + '/owner', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 384)\n"
    "    except OSError:\n"
    "        try:\n"
    "            f = open(folder + '/owner', 'rb')\n"
    "            owner = f.read()\n"
    "            f.close()\n"
    "        except (IOError, OSError):\n"
    "            return theirs\n"
    "        child = owner != me\n"
    "        if child and not os.path.isdir(folder + '/children'):\n"
    "            return theirs\n"
    "    else:\n"
    "        os.write(fd, me)\n"
    "        os.close(fd)\n"
    "    def said(line):\n"
    "        if child:\n"
    "            f = open('%s/children/%d.said' % (folder, os.getpid()), 'a')\n"
    "            f.write('sonde: --subprocesses: process %d is left out: %s\\n'\n"
    "                    % (os.getpid(), line))\n"
    "            f.close()\n"
    "            return True\n"
    "        f = open(folder + '/said', 'a')\n"
    "        f.write('sonde: ' + line + '\\n')\n"
    "        f.close()\n"
    "        os._exit(1)\n"
    "    v = sys.version_info\n"
    "    if not (3, " SONDE_PY_STR(SONDE_PY_FIRST_MINOR) ") <= v[:2] <= (3, "
    SONDE_PY_STR(SONDE_PY_LAST_MINOR) "):\n"
    "        if said('%s is Python %d.%d: sonde runs programs with Python "
    SONDE_PY_RANGE " (choose one '\n"
    "                'with --python PATH or SONDE_PYTHON)' % (sys.executable, v[0], v[1])):\n"
    "            return theirs\n"
    "    f = open(folder + '/launch', 'rb')\n"
    "    fields = f.read().decode('utf-8', 'surrogateescape').split('\\0')\n"
    "    f.close()\n"
    "    sys.path.insert(0, fields[0])\n"
    "    try:\n"
    "        from sonde import _launch\n"
    "    except ImportError as e:\n"
    "        why, _launch = str(e), None\n"
    "    del sys.path[0]\n"
    "    if _launch is None:\n"
    "        for name in [m for m in sys.modules if m == 'sonde' or m.startswith('sonde.')]:\n"
    "            del sys.modules[name]\n"
    "        try:\n"
    "            from sonde import _launch\n"
    "        except ImportError:\n"
    "            fix = ('install sonde for it: %s -m pip install sonde' if\n"
    "                   os.path.basename(fields[0]) in ('site-packages', 'dist-packages') else\n"
    "                   'build it with: make PYTHON=%s') % sys.executable\n"
    "            if said('cannot load sonde into Python %d.%d (%s): %s; %s'\n"
    "                    % (v[0], v[1], sys.executable, why, fix)):\n"
    "                return theirs\n"
    "    if child:\n"
    "        return _launch.arm_child(folder, fields[1:], boot) or theirs\n"
    "    _launch.arm(folder, fields[1:], boot)\n"
    "    return True\n"
    "if not _sonde_boot(sys.modules[__name__]):\n"
    "    e = ImportError('not the program sonde started: as if there were no sitecustomize')\n"
    "    e.name = 'sitecustomize'\n"
    "    raise e\n";

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

/* Writes the folder's file `name`: the n strings of parts, each ended by
 * a NUL byte but the last.  0, or -1 after printing why. */
static int write_parts(const launcher_session *s, const char *name, const char *const *parts,
                       int n)
{
    char path[PATH_MAX];
    FILE *f = launcher_path(s, name, path, sizeof path) == 0 ? fopen(path, "wbe") : NULL;
    if (!f)
        return cli_fail(-1, "cannot write in %s: %s", s->dir, strerror(errno));
    for (int i = 0; i < n; i++)
        if (fputs(parts[i], f) == EOF || (i + 1 < n && fputc('\0', f) == EOF))
            break;
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return cli_fail(-1, "cannot write in %s: %s", s->dir, strerror(errno));
    return 0;
}

/* Puts the folder first on PYTHONPATH, keeping the old value in *old (a
 * copy to free, NULL if unset).  0, or -1 after printing why. */
static int pythonpath_set(const launcher_session *s, char **old)
{
    const char *was = getenv("PYTHONPATH");
    *old = was ? strdup(was) : NULL;
    size_t len = strlen(s->dir) + (was ? strlen(was) + 1 : 0) + 1;
    char *value = malloc(len);
    if (!value || (was && !*old)) {
        free(value);
        free(*old);
        return cli_fail(-1, "out of memory");
    }
    snprintf(value, len, "%s%s%s", s->dir, was && *was ? ":" : "", was && *was ? was : "");
    int rc = setenv("PYTHONPATH", value, 1);
    free(value);
    return rc ? cli_fail(-1, "cannot set PYTHONPATH: %s", strerror(errno)) : 0;
}

static void pythonpath_restore(char *old)
{
    if (old)
        setenv("PYTHONPATH", old, 1);
    else
        unsetenv("PYTHONPATH");
    free(old);
}

enum launcher_outcome launcher_run(const sonde_env *env, const launcher_program *prog,
                                   const char *profile, launcher_session *s)
{
    memset(s, 0, sizeof *s);
    s->outcome = LAUNCHER_NOT_RUN;
    char pkg[PATH_MAX];
    if (launch_package_dir_for(env, prog->python, pkg, sizeof pkg) < 0 || launcher_open(s) < 0)
        return s->outcome;
    /* The folder holds the boot (as sitecustomize) and what it is to do:
     * PKG TOOL FORMAT OPTIONS MODE TARGET. */
    const char *boot_text[] = { boot };
    const char *launch[] = { pkg, prog->tool, prog->format, prog->options, prog->mode,
                             prog->target };
    if (write_parts(s, "sitecustomize.py", boot_text, 1) < 0 ||
        write_parts(s, "launch", launch, 6) < 0)
        return s->outcome;
    char children[PATH_MAX];
    if (prog->children && (launcher_path(s, "children", children, sizeof children) < 0 ||
                           mkdir(children, 0700) < 0)) {
        cli_fail(0, "cannot make the folder for the children's profiles in %s: %s", s->dir,
                 strerror(errno));
        return s->outcome;
    }
    /* python [-m|-c] TARGET ARGS..., as a bare run */
    char **argv = calloc((size_t)prog->nargs + 4, sizeof *argv);
    if (!argv) {
        cli_fail(0, "out of memory");
        return s->outcome;
    }
    const char *flag = strcmp(prog->mode, "module") == 0 ? "-m"
                       : strcmp(prog->mode, "code") == 0 ? "-c" : NULL;
    int k = 0;
    argv[k++] = (char *)prog->python;
    if (flag)
        argv[k++] = (char *)flag;
    argv[k++] = (char *)prog->target;
    for (int i = 0; i < prog->nargs; i++)
        argv[k++] = prog->args[i];
    char *old_path;
    if (preload_set(prog->preload) == 0 && pythonpath_set(s, &old_path) == 0) {
        int rc = launch_run(argv, &s->result);
        pythonpath_restore(old_path);
        if (rc == 0)
            s->outcome = conclude(s, prog, profile);
    }
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

int launcher_read(const launcher_session *s, const char *name, sonde_buf *b)
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
    if (launcher_read(s, "interpreter", &interp) == 0 && interp.len < 65536 && interp.data) {
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
    if (launcher_read(s, name, &doc) < 0 || !sonde_buf_ok(&doc)) {
        rc = cli_fail(SONDE_EXIT_FAILED, "%s", doc.why[0] ? doc.why : "out of memory");
    } else {
        with_about w = { .doc = &doc, .about = a };
        rc = cli_output_fill(dest, fill_with_about, &w);
    }
    sonde_buf_free(&doc);
    return rc;
}

/* Removes the files of the folder at path, then the folder. */
static void remove_folder(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL)
            if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, ".."))
                unlinkat(dirfd(d), ent->d_name, 0);
        closedir(d);
    }
    rmdir(path);
}

void launcher_close(launcher_session *s)
{
    if (!s->dir[0])
        return;
    char sub[PATH_MAX]; /* where the interpreter may have cached the boot's bytecode, and
                           run --subprocesses' children's files */
    if (launcher_path(s, "__pycache__", sub, sizeof sub) == 0)
        remove_folder(sub);
    if (launcher_path(s, "children", sub, sizeof sub) == 0)
        remove_folder(sub);
    remove_folder(s->dir);
    s->dir[0] = '\0';
}

int launcher_exit_code(const launcher_session *s)
{
    if (s->outcome == LAUNCHER_NOT_RUN ||
        (s->outcome == LAUNCHER_NOT_STARTED && !WIFSIGNALED(s->result.status)))
        return SONDE_EXIT_FAILED;
    return launch_exit_code(s->result.status);
}
