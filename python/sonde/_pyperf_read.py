"""Reading pyperf's JSON benchmark files (format 1.0) for `sonde timeit
--compare`: the file is untrusted input, so every field is checked before
any arithmetic sees it.

A file that is not a regular file (a FIFO would be waited on for ever),
is not JSON, is nested deeper than the parser's recursion
limit, holds a value that is not a number above 0 (pyperf refuses 0
too), is too large to add up (VALUE_MAX), a loop count that is not a
whole number from 1 or a name that is not a string, or a file over
FILE_MAX is refused with one line (PyperfError's message), never a
traceback.  Reading is linear in the size of the file.
"""

import json
import math
import os
import stat

# The largest value accepted: 1e15 of the file's unit (31 million years
# in seconds, a petabyte in bytes), so that sums and squares of millions
# of values stay finite.
VALUE_MAX = 1e15
LOOPS_MAX = 1 << 62
# The largest file read: pyperf writes about 20 bytes a value, so 128 MiB
# holds millions of values, where parsing a larger one would take
# gigabytes of memory.
FILE_MAX = 128 << 20


class PyperfError(Exception):
    """Why the file cannot be compared, in one line."""


def _shown(value, width=40):
    """value as JSON, cut to width, control characters escaped (JSON's
    escapes), for a message."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = "?"
    return text if len(text) <= width else text[:width - 3] + "..."


def _printable(text):
    """text with its control characters as \\xNN, so that a name prints
    on one line and drives no terminal."""
    def escaped(c):
        n = ord(c)
        return "\\x%02x" % n if n < 0x100 else "\\u%04x" % n if n < 0x10000 else "\\U%08x" % n
    return "".join(c if c.isprintable() else escaped(c) for c in text)


def _values(path, where, values):
    if not isinstance(values, list):
        raise PyperfError("%s: %s: 'values' is %s, not a list of numbers"
                          % (path, where, _shown(values)))
    out = []
    for v in values:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= VALUE_MAX
        if not ok or not math.isfinite(float(v)):
            raise PyperfError("%s: %s: the value %s is not a number above 0 and at most %g"
                              % (path, where, _shown(v), VALUE_MAX))
        out.append(float(v))
    return out


def _loops(path, where, loops):
    if isinstance(loops, bool) or not isinstance(loops, int) or not 1 <= loops <= LOOPS_MAX:
        raise PyperfError("%s: %s: 'loops' is %s, not a whole number from 1"
                          % (path, where, _shown(loops)))
    return loops


def _object(path, where, value, what):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PyperfError("%s: %s: %s is %s, not an object" % (path, where, what, _shown(value)))
    return value


def read(path):
    """{name: (runs, loops, python)} of the file's benchmarks (names with
    control characters escaped, see _printable): runs, the
    lists of values of the runs that have any; loops, that of the last
    such run (0 when the file names none); python, the interpreter the
    file names, or "".  Raises PyperfError."""
    try:
        # a pipe would be waited on for ever, a device read without end
        st = os.stat(path)
        kind = st.st_mode
        if not stat.S_ISREG(kind):
            raise PyperfError("%s is %s, not a pyperf JSON file" % (
                path, "a folder" if stat.S_ISDIR(kind) else "a pipe (FIFO)"
                if stat.S_ISFIFO(kind) else "a device or socket"))
        text = b""
        if st.st_size <= FILE_MAX:
            with open(path, "rb") as f:
                text = f.read(FILE_MAX + 1)   # (it may have grown since)
        if st.st_size > FILE_MAX or len(text) > FILE_MAX:
            raise PyperfError("%s is larger than %d MiB: not a pyperf file sonde compares with"
                              % (path, FILE_MAX >> 20))
        data = json.loads(text.decode("utf-8"))
    except OSError as e:
        raise PyperfError("cannot read %s: %s" % (path, e.strerror))
    except (ValueError, UnicodeDecodeError):
        raise PyperfError("%s is not a pyperf JSON file (not JSON)" % path)
    except RecursionError:
        raise PyperfError("%s is not a pyperf JSON file (nested too deep)" % path)
    if not isinstance(data, dict):
        raise PyperfError("%s is not a pyperf JSON benchmark file (not an object)" % path)
    if data.get("version") != "1.0":
        raise PyperfError("%s: pyperf file format %s is not supported (1.0 is)"
                          % (path, _shown(data.get("version"))))
    common = _object(path, "the file", data.get("metadata"), "'metadata'")
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise PyperfError("%s is not a pyperf JSON benchmark file ('benchmarks' is %s, not a "
                          "list)" % (path, _shown(benchmarks)))
    out = {}
    for i, b in enumerate(benchmarks):
        where = "benchmark %d" % (i + 1)
        b = _object(path, where, b, "the benchmark")
        meta = dict(common, **_object(path, where, b.get("metadata"), "'metadata'"))
        name = meta.get("name", "?")
        if not isinstance(name, str):
            raise PyperfError("%s: %s: its name %s is not a string" % (path, where, _shown(name)))
        python = meta.get("python_executable", "")
        runs_in = b.get("runs")
        if not isinstance(runs_in, list):
            raise PyperfError("%s: %s: 'runs' is %s, not a list" % (path, where, _shown(runs_in)))
        loops = meta.get("loops")
        runs = []
        for j, run in enumerate(runs_in):
            here = "%s, run %d" % (where, j + 1)
            run = _object(path, here, run, "the run")
            values = _values(path, here, run.get("values") or [])
            run_loops = _object(path, here, run.get("metadata"), "'metadata'").get("loops")
            if values:
                runs.append(values)
                loops = run_loops if run_loops is not None else loops
        if runs:
            out[_printable(name)] = (runs, _loops(path, where, loops) if loops is not None else 0,
                         python if isinstance(python, str) else "")
    if not out:
        raise PyperfError("%s holds no benchmark values" % path)
    return out
