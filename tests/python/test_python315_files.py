"""What Python 3.15's own sampling profiler (profiling.sampling, PEP 799)
writes, read by sonde: its pstats file carries a ('__sampled__',) key beside
the functions, and its counts are samples.  The reference is Python 3.15's
own pstats module reading the same file."""

import re
import subprocess

from conftest import SONDE, interpreters, need

PROGRAM = r'''
import sys, time
def burn(n):
    x = 0
    for i in range(n): x += i
def half(): burn(50000)
def third(): burn(30000)
end = time.perf_counter() + float(sys.argv[1])
while time.perf_counter() < end:
    half(); third()
'''

# Python's pstats rows, as sonde prints them: every function, by tottime.
PSTATS_ROWS = r'''
import io, pstats, sys
out = io.StringIO()
pstats.Stats(sys.argv[1], stream=out).sort_stats("tottime").print_stats()
print(out.getvalue())
'''


def rows(text):
    """The table's heading and its rows (a set: ties may come in any order)."""
    lines = text.splitlines()
    (head,) = [i for i, l in enumerate(lines) if "filename:lineno(function)" in l]
    body = {l for l in lines[head + 1:] if re.match(r"^\s+\d", l)}
    return lines[head], body


def test_report_reads_python315s_sampled_pstats(tmp_path):
    python = need(dict(interpreters())["3.15"])
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "rows.py").write_text(PSTATS_ROWS)
    run = lambda argv: subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      universal_newlines=True, cwd=str(tmp_path), timeout=120)
    made = run([python, "-m", "profiling.sampling", "run", "-o", "p.prof", "prog.py", "1"])
    assert made.returncode == 0, made.stderr
    assert b"__sampled__" in (tmp_path / "p.prof").read_bytes()
    ours = run([SONDE, "report", "p.prof", "-s", "tottime", "-l", "0"])
    theirs = run([python, "rows.py", "p.prof"])
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    head, body = rows(ours.stdout)
    assert head.split() == ["nsamples", "tottime", "persample", "cumtime", "persample",
                            "filename:lineno(function)"]
    assert (head, body) == rows(theirs.stdout)
    assert any(re.search(r"prog\.py:\d+\(burn\)$", l) for l in body), body
