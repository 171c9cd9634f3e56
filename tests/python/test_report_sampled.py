"""`sonde report` of a sampled profile (sonde record -f json) counts
samples, as Python 3.15's sampling profiler's pstats does (issue 24, item
8): "N samples in T seconds", and per function the samples it was on the
stack in / those it was running in, where it printed "0 function calls"
and an ncalls column of zeros.  The reference is the file's own timeline:
every sample kept, as the leaf node of its stack.  And `record` says what
the samples that read no stack were ("463 samples ... 362 thread stacks
read" left 101 unexplained)."""

import json
import os
import re
import subprocess
import sys

from conftest import SONDE

WORK = """
def leaf(n):
    t = 0
    for i in range(n):
        t += i
    return t
def middle():
    return leaf(400000) + leaf(200000)
def main():
    for _ in range(40):
        middle()
main()
"""


def reference(doc):
    """{function name: (samples on the stack, samples running)} and the
    number of samples, from the timeline; work.py's functions by their
    names, others by file and name (on a busy machine a sample may catch
    the interpreter's start-up in site.py's main)."""
    names = [f["name"] if f["file"].endswith("work.py") else (f["file"], f["name"])
             for f in doc["functions"]]
    nodes = doc["nodes"]
    counts, total = {}, 0
    for thread in doc["timeline"]["threads"]:
        for leaf in thread["nodes"]:
            total += 1
            seen, n = set(), leaf
            while n > 0 and nodes[n][0] >= 0:
                seen.add(nodes[n][0])
                n = nodes[n][1]
            for f in seen:
                on, running = counts.get(names[f], (0, 0))
                counts[names[f]] = (on + 1, running + (f == nodes[leaf][0]))
    return counts, total


def test_report_of_a_sampled_profile_counts_samples(tmp_path):
    (tmp_path / "work.py").write_text(WORK)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    # Samples counted (--mode wall): cpu mode would weigh them by CPU time.
    rec = subprocess.run([SONDE, "record", "--mode", "wall", "-f", "json", "-o", "w.json", "--",
                          sys.executable, "work.py"], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert rec.returncode == 0, rec.stderr
    with open(str(tmp_path / "w.json")) as f:
        doc = json.load(f)
    assert not doc["timeline"]["capped"]
    counts, total = reference(doc)
    # One thread: each sample read its stack (whole or torn), or none.
    m = re.search(r"sonde: (\d+) samples in .*\nsonde: (\d+) thread stacks read, (\d+) kept, "
                  r"(?:\d+ idle ones dropped \(--idle keeps them\), )?(\d+) torn reads skipped\n(?:sonde: (\d+) samples? read no thread stack: "
                  r"the interpreter was not running Python code yet, or any more, or no thread "
                  r"was in Python code\n)?", rec.stderr)
    assert m, rec.stderr
    samples, read, kept, torn, blank = (int(g or 0) for g in m.groups())
    assert samples == read + torn + blank and kept == total, rec.stderr
    rep = subprocess.run([SONDE, "report", "w.json", "-l", "200"], cwd=str(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    assert rep.returncode == 0, rep.stderr
    assert "function calls" not in rep.stdout
    assert re.search(r"^ *%d samples in " % total, rep.stdout, re.M), rep.stdout
    assert " nsamples  tottime persample cumtime persample" in rep.stdout
    shown = {}
    for line in rep.stdout.splitlines():
        m = re.match(r"^ *(\d+)(?:/(\d+))? .*work\.py:\d+\((\w+)\)$", line)
        if m and m.group(3) in ("leaf", "middle", "main"):
            on = int(m.group(1))
            shown[m.group(3)] = (on, int(m.group(2)) if m.group(2) else on)
    assert counts["leaf"][0] > 10, counts
    assert shown == {k: counts[k] for k in ("leaf", "middle", "main")}
