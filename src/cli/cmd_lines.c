/* cmd_lines.c - sonde lines: hits and time of every line of the chosen
 * functions (replaces kernprof -l + line_profiler).
 *
 * The program runs under the launcher's line tool (python/sonde/_lines.py
 * chooses the functions, src/ext/lines.c counts), which prints the table
 * on stderr and writes -o; this side checks the command line and passes
 * the program's exit code on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/buf.h"
#include "commands.h"
#include "launch.h"
#include "options.h"

static const char usage[] =
    "usage: sonde lines [-o FILE] [-f FUNC]... [-u UNIT] [--bytecode] [--python PY]\n"
    "                   (SCRIPT | -m MODULE) [ARGS...]\n"
    "\n"
    "Runs a Python program and counts, for every line of the chosen functions,\n"
    "how often it ran (hits) and the time until the next line of the same call\n"
    "(callees included), then prints line_profiler's table on stderr.\n"
    "\n"
    "Functions: those decorated with @profile (a builtin sonde provides, as\n"
    "kernprof does), those named with -f, and when neither is given every\n"
    "function defined in the script.\n"
    "\n"
    "  -f, --function F   a qualified name or pattern (Class.method, work*), or\n"
    "                     module:qualname for a module the program imports\n"
    "  -u, --unit UNIT    s, ms, us or ns (default: the most readable)\n"
    "      --bytecode     also each bytecode instruction under its line: offset,\n"
    "                     name, argument (as dis shows them), hits and time\n"
    "  -o, --output FILE  write the counts as JSON (see README, Formats)\n"
    "      --python PY    interpreter to run the program with\n";

int cmd_lines(int argc, char **argv, const sonde_env *env)
{
    const char *out = NULL, *unit = NULL, *python = NULL, *mode = NULL, *target = NULL;
    int bytecode = 0;
    sonde_buf functions;
    sonde_buf_init(&functions);
    int i, rc = 0;
    for (i = 1; i < argc && !target; i++) {
        const char *a = argv[i], *value;
        int r;
        if (cli_flag(a, "-h", "--help")) {
            fputs(usage, stdout);
            sonde_buf_free(&functions);
            return 0;
        }
        if (cli_flag(a, NULL, "--bytecode")) {
            bytecode = 1;
            continue;
        }
        if (cli_flag(a, "-m", NULL)) {
            if (i + 1 >= argc) {
                rc = cli_usage_error("lines", "-m needs a module name");
                break;
            }
            mode = "module";
            target = argv[++i];
            continue;
        }
        if ((r = cli_option(argc, argv, &i, "-f", "--function", &value)) > 0) {
            sonde_buf_puts(&functions, functions.len ? ", " : "");
            sonde_buf_json_str(&functions, value);
            continue;
        }
        if (r < 0 || (r = cli_option(argc, argv, &i, "-o", "--output", &out)) ||
            (r = cli_option(argc, argv, &i, "-u", "--unit", &unit)) ||
            (r = cli_option(argc, argv, &i, NULL, "--python", &python))) {
            if (r < 0) {
                rc = SONDE_EXIT_USAGE;
                break;
            }
            continue;
        }
        if (strcmp(a, "--") == 0 && i + 1 < argc)
            a = argv[++i];
        else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error("lines", "unknown option '%s'", a);
            break;
        }
        mode = "script";
        target = a;
    }
    if (rc == 0 && !target)
        rc = cli_usage_error("lines", "what should run? give a script or -m MODULE");
    if (rc == 0 && unit && strcmp(unit, "s") && strcmp(unit, "ms") && strcmp(unit, "us") &&
        strcmp(unit, "ns"))
        rc = cli_usage_error("lines", "unknown unit '%s' (use s, ms, us or ns)", unit);
    struct stat st;
    if (rc == 0 && strcmp(mode, "script") == 0 && stat(target, &st) < 0)
        rc = cli_fail(SONDE_EXIT_USAGE, "cannot run '%s': %s", target, strerror(errno));
    if (rc == 0 && out) {
        FILE *f = fopen(out, "a");
        if (!f)
            rc = cli_fail(SONDE_EXIT_FAILED, "cannot write '%s': %s", out, strerror(errno));
        else
            fclose(f);
    }
    if (rc != 0) {
        sonde_buf_free(&functions);
        return rc;
    }

    sonde_buf options;
    sonde_buf_init(&options);
    sonde_buf_printf(&options, "{\"functions\": [%s]", functions.data ? functions.data : "");
    if (unit)
        sonde_buf_printf(&options, ", \"unit\": \"%s\"", unit);
    if (bytecode)
        sonde_buf_puts(&options, ", \"bytecode\": true");
    sonde_buf_puts(&options, "}");
    launch_program prog = {
        .python = launch_python(env, python), .tool = "lines", .stats_path = "",
        .out = out ? out : "", .format = "", .options = options.data, .mode = mode,
        .target = target, .args = argv + i, .nargs = argc - i,
    };
    launch_result r;
    rc = sonde_buf_ok(&options) ? launch_program_run(env, &prog, &r) : -1;
    sonde_buf_free(&options);
    sonde_buf_free(&functions);
    return rc < 0 ? SONDE_EXIT_FAILED : launch_exit_code(r.status);
}
