"""Collapsed stacks read back by sonde report, view and diff: sonde's own
`record -f collapsed` and Python 3.15's `profiling.sampling --collapsed`.
Each function's own samples in the report's table (its tottime column: a
collapsed file's figures are samples) must be the sums this test works out
from the file's text by itself: every line's count added to its leaf frame's
function, a function being its (file, name) at the smallest line it shows."""

import json
import re
import subprocess
import sys
from collections import defaultdict

from conftest import SONDE, interpreters, need

PROGRAM = r'''
import threading, time
def spin(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return x
def fast():
    return spin(0.2)
def slow():
    return spin(0.4)
def worker():
    spin(0.2)
t = threading.Thread(target=worker)
t.start()
fast()
slow()
t.join()
'''


def frame_key(frame):
    """(file, name, line) of a frame, by the rules sonde documents in
    src/formats/collapsed_frame.h (only as far as these files need)."""
    m = re.match(r"^(.*) \((.*):(-?\d+)\)$", frame)        # NAME (FILE:LINE)
    if m:
        return m.group(2), m.group(1), int(m.group(3))
    m = re.match(r"^(.*):([^:]+):(-?\d+)$", frame)         # FILE:FUNC:LINE
    if m:
        return m.group(1), m.group(2), int(m.group(3))
    return "~", frame, 0


def label(file, line, name):
    """How sonde's table names a function (cProfile's way)."""
    if file == "~" and line == 0:
        return "{%s}" % name[1:-1] if name.startswith("<") and name.endswith(">") else name
    return "%s:%d(%s)" % (file, line, name)


def expected_own(text):
    """Per function label, the samples of the stacks it is the leaf of."""
    own, first = defaultdict(int), {}
    for line in text.splitlines():
        if not line.strip():
            continue
        stack, count = line.rsplit(" ", 1)
        frames = [f for f in stack.split(";") if not re.match(r"^tid:\d+$", f)]
        for f in frames:
            file, name, at = frame_key(f)
            first[file, name] = min(at, first.get((file, name), at))
        if frames:
            file, name, _ = frame_key(frames[-1])
            own[file, name] += int(count)
    return {label(file, first[file, name], name): n for (file, name), n in own.items() if n}


def reported_own(path, cwd):
    """Per function label, the tottime column of sonde report's table."""
    out = run([SONDE, "report", path, "-s", "tottime", "-l", "0"], cwd)
    lines = out.splitlines()
    (head,) = [i for i, l in enumerate(lines) if "filename:lineno(function)" in l]
    columns = lines[head].split()  # a sampled profile's: nsamples tottime persample ...
    at = columns.index("tottime")
    own = {}
    for l in lines[head + 1:]:
        if re.match(r"^\s+\d", l):
            fields = l.split(None, len(columns) - 1)
            if float(fields[at]) > 0:
                own[fields[-1]] = float(fields[at])
    return own


def run(argv, cwd):
    done = subprocess.run(argv, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def check_read_back(path, cwd):
    """The report's own samples are the text's; view and diff take the file."""
    text = (cwd / path).read_text()
    want = expected_own(text)
    assert want and sum(want.values()) > 20, text
    assert reported_own(path, cwd) == want
    # counts with no rate: the table says so, not "in N seconds"
    head = run([SONDE, "report", path, "-l", "1"], cwd).strip().splitlines()[0]
    assert head.split()[:2] == [str(sum(want.values())), "samples"], head
    assert "gives counts, not times" in head and "seconds" not in head, head
    spins = [k for k in want if k.endswith("(spin)")]
    assert len(spins) == 1, want
    run([SONDE, "view", path, "-o", "page.html"], cwd)
    page = (cwd / "page.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "spin" in page
    run([SONDE, "diff", path, path, "-o", "diff.html"], cwd)
    assert (cwd / "diff.html").stat().st_size > 0
    return text


def test_sonde_record_collapsed_read_back(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    run([SONDE, "record", "-f", "collapsed", "-o", "rec.collapsed", "--",
         sys.executable, "prog.py"], tmp_path)
    text = check_read_back("rec.collapsed", tmp_path)
    assert "(%s:" % (tmp_path / "prog.py") in text
    # Written again, the stacks are the same lines.
    again = run([SONDE, "report", "rec.collapsed", "-f", "collapsed"], tmp_path)
    assert sorted(again.splitlines()) == sorted(text.splitlines())


def test_python315_sampling_collapsed_read_back(tmp_path):
    python = need(dict(interpreters())["3.15"])
    (tmp_path / "prog.py").write_text(PROGRAM)
    run([python, "-m", "profiling.sampling", "run", "-a", "--collapsed", "-o", "p.collapsed",
         "prog.py"], tmp_path)
    text = check_read_back("p.collapsed", tmp_path)
    tids = {line.split(";", 1)[0] for line in text.splitlines() if line.strip()}
    assert all(re.match(r"^tid:\d+$", t) for t in tids), tids
    doc = json.loads(run([SONDE, "report", "p.collapsed", "-f", "json"], tmp_path))
    assert sorted("tid:%d" % t["native_id"] for t in doc["threads"]) == sorted(tids)
    assert len(tids) == 2
