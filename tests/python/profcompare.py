"""Compare two .prof files (sonde's and cProfile's) edge by edge.

Both files are loaded with pstats; the harness each tool wraps around the
program (cProfile's exec/enable/disable and run_module, sonde's launcher)
is left out, and so is importlib's path search, which depends on the
sys.path entry cProfile adds.
"""

import marshal
import os
import re

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")

# Entry points only one of the two tools records around the program.
HARNESS_NAMES = {
    "<method 'enable' of '_lsprof.Profiler' objects>",
    "<method 'disable' of '_lsprof.Profiler' objects>",
    "<built-in method builtins.exec>",
    "<built-in method builtins.compile>",
    "<module>",  # compared through its callees, see below
}


def load(path):
    with open(path, "rb") as f:
        return marshal.load(f)


def norm_key(key):
    filename, line, name = key
    if filename != "~" and not filename.startswith("<"):
        filename = os.path.realpath(filename)
    return filename, line, _ADDRESS.sub(" at 0x?", name)


def _is_import_machinery(key):
    # importlib's path search depends on sys.path, which cProfile alters.
    return key[0].startswith("<frozen importlib")


def edges(stats, keep_files=None):
    """{(caller, callee): (ncalls, pcalls)} over normalised keys."""
    out = {}
    for callee, (_cc, _nc, _tt, _ct, callers) in stats.items():
        callee_n = norm_key(callee)
        for caller, figures in callers.items():
            caller_n = norm_key(caller)
            if callee_n[2] in HARNESS_NAMES and callee_n[0] == "~":
                continue
            if caller_n[2] in HARNESS_NAMES and caller_n[0] == "~":
                continue
            if _is_import_machinery(caller_n) or _is_import_machinery(callee_n):
                continue
            if keep_files and not (caller_n[0] in keep_files or callee_n[0] in keep_files):
                continue
            nc, cc = (figures[0], figures[1]) if isinstance(figures, tuple) else (figures, figures)
            prev = out.get((caller_n, callee_n), (0, 0))
            out[(caller_n, callee_n)] = (prev[0] + nc, prev[1] + cc)
    return out


def differences(sonde_prof, cprofile_prof, keep_files=None):
    """Edges whose counts differ, as readable lines (empty when equal)."""
    a = edges(load(sonde_prof), keep_files)
    b = edges(load(cprofile_prof), keep_files)
    lines = []
    for key in sorted(set(a) | set(b), key=repr):
        if a.get(key) != b.get(key):
            lines.append("%s -> %s: sonde %s, cProfile %s" % (key[0], key[1], a.get(key), b.get(key)))
    return lines
