"""The flake finder: the page, sampler, native and timeit tests, N rounds,
under a deliberate load on every CPU (tests/load.py, started here and ended
here however the run ends).

usage: repeat.py [--rounds N] [--pythons "PY1 PY2 ..."] [--load-procs K] [TEST...]

Each round is one pytest run of the files named (by default the page
tests, test_sampler.py, test_sampler_modes.py, test_sampler_gc.py, test_native.py,
test_record_messages.py and test_timeit.py) with the interpreters `make test` uses.  The last line counts the tests of all
rounds: N passed, N failed, N skipped, and how many of the skips give the
machine's load as their reason, which must be none: a skip that names the
load is a check that a busy machine leaves undone.  Exit 1 if any test
failed or any skip names the load.
"""

import argparse
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from load import Load  # noqa: E402

TESTS = ["test_view.py", "test_view_real_profiles.py", "test_report.py", "test_diff.py",
         "test_sampler.py", "test_sampler_modes.py", "test_sampler_gc.py", "test_native.py",
         "test_record_messages.py", "test_timeit.py"]
# A skip whose reason says the machine was busy, loaded, short of CPU.
LOAD_REASON = re.compile(r"busy|load average|\bload\b|loaded|waiting for a CPU|waited .* for a CPU"
                         r"|CPU wait|ticks missed|the machine (?:was|is|changed)", re.I)


def counts(report):
    """(passed, failed, skipped, [(test, load-skip reason)], [failed test])."""
    suite = ET.parse(report).getroot()
    passed = failed = skipped = 0
    load_skips, failures = [], []
    for case in suite.iter("testcase"):
        name = "%s::%s" % (case.get("classname"), case.get("name"))
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(name)
        elif case.find("skipped") is not None:
            skipped += 1
            reason = case.find("skipped").get("message", "")
            if LOAD_REASON.search(reason):
                load_skips.append((name, reason))
        else:
            passed += 1
    return passed, failed, skipped, load_skips, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pythons", default=os.environ.get("SONDE_TEST_PYTHONS", ""))
    ap.add_argument("--load-procs", type=int, default=None,
                    help="busy processes (default: one per CPU)")
    ap.add_argument("tests", nargs="*", help="test files under tests/python (default: %s)"
                    % " ".join(TESTS))
    args = ap.parse_args()
    files = [os.path.join(HERE, "python", t) for t in (args.tests or TESTS)]
    env = dict(os.environ, SONDE_TEST_PYTHONS=args.pythons)
    report = os.path.join(ROOT, "build", "repeat.xml")
    total = [0, 0, 0]
    all_load_skips, round_lines = [], []
    with Load(args.load_procs) as load:
        print("test-repeat: %d rounds under load (%d busy processes on %d CPUs)"
              % (args.rounds, load.n, os.cpu_count() or 1), flush=True)
        for i in range(1, args.rounds + 1):
            if os.path.exists(report):
                os.unlink(report)
            t0 = time.time()
            rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-rs", "-p",
                                  "no:cacheprovider", "--junitxml", report] + files,
                                 env=env, cwd=ROOT)
            try:
                p, f, s, load_skips, failures = counts(report)
            except (OSError, ET.ParseError):
                p, f, s, load_skips, failures = 0, 1, 0, [], ["pytest wrote no report"]
            if rc not in (0, 1) and not f:
                f, failures = 1, ["pytest exited %d" % rc]
            if load.running() != load.n:
                f, failures = f + 1, failures + ["the load ended early"]
            for k, v in enumerate((p, f, s)):
                total[k] += v
            all_load_skips += load_skips
            line = ("round %d: %d passed, %d failed, %d skipped, %d for load (%.0f s)%s"
                    % (i, p, f, s, len(load_skips), time.time() - t0,
                       "; failed: " + ", ".join(failures) if failures else ""))
            round_lines.append(line)
            print(line, flush=True)
    for line in round_lines:
        print(line)
    for name, reason in all_load_skips:
        print("load skip: %s: %s" % (name, reason))
    print("%d rounds: %d passed, %d failed, %d skipped, %d skips naming the machine's load"
          % (args.rounds, total[0], total[1], total[2], len(all_load_skips)))
    return 1 if total[1] or all_load_skips else 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the load ends as on Ctrl-C
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
