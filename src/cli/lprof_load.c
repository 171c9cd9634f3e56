/* lprof_load.c - line_profiler's .lprof files; see lprof_load.h. */
#include "lprof_load.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../formats/load.h"
#include "launch.h"
#include "launcher.h"
#include "options.h"

int cli_lprof_is(const char *file)
{
    size_t n = strlen(file);
    if (n > 6 && strcmp(file + n - 6, ".lprof") == 0)
        return 1;
    /* O_NONBLOCK: a FIFO is never waited on (sonde_load_any refuses it) */
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char head[2];
    int is = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, 2) == 2 &&
             head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
    close(fd);
    return is;
}

/* The helper, run in any Python 3 (the package's __init__ and its
 * compiled extension are not loaded): argv[1] the package's folder, then
 * the .lprof and the document to write. */
static const char boot[] =
    "import sys, types\n"
    "try:\n"
    "    pkg = types.ModuleType('sonde')\n"
    "    pkg.__path__ = [sys.argv[1] + '/sonde']\n"
    "    sys.modules['sonde'] = pkg\n"
    "    from sonde._line_stats import main\n"
    "except Exception as e:\n"
    "    sys.stderr.write('sonde: %s cannot read .lprof files (%s: %s): set SONDE_PYTHON to "
    "a Python 3.8 or later\\n' % (sys.executable, type(e).__name__, e))\n"
    "    sys.exit(1)\n"
    "sys.exit(main(sys.argv[2], sys.argv[3]))\n";

int cli_lprof_load(const sonde_env *env, const char *file, sonde_jtree *doc)
{
    char pkg[PATH_MAX], out[PATH_MAX], err[512];
    launcher_session folder = { .dir = "" };
    if (launch_package_dir(env, pkg, sizeof pkg) < 0 || launcher_open(&folder) < 0)
        return SONDE_EXIT_FAILED;
    int rc = 0;
    if (launcher_path(&folder, "doc.json", out, sizeof out) < 0) {
        rc = cli_fail(SONDE_EXIT_FAILED, "the temporary folder's name (TMPDIR) is too long");
    } else {
        char *run[] = { (char *)launch_python(env, NULL), "-c", (char *)boot, pkg,
                        (char *)file, out, NULL };
        launch_result r;
        fflush(stdout);
        if (launch_run(run, &r) < 0)
            rc = SONDE_EXIT_FAILED;
        else if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
            rc = SONDE_EXIT_FAILED; /* the helper said why */
    }
    if (rc == 0) {
        sonde_profile p;
        sonde_stats s;
        enum sonde_load_kind kind;
        if (sonde_profile_init(&p) < 0)
            rc = cli_fail(SONDE_EXIT_FAILED, "out of memory");
        else {
            sonde_stats_init(&s);
            if (sonde_load_any(out, &p, &s, doc, &kind, err, sizeof err) < 0) {
                rc = cli_fail(SONDE_EXIT_FAILED, "'%s': %s", file, err);
            } else if (kind != SONDE_LOADED_LINES) {
                if (kind == SONDE_LOADED_MEM)
                    sonde_jtree_free(doc);
                rc = cli_fail(SONDE_EXIT_FAILED, "'%s': the .lprof reader made no lines "
                              "document", file);
            }
            sonde_stats_free(&s);
            sonde_profile_free(&p);
        }
    }
    launcher_close(&folder);
    return rc;
}
