"""Runs every test suite and prints one closing line: N passed, N failed.

usage: run.py --unit BUILD/tests/unit --pythons "PY1 PY2 ..."

The C unit tests print their own "N passed, N failed"; pytest's counts come
from its JUnit report.  The interpreters are handed to the Python tests,
which run the version matrix on each and skip (with a note) what is absent.
"""

import argparse
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_unit(binary):
    proc = subprocess.run([binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    sys.stdout.write(proc.stdout)
    m = re.search(r"^(\d+) passed, (\d+) failed", proc.stdout, re.M)
    if not m:
        print("C unit tests printed no summary (exit %d)" % proc.returncode)
        return 0, 1, 0
    failed = int(m.group(2)) + (1 if proc.returncode and not int(m.group(2)) else 0)
    return int(m.group(1)), failed, 0


def run_pytest(pythons):
    report = os.path.join(ROOT, "build", "pytest.xml")
    env = dict(os.environ, SONDE_TEST_PYTHONS=pythons)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
           "--junitxml", report, os.path.join(HERE, "python")]
    rc = subprocess.call(cmd, env=env, cwd=ROOT)
    try:
        suite = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        print("pytest wrote no report (exit %d)" % rc)
        return 0, 1, 0
    if suite.tag == "testsuites":
        suite = suite[0]
    total = int(suite.get("tests", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    skipped = int(suite.get("skipped", 0))
    if rc not in (0, 1) and failed == 0:
        failed = 1  # pytest itself broke
    return total - failed - skipped, failed, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--unit", required=True)
    ap.add_argument("--pythons", default="")
    args = ap.parse_args()
    passed = failed = skipped = 0
    for p, f, s in (run_unit(args.unit), run_pytest(args.pythons)):
        passed, failed, skipped = passed + p, failed + f, skipped + s
    print("total: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
