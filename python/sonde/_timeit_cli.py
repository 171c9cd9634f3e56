"""sonde timeit's command line: the C command parses the options and
writes them to a file (JSON); main() reads it, runs the driver and prints
what `sonde timeit` prints (see cmd_timeit.c)."""

import json
import os
import sys

from ._timeit import Comparison, TimeitError, bench, compare
from ._timeit_profile import profile
from ._timeit_pyperf import PYPERF_TIMEIT_VALUES, compare_files, to_pyperf


class _OutputError(TimeitError):
    """The standard output cannot be written (a full disk, /dev/full)."""


def _say(line):
    """line on stdout; _OutputError when it cannot be written."""
    try:
        sys.stdout.write(line + "\n")
    except OSError as e:
        raise _OutputError("cannot write the standard output: %s" % (e.strerror or e))


def _flush_stdout():
    try:
        sys.stdout.flush()
    except OSError as e:
        raise _OutputError("cannot write the standard output: %s" % (e.strerror or e))


def _print_results(results):
    for r in results:
        prefix = "" if len(results) == 1 else "%s: " % r.name
        _say(prefix + r.line())
    for r in results:
        for w in r.warnings:
            sys.stderr.write("warning: %s%s\n" % ("" if len(results) == 1 else r.name + ": ", w))


def run_command(o):
    """sonde timeit with the options the C command parsed (a dict)."""
    if o.get("compare"):
        if len(o["words"]) != 2:
            raise TimeitError("--compare takes two pyperf files: BEFORE.json AFTER.json", 2)
        for before, after in compare_files(*o["words"]):
            _print_results([before, after])
            _say(Comparison(before, after).line())
        return 0
    setup = "\n".join(o.get("setup") or []) or "pass"
    if o.get("profile_output") and len(o.get("python") or [1]) > 1:
        raise TimeitError("--profile-output writes one statement's profile: give one "
                          "--python", 2)
    results = bench(o["words"], setup=setup, pythons=o.get("python") or [sys.executable],
                    mode=o["mode"], loops=o.get("loops", 0), runs=o.get("runs", 0),
                    processes=o.get("processes", 0), timeout=o.get("timeout") or None,
                    subtract_wait=o.get("subtract_wait", False))
    _print_results(results)
    for c in compare(results):
        _say(c.line())
    for r in results:
        for tool, flag in (("run", "profile"), ("lines", "lines")):
            if o.get(flag):
                _flush_stdout()  # (before the tool's table, on stderr)
                profile(r, tool, len(results) > 1, o.get("profile_output"),
                        o.get("profile_output_name"))
    if o.get("output"):
        try:
            with open(o["output"], "w") as f:
                json.dump(to_pyperf(results), f)
                f.write("\n")
        except OSError as e:
            raise TimeitError("cannot write %s: %s" % (o["output"], e.strerror))
        counts = sorted({len(r.values) for r in results})
        if counts != [PYPERF_TIMEIT_VALUES]:
            # pyperf's t-test takes samples of one size: against another
            # count compare_to prints "ERROR when testing if values are
            # significant".
            _say("note: %s holds %s values a statement; pyperf compare_to compares it only "
                 "with a file of as many (pyperf timeit's default: %d, which -p 20 gives here)"
                 % (o["output"], " or ".join(map(str, counts)), PYPERF_TIMEIT_VALUES))
    return 0


def _read_options(path):
    """The options the C command wrote to path, as a dict."""
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        raise TimeitError("cannot read the options file %s: %s" % (path, e))


def main(options_path):
    """Entry point of the C command, which writes its options (JSON) to
    options_path (a file: a setup of any size fits, where an argument
    stops at 128 KB): the exit code."""
    try:
        _flush_stdout()
        code = run_command(_read_options(options_path))
        _flush_stdout()
        return code
    except TimeitError as e:
        try:
            sys.stdout.flush()
        except OSError:
            # What is left in stdout's buffer goes nowhere, so that the
            # interpreter's own flush at exit does not fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        if e.detail:
            sys.stderr.write(e.detail if e.detail.endswith("\n") else e.detail + "\n")
        sys.stderr.write("sonde timeit: %s\n" % e.message)
        return e.code
    except KeyboardInterrupt:
        sys.stderr.write("sonde timeit: interrupted\n")
        return 130
