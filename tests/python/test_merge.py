"""sonde merge, and report, view and diff given several files (issue 27).

Truth: runs of one program with different arguments, each with known
per-function call counts.  A merged .prof's counts equal the sum of each
run's own cProfile counts (pstats of each cProfile run, read
independently); a merge of two runs' files equals sonde's profile of one
process doing both runs' work; merged lines hit each line as often as the
runs' sys.settrace line events add up to; a merged mem file's per-line
bytes are the inputs' own figures added up.  Bad input: files of different
kinds, versions or sampling rates are one line naming both files, exit 2;
a missing file one line, exit 1."""

import json
import os
import pstats
import re
import subprocess
import sys

import pytest

from conftest import need, run_sonde, version_params
from pages import browser, open_page, page_data  # noqa: F401 (browser: a fixture)

WORK = """
import sys

def leaf(i):
    return i * 3

def middle(n):
    s = 0
    for i in range(n):
        s += leaf(i)
    return s

def rec(k):
    return 0 if k == 0 else 1 + rec(k - 1)

def run(a, b):
    for _ in range(a):
        middle(b)
    rec(a)

def main(args):
    for pair in args:
        a, b = map(int, pair.split(","))
        run(a, b)

if __name__ == "__main__":
    main(sys.argv[1:])
"""

# Each run's arguments: its calls of run, middle, leaf and rec differ.
RUNS = ["3,7", "5,2", "1,11", "4,4"]
MINE = ("leaf", "middle", "rec", "run", "main")


def counts(stats):
    """{function name: (ncalls, primitive calls)} of the program's functions
    in a pstats.Stats."""
    out = {}
    for (path, _line, name), (cc, nc, _tt, _ct, _callers) in stats.stats.items():
        if path.endswith("work.py") and name in MINE:
            out[name] = (nc, cc)
    return out


def add(total, part):
    for k, (nc, cc) in part.items():
        a, b = total.get(k, (0, 0))
        total[k] = (a + nc, b + cc)
    return total


def cprofile_counts(python, tmp_path, args, tag):
    out = tmp_path / ("ref-%s.prof" % tag)
    subprocess.run([python, "-m", "cProfile", "-o", str(out), "work.py"] + args,
                   cwd=str(tmp_path), check=True)
    return counts(pstats.Stats(str(out)))


def sonde_ok(args, cwd, python=None):
    done = run_sonde(args, cwd, python)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def work(tmp_path):
    (tmp_path / "work.py").write_text(WORK)
    return tmp_path


@pytest.mark.parametrize("python", version_params())
def test_merged_prof_counts_are_the_sum_of_each_runs_cprofile(python, work):
    python = need(python)
    expected, files = {}, []
    for i, arg in enumerate(RUNS):
        add(expected, cprofile_counts(python, work, [arg], i))
        files.append("run%d.prof" % i)
        sonde_ok(["run", "-o", files[-1], "work.py", arg], work, python)
    sonde_ok(["merge"] + files + ["-o", "merged.prof"], work)
    merged = pstats.Stats(str(work / "merged.prof"))  # pstats reads it
    assert counts(merged) == expected
    assert sum(expected["leaf"]) > 0
    # each run's part under a frame naming it: the files' names (a .prof
    # says nothing of its process), each the caller of that run's top
    labels = {k[2] for k in merged.stats if k[0] == "~" and k[2].startswith("process ")}
    assert labels == {"process " + f for f in files}
    callers = [k[2] for k, v in merged.stats.items() for c in v[4] if c[2] in labels]
    assert callers and all(name == callers[0] for name in callers)


def test_pstats_reads_the_summed_table_with_callers(work):
    python = sys.executable
    expected = {}
    for i, arg in enumerate(RUNS[:2]):
        add(expected, cprofile_counts(python, work, [arg], i))
        sonde_ok(["run", "-o", "r%d.prof" % i, "work.py", arg], work, python)
    sonde_ok(["merge", "r0.prof", "r1.prof", "-o", "m.prof"], work)
    merged = pstats.Stats(str(work / "m.prof"))
    assert counts(merged) == expected
    # the caller edges are summed too: middle -> leaf as often as leaf runs
    leaf = next(v for k, v in merged.stats.items() if k[2] == "leaf")
    (caller, edge), = leaf[4].items()
    assert caller[2] == "middle" and edge[:2] == (expected["leaf"][1], expected["leaf"][0])
    # sonde report prints the same table from the files, merged as it reads them
    table = sonde_ok(["report", "r0.prof", "r1.prof", "-l", "0"], work).stdout
    row = next(line for line in table.splitlines() if line.endswith("(leaf)"))
    assert row.split()[0] == str(expected["leaf"][0])


def test_merge_of_two_runs_equals_the_profile_of_both_runs_work(work):
    python = sys.executable
    sonde_ok(["run", "-f", "json", "-o", "a.json", "work.py", RUNS[0]], work, python)
    sonde_ok(["run", "-f", "json", "-o", "b.json", "work.py", RUNS[1]], work, python)
    sonde_ok(["run", "-o", "both.prof", "work.py", RUNS[0], RUNS[1]], work, python)
    sonde_ok(["merge", "a.json", "b.json", "-o", "ab.prof"], work)
    sonde_ok(["merge", "a.json", "b.json", "-o", "ab.json"], work)
    both = counts(pstats.Stats(str(work / "both.prof")))
    merged = counts(pstats.Stats(str(work / "ab.prof")))
    # main runs once a process: twice merged, once in the one process
    assert merged.pop("main") == (2, 2) and both.pop("main") == (1, 1)
    assert merged == both
    # the JSON keeps each run's tree under its process's frame, its command line
    doc = json.loads((work / "ab.json").read_text())
    names = [f["name"] for f in doc["functions"]]
    roots = {t["root"] for t in doc["threads"]}
    tops = [names[n[0]] for n in doc["nodes"][1:] if n[1] in roots]
    assert sorted(tops) == sorted("process %s work.py %s" % (os.path.basename(python), arg)
                                  for arg in RUNS[:2]) or all(t.startswith("process ") for t in tops)
    assert len(tops) == 2


def test_merging_merged_files_adds_no_frame(work):
    python = sys.executable
    for i, arg in enumerate(RUNS):
        sonde_ok(["run", "-f", "json", "-o", "r%d.json" % i, "work.py", arg], work, python)
    sonde_ok(["merge", "r0.json", "r1.json", "-o", "m01.json"], work)
    sonde_ok(["merge", "r2.json", "r3.json", "-o", "m23.prof"], work)
    sonde_ok(["merge", "m01.json", "m23.prof", "-o", "all.prof"], work)
    sonde_ok(["merge", "r0.json", "r1.json", "r2.json", "r3.json", "-o", "flat.prof"], work)
    whole = pstats.Stats(str(work / "all.prof"))
    flat = pstats.Stats(str(work / "flat.prof"))
    assert counts(whole) == counts(flat)
    labels = [k[2] for k in whole.stats if k[0] == "~" and k[2].startswith("process ")]
    assert len(labels) == 4  # one a run, none for the merged files themselves


LINES_REF = r"""
import json, sys
sys.path.insert(0, ".")
import work
hits = {}
def local(frame, event, arg):
    if event == "line":
        hits[frame.f_lineno] = hits.get(frame.f_lineno, 0) + 1
    return local
def trace(frame, event, arg):
    return local if frame.f_code is work.middle.__code__ else None
sys.settrace(trace)
work.main(sys.argv[1:])
sys.settrace(None)
print(json.dumps(hits))
"""


def test_lines_merge_hits_are_the_sum_of_settrace_line_events(work):
    python = sys.executable
    (work / "ref.py").write_text(LINES_REF)
    expected, files = {}, []
    for i, arg in enumerate(RUNS):
        out = subprocess.run([python, "ref.py", arg], cwd=str(work), check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        for line, n in json.loads(out).items():
            expected[int(line)] = expected.get(int(line), 0) + n
        files.append("l%d.json" % i)
        sonde_ok(["lines", "-f", "middle", "-o", files[-1], "work.py", arg], work, python)
    sonde_ok(["merge"] + files + ["-o", "lines.json"], work)
    doc = json.loads((work / "lines.json").read_text())
    (fn,) = doc["functions"]
    got = {l["line"]: l["hits"] for l in fn["lines"] if l["hits"]}
    assert got == expected
    # where each part came from: one part a file, its own hits
    assert [p["file"] for p in doc["parts"]] == files
    first = json.loads((work / files[0]).read_text())["functions"]
    assert doc["parts"][0]["functions"] == first
    # report takes the files as merge sums them
    table = sonde_ok(["report"] + files, work).stdout
    loop = next(l for l in fn["lines"] if "s += leaf(i)" in l["source"])
    assert re.search(r"^\s*%d\s+%d\s" % (loop["line"], loop["hits"]), table, re.M)


MEM_WORK = """
import sys

def grow(n):
    keep = [bytearray(1000) for _ in range(n)]
    junk = bytes(20000 * n)
    return keep

if __name__ == "__main__":
    held = grow(int(sys.argv[1]))
"""


def test_mem_merge_lines_are_the_sum_of_each_inputs_figures(tmp_path):
    (tmp_path / "grow.py").write_text(MEM_WORK)
    files = []
    for i, n in enumerate(["50", "120", "7"]):
        files.append("m%d.json" % i)
        sonde_ok(["mem", "-f", "grow", "-o", files[-1], "grow.py", n], tmp_path, sys.executable)
    sonde_ok(["merge"] + files + ["-o", "mem.json"], tmp_path)
    merged = json.loads((tmp_path / "mem.json").read_text())
    expected = {}
    for f in files:
        for fn in json.loads((tmp_path / f).read_text())["functions"]:
            for l in fn["lines"]:
                e = expected.setdefault(l["line"], [0, 0])
                e[0] += l["alloc_bytes"]
                e[1] += l["net_bytes"]
    (fn,) = merged["functions"]
    got = {l["line"]: [l["alloc_bytes"], l["net_bytes"]] for l in fn["lines"]}
    assert got == expected
    assert max(a for a, _ in got.values()) > 20000 * 150  # the bytes(...) lines, all three
    # the allocating stacks start with their process's frame
    assert merged["allocations"] and all(a["stack"][0]["name"].startswith("process ")
                                         for a in merged["allocations"])


def test_bad_input_kinds_versions_rates_and_missing_files(work):
    python = sys.executable
    sonde_ok(["run", "-o", "a.prof", "work.py", "2,2"], work, python)
    sonde_ok(["lines", "-f", "middle", "-o", "l.json", "work.py", "2,2"], work, python)
    done = run_sonde(["merge", "a.prof", "l.json", "-o", "x.prof"], work)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "'a.prof'" in done.stderr and "'l.json'" in done.stderr
    assert not (work / "x.prof").exists()
    # a later version of the document
    doc = json.loads((work / "l.json").read_text())
    doc["sonde"] = 2
    (work / "l2.json").write_text(json.dumps(doc))
    done = run_sonde(["merge", "l.json", "l2.json", "-o", "x.json"], work)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "'l.json'" in done.stderr and "'l2.json'" in done.stderr and "version" in done.stderr
    # samples at different rates: a sampled profile (collapsed stacks) made
    # sonde JSON, once at 1 Hz and once said to be sampled at 100 Hz
    (work / "s.collapsed").write_text("main (w.py:1);f (w.py:2) 5\nmain (w.py:1) 2\n")
    sonde_ok(["report", "s.collapsed", "-f", "json", "-o", "s1.json"], work)
    s100 = json.loads((work / "s1.json").read_text())
    s100["sample_rate"] = 100
    (work / "s100.json").write_text(json.dumps(s100))
    done = run_sonde(["merge", "s1.json", "s100.json", "-o", "x.json"], work)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "'s1.json'" in done.stderr and "'s100.json'" in done.stderr and "Hz" in done.stderr
    # sampled and deterministic
    done = run_sonde(["merge", "a.prof", "s1.json", "-o", "x.prof"], work)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "sampled" in done.stderr
    # missing or unreadable
    for args in (["a.prof", "missing.prof"], ["a.prof", str(work)]):
        done = run_sonde(["merge"] + args + ["-o", "x.prof"], work)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert args[1] in done.stderr
    for cmd in (["report"], ["view"], ["diff", "a.prof", "--"]):
        done = run_sonde(cmd + ["a.prof", "l.json"] if cmd[0] != "diff" else
                         cmd + ["missing.prof"], work)
        assert done.returncode in (1, 2) and done.stderr.count("\n") == 1, done.stderr


def test_diff_takes_several_files_a_side(work):
    python = sys.executable
    for name, arg in (("b1", "3,7"), ("b2", "5,2"), ("a1", "3,70"), ("a2", "5,20")):
        sonde_ok(["run", "-f", "json", "-o", name + ".json", "work.py", arg], work, python)
    done = sonde_ok(["diff", "-o", "d.html", "b1.json", "b2.json", "--", "a1.json", "a2.json"],
                    work)
    assert "leaf" in done.stdout
    data = page_data(work / "d.html")
    assert data["kind"] == "diff"
    # the same rows as the diff of each side merged first
    sonde_ok(["merge", "b1.json", "b2.json", "-o", "B.json"], work)
    sonde_ok(["merge", "a1.json", "a2.json", "-o", "A.json"], work)
    whole = sonde_ok(["diff", "-o", "d2.html", "B.json", "A.json"], work).stdout

    def rows(text):
        return sorted(l for l in text.splitlines() if re.search(r"work\.py:\d+\((%s)\)$"
                                                              % "|".join(MINE), l))
    assert len(rows(done.stdout)) == 5 and rows(done.stdout) == rows(whole)
    done = run_sonde(["diff", "b1.json", "b2.json", "a1.json"], work)
    assert done.returncode == 2 and "--" in done.stderr


def test_view_of_several_files_has_a_process_selector(work):
    python = sys.executable
    for i, arg in enumerate(RUNS[:2]):
        sonde_ok(["run", "-f", "json", "-o", "r%d.json" % i, "work.py", arg], work, python)
    sonde_ok(["view", "r0.json", "r1.json", "-o", "page.html"], work)
    data = page_data(work / "page.html")
    tops = [data["funcs"][row[0]][0] for row in data["tree"][1:] if row[1] == 0]
    assert len(tops) == 2 and all(t.startswith("process ") for t in tops)


def test_page_process_selector_draws_one_process(work, browser):
    python = sys.executable
    for i, arg in enumerate(["2,50", "6,3"]):
        sonde_ok(["run", "-f", "json", "-o", "r%d.json" % i, "work.py", arg], work, python)
    sonde_ok(["merge", "r0.json", "r1.json", "-o", "m.json"], work)
    sonde_ok(["view", "m.json", "-o", "page.html"], work)
    data = page_data(work / "page.html")
    tops = [data["funcs"][row[0]][0] for row in data["tree"][1:] if row[1] == 0]
    tab = open_page(browser, work / "page.html", "view=icicle&fold=0")
    options = tab.evaluate("[...document.querySelectorAll('#process option')].map(o => o.text)")
    assert options[0] == "all 2 merged" and sorted(options[1:]) == sorted(tops)
    everything = {f["name"] for f in tab.evaluate("window.sondeView.frames()")}
    assert set(tops) <= everything
    tab.close()
    # process=N: that process's frames alone, leaf's total its run's own
    for k, label in enumerate(options[1:], 1):
        tab = open_page(browser, work / "page.html", "view=icicle&fold=0&process=%d" % k)
        frames = tab.evaluate("window.sondeView.frames()")
        names = {f["name"] for f in frames}
        assert label in names and not (set(tops) - {label}) & names
        tab.close()


ROWS = "[...document.querySelectorAll('#view tr')].map(r => [...r.cells].map(c => c.textContent))"


def test_page_of_merged_lines_shows_all_or_one_process(work, browser):
    python = sys.executable
    files = []
    for i, arg in enumerate(RUNS[:2]):
        files.append("l%d.json" % i)
        sonde_ok(["lines", "-f", "middle", "-o", files[-1], "work.py", arg], work, python)
    sonde_ok(["view", files[0], files[1], "-o", "lines.html"], work)
    own = [{l["line"]: l["hits"] for l in json.loads((work / f).read_text())["functions"][0]["lines"]}
           for f in files]
    for k, want in enumerate([{n: own[0][n] + own[1].get(n, 0) for n in own[0]}] + own):
        tab = open_page(browser, work / "lines.html", "process=%d" % k)
        if k == 0:
            options = tab.evaluate("[...document.querySelectorAll('#process option')].map(o => o.text)")
            assert len(options) == 3 and options[0] == "all 2 merged"
            assert options[1].startswith("process ") and options[1].endswith(files[0])
        rows = [r for r in tab.evaluate(ROWS) if r and r[0].isdigit()]
        tab.close()
        got = {int(r[0]): int(r[2]) for r in rows if r[2]}
        assert got == {n: h for n, h in want.items() if h}


def test_sampled_stacks_keep_their_counts_under_their_process(tmp_path):
    """Sampled profiles (collapsed stacks, pprof): each stack of each file,
    with its count, under that file's process frame; the same stack of
    two files counted apart, and together once the frames are left out."""
    stacks = [{"main (app.py:1);work (app.py:5);spin (app.py:9)": 40, "main (app.py:1)": 3},
              {"main (app.py:1);work (app.py:5);spin (app.py:9)": 7,
               "main (app.py:1);idle (app.py:20)": 11}]
    names = []
    for i, st in enumerate(stacks):
        names.append("s%d.collapsed" % i)
        (tmp_path / names[-1]).write_text("".join("%s %d\n" % kv for kv in st.items()))
    sonde_ok(["merge"] + names + ["-o", "m.pb.gz"], tmp_path)     # pprof, the fleet's format
    sonde_ok(["merge", "m.pb.gz", "-o", "m.collapsed"], tmp_path)  # read back, written as stacks
    got = {}
    for line in (tmp_path / "m.collapsed").read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        got[stack] = got.get(stack, 0) + int(count)
    want = {"process %s (~:0);%s" % (name, stack): n
            for name, st in zip(names, stacks) for stack, n in st.items()}
    assert got == want


SPIN = "s = 0\nfor i in range(2000000):\n    s += i\n"


def cpu_deltas(path):
    """Every sample's threadCPUDelta (ns) in a Gecko file, read by schema."""
    doc = json.loads(path.read_text())
    deltas = []
    for thread in doc["threads"]:
        column = thread["samples"]["schema"]["threadCPUDelta"]
        deltas += [row[column] for row in thread["samples"]["data"]]
    return deltas


def test_cpu_weighed_samples_keep_their_weights_and_are_not_summed_with_wall(work):
    """record's cpu mode (the default) weighs each sample by its thread's
    CPU ns: merged, every sample keeps its weight (the Gecko file's
    threadCPUDelta of a file merged with itself is the original's twice
    over); a wall-mode recording at the same rate is refused beside it."""
    (work / "spin.py").write_text(SPIN)
    for mode in ("cpu", "wall"):
        sonde_ok(["record", "--mode", mode, "-r", "200", "-f", "json", "-o", mode + ".json",
                  "--", sys.executable, "spin.py"], work)
    sonde_ok(["report", "cpu.json", "-f", "gecko", "-o", "one.gecko.json"], work)
    sonde_ok(["report", "cpu.json", "cpu.json", "-f", "gecko", "-o", "two.gecko.json"], work)
    one, two = cpu_deltas(work / "one.gecko.json"), cpu_deltas(work / "two.gecko.json")
    assert one and all(d > 0 for d in one)
    assert sorted(two) == sorted(one + one)
    # merge writes the same timeline as report of the same files (it
    # refused -f gecko before); files without a timeline are refused.
    sonde_ok(["merge", "cpu.json", "cpu.json", "-f", "gecko", "-o", "merged.gecko.json"], work)
    assert sorted(cpu_deltas(work / "merged.gecko.json")) == sorted(one + one)
    sonde_ok(["run", "-o", "spin.prof", "spin.py"], work)
    done = run_sonde(["merge", "spin.prof", "spin.prof", "-f", "gecko", "-o", "p.json"], work)
    assert done.returncode == 1 and "no timeline" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and not (work / "p.json").exists()
    done = run_sonde(["merge", "cpu.json", "wall.json", "-o", "x.json"], work)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "'cpu.json'" in done.stderr and "'wall.json'" in done.stderr
    assert "CPU time" in done.stderr and not (work / "x.json").exists()
