"""sonde timeit --profile and --lines: one value's loop of a statement run
again under `sonde run`'s or `sonde lines`' engine, in a fresh process of
the statement's interpreter (python -m sonde's entry point)."""

import os
import subprocess
import sys
import tempfile

from ._timeit import TimeitError, short


def loop_source(stmt, setup):
    """timeit's timing function without its clock: the setup, then the
    statement inlined in a loop of _sonde_n passes, in one function (as
    timeit.Timer compiles them)."""
    def block(text, indent):
        return "\n".join(indent + line for line in text.splitlines()) or indent + "pass"
    return ("def _sonde_loop(_sonde_n):\n%s\n    for _sonde_i in range(_sonde_n):\n%s\n"
            % (block(setup, "    "), block(stmt, "        ")))


# What `sonde lines -c` runs for --lines, as a string given to exec: the
# tool counts the functions defined in the code it is given from the
# start, and this code's own are not the user's.  The loop, compiled
# apart, runs once to find the Python functions it calls in the user's
# files (not the standard library's, nor those of the site-packages
# folders, Debian's dist-packages included); then it and they
# are registered with the line tool (the `profile` builtin's profiler) and
# the loop runs its calibrated number of passes.
_LINES_DRIVER = """\
import linecache, os, site, sys, sysconfig
src, loops = %r, %d
linecache.cache["<timeit-src>"] = (len(src), None, src.splitlines(True), "<timeit-src>")
space = {"__name__": "__main__"}
exec(compile(src, "<timeit-src>", "exec"), space)
loop = space["_sonde_loop"]
paths = sysconfig.get_paths()
skip = tuple(os.path.join(os.path.realpath(path), "")
             for path in [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
             + site.getsitepackages() + [site.getusersitepackages()])
found = []
def called(frame, event, arg):
    code = frame.f_code
    if (event == "call" and code not in found and not code.co_name.startswith("<")
            and os.path.isfile(code.co_filename)
            and not os.path.realpath(code.co_filename).startswith(skip)):
        found.append(code)
sys.setprofile(called)
try:
    loop(1)
finally:
    sys.setprofile(None)
profile.__self__.add_code(loop.__code__, "<timeit loop>")
for code in found:
    profile.__self__.add_code(code, getattr(code, "co_qualname", code.co_name))
loop(loops)
"""


_ARG_MAX_CODE = 64 * 1024  # bytes of code passed as -c; more goes through a file


def profile(r, tool, named, output, output_name):
    """--profile (tool "run") and --lines ("lines"): one value's loop (the
    setup, then the calibrated count of passes) under `sonde run`'s or
    `sonde lines`' engine in a fresh process of the statement's
    interpreter; the tool prints its table on stderr, and writes its file
    to output (a path, or None), which its lines call output_name (the
    name the user gave: the command delivers the file there).  The
    caller flushes its standard output first."""
    src = loop_source(r.stmt, r.setup)
    if tool == "run":
        code, args = src + "_sonde_loop(%d)\n" % r.loops, ["-l", "15"]
    else:
        code, args = "exec(%r)\n" % (_LINES_DRIVER % (src, r.loops)), []
    if output:
        args += ["-o", output]
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    boot = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from sonde.__main__ import main; sys.exit(main())")
    if named:
        sys.stderr.write("\n== %s\n" % r.name)
    sys.stderr.flush()
    with tempfile.TemporaryDirectory(prefix="sonde-timeit-") as folder:
        program = ["-c", code]
        if len(code.encode("utf-8")) > _ARG_MAX_CODE:
            # The kernel takes no argument over 128 KiB: a setup that
            # large is run from a file instead (its functions then name
            # that file, gone once the profile is made).
            program = [os.path.join(folder, "timeit_loop.py")]
            with open(program[0], "w", encoding="utf-8") as f:
                f.write(code)
        p = subprocess.run([sys.executable, "-c", boot, pkg, tool] + args
                           + ["--python", r.python] + program, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, universal_newlines=True)
    if "No module named 'sonde._sonde'" in p.stderr:
        raise TimeitError("--%s needs sonde's extension built for %s (make PYTHON=%s)"
                          % ("profile" if tool == "run" else "lines", sys.executable,
                             sys.executable))
    sys.stderr.write(p.stderr.replace(output, output_name) if output else p.stderr)
    if p.returncode != 0:
        raise TimeitError("the %s of '%s' failed (exit status %d)"
                          % ("profile" if tool == "run" else "line profile", short(r.stmt),
                             p.returncode))
