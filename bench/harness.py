"""What the in-process benchmarks share: where sonde's build is, and how to
run a measurement in a fresh interpreter and read its result back."""

import argparse
import json
import os
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(os.path.dirname(BENCH), "build")
BUILD_PYTHON = os.path.join(BUILD, "python")


def child_env(*extra_paths):
    """The environment of a measuring child: sonde's build, bench/ and any
    extra folders on PYTHONPATH."""
    env = dict(os.environ)
    path = [BUILD_PYTHON, BENCH] + list(extra_paths) + [p for p in [env.get("PYTHONPATH")] if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    return env


def probe(python, env, code):
    """What python prints running code, or None when it fails."""
    try:
        done = subprocess.run([python, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def check(tool, python, env):
    """python's version, after making sure sonde is built for it."""
    version = probe(python, env, "import platform; print(platform.python_version())")
    if version is None:
        sys.exit("%s: cannot run %s" % (tool, python))
    if probe(python, env, "import sonde._sonde") is None:
        sys.exit("%s: sonde's extension is not built for %s (Python %s): "
                 "run 'make PYTHON=%s'" % (tool, python, version, python))
    return version


def measure(tool, python, env, args):
    """Runs `tool.child(*args)` in a fresh python; what it printed, as JSON."""
    code = "import sys, %s; %s.child(*sys.argv[1:])" % (tool, tool)
    done = subprocess.run([python, "-c", code] + [str(a) for a in args], env=env,
                          stdout=subprocess.PIPE, universal_newlines=True)
    if done.returncode != 0:
        sys.exit("%s: %s failed under %s (exit status %d)"
                 % (tool, " ".join(map(str, args)), python, done.returncode))
    return json.loads(done.stdout)


def arguments(doc, quick_what):
    """The command line bench_run and bench_lines share: interpreters
    (--python, repeatable), --rounds and --quick.  (pythons, rounds, quick)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--python", action="append", metavar="PY",
                        help="interpreter to measure; repeat for more (default: this one)")
    parser.add_argument("--rounds", type=int, help="rounds (default 5, or 2 with --quick)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, " + quick_what)
    args = parser.parse_args()
    return args.python or [sys.executable], args.rounds or (2 if args.quick else 5), args.quick
