"""line_profiler's results object (LineStats) and its `.lprof` file.

A LineStats holds what line_profiler's get_stats() returns:
timings = {(file, first_line, name): [(line, hits, time), ...]} (only
lines that ran, time in units of `unit` seconds).  to_file() writes the
pickle kernprof writes, naming line_profiler.line_profiler.LineStats, so
that `python -m line_profiler FILE.lprof` prints it; from_files() reads
such files (kernprof's or sonde's) without line_profiler and without
running anything a file names: only that class is let through.  print()
prints line_profiler's report with sonde's table (_sonde.lines_table).
`sonde report FILE.lprof` and `sonde view FILE.lprof` run main() in any
Python 3 (this module needs no compiled code): it turns the file into
sonde's lines document, which the command line draws.
"""

import inspect
import json
import linecache
import math
import numbers
import os
import pickle
import stat
import sys

# What a pickled LineStats may name: line_profiler 5's class, 4's, and
# what protocols 0 and 1 use to build an instance.
_LINE_STATS_NAMES = {("line_profiler.line_profiler", "LineStats"),
                     ("line_profiler._line_profiler", "LineStats")}
_BUILD_NAMES = {("copyreg", "_reconstructor"), ("builtins", "object")}


class LineStats:
    """timings and unit, as line_profiler's LineStats."""

    def __init__(self, timings, unit):
        self.timings = timings
        self.unit = unit

    def __repr__(self):
        return "LineStats(%r, %.2G)" % (self.timings, self.unit)

    def __eq__(self, other):
        try:
            return self.timings == other.timings and self.unit == other.unit
        except AttributeError:
            return NotImplemented

    def __add__(self, other):
        return type(self).from_stats_objects(self, other)

    @classmethod
    def from_stats_objects(cls, stats, *more):
        """The sum of several LineStats, in the largest unit among them."""
        objs = sorted([stats, *more], key=lambda s: s.unit)
        unit = objs[-1].unit
        merged = {}
        for s in objs:
            factor = s.unit / unit
            for key, entries in s.timings.items():
                lines = merged.setdefault(key, {})
                for line, hits, time in entries:
                    old_hits, old_time = lines.get(line, (0, 0))
                    lines[line] = (old_hits + hits, old_time + factor * time)
        return cls({key: [(line, hits, int(round(time))) for line, (hits, time) in sorted(v.items())]
                    for key, v in merged.items()}, unit)

    def to_bytes(self):
        """The bytes of the .lprof file kernprof writes (see the module's
        comment)."""
        return lprof_bytes(self.timings, self.unit)

    def to_file(self, filename):
        """Writes the .lprof file kernprof writes (see the module's comment)."""
        with open(filename, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def from_files(cls, file, *files):
        """The sum of the LineStats in .lprof files.  A file that is not
        one raises pickle.UnpicklingError, saying which file and why."""
        return cls.from_stats_objects(*[read_lprof(path) for path in (file, *files)])

    def print(self, stream=None, output_unit=None, stripzeros=False, details=True,
              summarize=False, sort=False, rich=False, **_config):
        functions = [_function_entry(key, entries, self.unit)
                     for key, entries in self.timings.items()]
        print_functions(functions, stream, output_unit, stripzeros, details, summarize, sort)


def lprof_bytes(timings, unit):
    """A pickle (protocol 2) of line_profiler.line_profiler.LineStats with
    these timings and unit, written without importing line_profiler: the
    class by name (GLOBAL), built with no arguments (NEWOBJ), its __dict__
    set from the state (BUILD)."""
    state = pickle.dumps({"timings": timings, "unit": unit}, 2)
    return (b"\x80\x02" + b"cline_profiler.line_profiler\nLineStats\n" + b")\x81"
            + state[2:-1] + b"b.")


class _Reader(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _LINE_STATS_NAMES:
            return LineStats
        if (module, name) in _BUILD_NAMES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError("it names %s.%s, not line_profiler's LineStats"
                                     % (module, name))


def read_lprof(path):
    """The LineStats of one .lprof file, checked field by field."""
    try:
        with open(path, "rb") as f:
            stats = _Reader(f).load()
        _check(stats)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, OverflowError, MemoryError, RecursionError) as e:
        raise pickle.UnpicklingError("%s: not a line_profiler .lprof file (%s)"
                                     % (path, e)) from None
    return LineStats(stats.timings, stats.unit)


_LINE_MAX = (1 << 31) - 1  # a line number the documents hold (C int)
_NS_MAX = 1 << 62         # a time, and a function's total, in ns (C uint64, with room)
_FILE_MAX = 1 << 30       # as the command line's other readers (SONDE_LOAD_MAX_BYTES)


def _check(stats):
    if not isinstance(stats, LineStats):
        raise ValueError("it holds a %s" % type(stats).__name__)
    timings, unit = getattr(stats, "timings", None), getattr(stats, "unit", None)
    if not isinstance(unit, numbers.Real) or not unit > 0 or not math.isfinite(unit):
        raise ValueError("its unit is %r" % (unit,))
    if not isinstance(timings, dict):
        raise ValueError("its timings are a %s" % type(timings).__name__)
    for key, entries in timings.items():
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)
                and isinstance(key[1], int) and isinstance(key[2], str)):
            raise ValueError("a function is named %r" % (key,))
        if not isinstance(entries, list) or not all(
                isinstance(e, tuple) and len(e) == 3 and isinstance(e[0], int)
                and isinstance(e[1], int) and isinstance(e[2], numbers.Real)
                and math.isfinite(e[2]) for e in entries):
            raise ValueError("the lines of %r are not (line, hits, time)" % (key,))


def _block_end(filename, first, last_hit):
    """The last line of the definition starting at first (as line_profiler
    shows it), or last_hit when the source is not at hand."""
    lines = linecache.getlines(filename)[first - 1:] if first > 0 else []
    try:
        block = inspect.getblock(lines) if lines else []
    except (IndexError, SyntaxError, ValueError, RecursionError):
        block = []
    return max(first + len(block) - 1, last_hit)


def _source_lines(filename, first, last):
    """{line: text} of the file's lines first..last, those there are."""
    return {n: text.rstrip("\n")
            for n, text in enumerate(linecache.getlines(filename)[max(first, 1) - 1:last],
                                     max(first, 1))}


def _definition_source(filename, first, last_hit):
    """_source_lines of the definition starting at first (_block_end)."""
    return _source_lines(filename, first, _block_end(filename, first, last_hit))


def _function_entry(key, entries, unit, sources=_definition_source):
    """A function of sonde's lines document (docs/formats.md) from a
    timings entry, times in ns: the lines of its definition (as far as its
    source is at hand) and every line that ran.  sources(file, first,
    last): {line: text}."""
    filename, first, name = key
    ns = {}
    for line, hits, time in entries:
        old_hits, old_ns = ns.get(line, (0, 0))
        ns[line] = (old_hits + hits, old_ns + int(round(time * unit * 1e9)))
    text = sources(filename, first, max(ns, default=first))
    shown = sorted(set(ns) | set(text) | {first})
    lines = [{"line": n, "hits": ns.get(n, (0, 0))[0], "time_ns": ns.get(n, (0, 0))[1],
              "source": text.get(n, "")}
             for n in shown]
    return {"file": filename, "name": name, "first_line": first,
            "total_ns": sum(t for _, t in ns.values()), "lines": lines}


def print_functions(functions, stream, output_unit, stripzeros, details, summarize, sort):
    """line_profiler's report of functions (entries of sonde's lines
    document): stripzeros leaves out those that took no time, sort orders
    them by total time (least first), details prints each one's table,
    summarize a line per function with its total in seconds."""
    from ._sonde import lines_table

    stream = stream if stream is not None else sys.stdout
    if stripzeros:
        functions = [f for f in functions if f["total_ns"]]
    if sort:
        functions = sorted(functions, key=lambda f: f["total_ns"])
    if details:
        doc = json.dumps({"sonde": 1, "mode": "lines", "functions": functions}).encode()
        stream.write(lines_table(doc, None if output_unit is None else str(output_unit)))
    if summarize:
        for f in functions:
            stream.write("%6.2f seconds - %s:%s - %s\n"
                         % (f["total_ns"] / 1e9, f["file"], f["first_line"], f["name"]))



def _python_source(filename, first, last):
    """_source_lines of a .py file, for a document made from a file that
    may come from anywhere: the lines of a definition that starts at
    first, no other file's (a .lprof may name any path)."""
    try:
        if not filename.endswith((".py", ".pyw")) or not stat.S_ISREG(os.stat(filename).st_mode):
            return {}
    except (OSError, ValueError):
        return {}
    return _definition_source(filename, first, last)


def lprof_document(path):
    """sonde's lines document (JSON bytes) of a .lprof file, functions in
    the order `python -m line_profiler` prints them.  Raises
    pickle.UnpicklingError (read_lprof's) for a file that is not one."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise pickle.UnpicklingError("cannot read '%s': %s" % (path, e.strerror)) from None
    if not stat.S_ISREG(mode):
        raise pickle.UnpicklingError("'%s' is not a regular file" % path)
    if os.stat(path).st_size > _FILE_MAX:
        raise pickle.UnpicklingError("'%s' is larger than %d bytes" % (path, _FILE_MAX))
    stats = read_lprof(path)
    try:
        functions = [_function_entry(key, entries, stats.unit, _python_source)
                     for key, entries in sorted(stats.timings.items())]
    except (OverflowError, ValueError, TypeError, MemoryError, RecursionError) as e:
        raise pickle.UnpicklingError("%s: not a line_profiler .lprof file (%s)"
                                     % (path, e)) from None
    for f in functions:
        if (f["total_ns"] > _NS_MAX or not 0 <= f["first_line"] <= _LINE_MAX
                or any(not 0 <= l["time_ns"] <= _NS_MAX or not 0 <= l["line"] <= _LINE_MAX
                       or not 0 <= l["hits"] <= _NS_MAX for l in f["lines"])):
            raise pickle.UnpicklingError("%s: not a line_profiler .lprof file (the figures of "
                                         "%s are out of range)" % (path, f["name"]))
    return json.dumps({"sonde": 1, "mode": "lines", "functions": functions}).encode()


def main(path, out):
    """`sonde report|view FILE.lprof`'s helper: the document of path into
    the file out; 0, or 1 after one line on stderr saying why not."""
    try:
        document = lprof_document(path)
    except pickle.UnpicklingError as e:
        why = str(e).replace("\n", "\\n")
        why = why if len(why) <= 400 else why[:397] + "..."
        sys.stderr.write("sonde: %s; give a file kernprof -l, LineProfiler.dump_stats or "
                         "sonde lines -o FILE.lprof wrote\n" % why)
        return 1
    try:
        with open(out, "wb") as f:
            f.write(document)
    except OSError as e:
        sys.stderr.write("sonde: cannot write '%s': %s\n" % (out, e.strerror))
        return 1
    return 0
