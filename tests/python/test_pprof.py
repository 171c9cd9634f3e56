"""pprof files: what sonde writes for run, record and mem, read by go tool
pprof (-top, -traces, -lines), must show the figures of sonde's own report
of the same profile; sonde reads pprof files back (its own and Go's).

The go tool pprof checks are skipped, with a note, where Go is not
installed (Debian: apt-get install golang-go; .ci/run installs it)."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import run_sonde, with_pkg_env
from test_sampler import SHARES_PROGRAM, close_enough, kept_its_rate, measured

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(HERE), "c", "corpus")
GO = shutil.which("go")
needs_go = pytest.mark.skipif(not GO, reason="go is not installed (apt-get install golang-go): "
                                             "the go tool pprof checks are skipped")

CALLS = r'''
class Tree:
    def __init__(self, depth):
        self.kids = [Tree(depth - 1) for _ in range(2)] if depth else []

    def walk(self):
        return 1 + sum(k.walk() for k in self.kids)

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def main():
    total = 0
    for _ in range(3):
        total += fib(14) + Tree(6).walk()
    return sorted([total, len("x")])

main()
'''


def go_pprof(*args):
    proc = subprocess.run([GO, "tool", "pprof"] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, PPROF_TMPDIR="/tmp"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def number(text):
    return int(re.sub(r"[^0-9]", "", text))


def go_top(path, index, unit, lines=False):
    """{name (with " file:line" for -lines): [flat, cum]} as go tool pprof
    -top lists them, summed over rows of one name."""
    out = go_pprof("-top", "-nodecount=1000000", "-nodefraction=0", "-sample_index=" + index,
                   "-unit=" + unit, *(["-lines"] if lines else []), path)
    rows, table = {}, False
    for line in out.splitlines():
        if line.split()[:2] == ["flat", "flat%"]:
            table = True
        elif table:
            flat, _, _, cum, _, name = line.split(None, 5)
            row = rows.setdefault(name, [0, 0])
            row[0] += number(flat)
            row[1] += number(cum)
    return rows


def go_traces(path, index, unit, lines=False):
    """{stack of names, leaf first: value} as go tool pprof -traces lists
    the samples, summed over samples of one stack (unit "": a count)."""
    out = go_pprof("-traces", "-sample_index=" + index, *(["-unit=" + unit] if unit else []),
                   *(["-lines"] if lines else []), path)
    stacks = {}
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        value, frames = None, []
        for line in block.splitlines():
            if len(line) > 13 and line[10] == ":":
                continue  # a label
            if len(line) > 13 and line[10:13] == "   ":
                if line[:10].strip():
                    value = number(line[:10])
                frames.append(line[13:])
        if frames:
            stacks[tuple(frames)] = stacks.get(tuple(frames), 0) + value
    return stacks


def nonzero(stacks):
    return {k: v for k, v in stacks.items() if v}


def close_stacks(got, want, scale, slack):
    """got[stack] == want[stack] * scale within slack, for every stack
    either has."""
    for stack in set(got) | set(want):
        assert abs(got.get(stack, 0) - want.get(stack, 0) * scale) <= slack, stack


def json_profile(path):
    with open(str(path)) as f:
        return json.load(f)


def json_stacks(doc, column):
    """{stack of qualified names, leaf first: summed figure} from sonde's
    JSON tree (column 2: calls, 4: own seconds)."""
    funcs, nodes = doc["functions"], doc["nodes"]
    stacks = {}
    for i, node in enumerate(nodes):
        if i == 0 or node[0] == -1:
            continue
        path, k = [], i
        while nodes[k][0] != -1:
            path.append(funcs[nodes[k][0]]["qualname"])
            k = nodes[k][1]
        stacks[tuple(path)] = stacks.get(tuple(path), 0) + node[column]
    return stacks


def json_stats(doc):
    """{qualname: (ncalls, tottime, cumtime, unique)} from sonde's JSON."""
    funcs, out = doc["functions"], {}
    names = [f["qualname"] for f in funcs]
    for s in doc["stats"]:
        q = names[s["function"]]
        old = out.get(q, (0, 0.0, 0.0, True))
        out[q] = (old[0] + s["ncalls"], old[1] + s["tottime"], old[2] + s["cumtime"],
                  names.count(q) == 1)
    return out


@pytest.fixture
def run_files(tmp_path):
    (tmp_path / "calls.py").write_text(CALLS)
    proc = run_sonde(["run", "-f", "json", "-o", "run.json", "calls.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = run_sonde(["report", "run.json", "-f", "pprof", "-o", "run.pb.gz"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return tmp_path


@needs_go
def test_run_profile_in_go_pprof(run_files):
    """-top's calls and times, -traces' call paths and -lines' rows of a
    run profile are those of sonde's own report of it."""
    doc = json_profile(run_files / "run.json")
    path = run_files / "run.pb.gz"
    stats = json_stats(doc)
    calls, times = go_top(path, "calls", "ns"), go_top(path, "time", "ns")
    assert calls["fib"][0] == stats["fib"][0] == 3 * 1219
    assert calls["Tree.walk"][0] == stats["Tree.walk"][0] == 3 * 127
    # each call path's own time is rounded to the nanosecond on its own
    slack = len(doc["nodes"])
    for name, (ncalls, tottime, cumtime, unique) in stats.items():
        flat, cum = times.get(name, [0, 0])
        assert calls.get(name, [0])[0] == ncalls, name
        assert abs(flat - tottime * 1e9) <= slack, (name, flat, tottime)
        if unique:
            assert abs(cum - cumtime * 1e9) <= slack, (name, cum, cumtime)
    assert set(calls) <= set(stats)
    # -traces: every call path with its calls and its own time
    assert nonzero(go_traces(path, "calls", "ns")) == nonzero(json_stacks(doc, 2))
    close_stacks(go_traces(path, "time", "ns"), json_stacks(doc, 4), 1e9, 2)
    # -lines: a function of a run profile is at its first line
    lines = go_top(path, "calls", "ns", lines=True)
    first = {f["qualname"]: "%s:%d" % (f["file"], f["line"]) for f in doc["functions"]}
    assert lines["fib " + first["fib"]][0] == 3 * 1219
    assert lines["Tree.walk " + first["Tree.walk"]][0] == 3 * 127


def test_run_profile_reads_back(run_files):
    """sonde writes pprof, reads it back: the same tree (calls exact, own
    times to the nanosecond pprof keeps)."""
    proc = run_sonde(["report", "run.pb.gz", "-f", "json", "-o", "back.json"], run_files)
    assert proc.returncode == 0, proc.stderr
    doc, back = json_profile(run_files / "run.json"), json_profile(run_files / "back.json")
    assert nonzero(json_stacks(back, 2)) == nonzero(json_stacks(doc, 2))
    close_stacks(json_stacks(back, 4), json_stacks(doc, 4), 1, 2e-9)
    assert [t["name"] for t in back["threads"]] == [t["name"] for t in doc["threads"]]
    table = run_sonde(["report", "run.pb.gz", "-s", "ncalls"], run_files)
    assert table.returncode == 0 and re.search(r"^ +3657/3 .*calls\.py:\d+\(fib\)$",
                                              table.stdout, re.M), table.stdout


@needs_go
def test_run_and_api_write_pprof(tmp_path):
    """sonde run -f pprof and Profile.write(path, "pprof") write files go
    tool pprof reads, with cProfile's call counts (pstats of the same run)."""
    (tmp_path / "calls.py").write_text(CALLS)
    proc = run_sonde(["run", "-f", "pprof", "-o", "cli.pb.gz", "calls.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert go_top(tmp_path / "cli.pb.gz", "calls", "ns")["fib"][0] == 3 * 1219
    code = ("import pstats, sonde\nimport calls\nprof = sonde.Profile()\nprof.enable()\n"
            "calls.main()\nprof.disable()\nprof.write('api.pb.gz', 'pprof')\n"
            "st = pstats.Stats(prof)\n"
            "print([v[1] for k, v in st.stats.items() if k[2] == 'walk'][0])\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path),
                         env=with_pkg_env(str(tmp_path)), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    assert out.returncode == 0, out.stderr
    assert go_top(tmp_path / "api.pb.gz", "calls", "ns")["Tree.walk"][0] == \
        int(out.stdout) == 3 * 127


@needs_go
def test_record_profile_in_go_pprof(tmp_path):
    """A recording (as JSON, made pprof by sonde report): go tool pprof's
    samples and CPU time per function and per stack are the report's."""
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    rec = run_sonde(["record", "--mode", "wall", "-r", "500", "-f", "json", "-o", "rec.json", "--",
                     sys.executable, "prog.py", "1"], tmp_path)
    assert rec.returncode == 0, rec.stderr
    proc = run_sonde(["report", "rec.json", "-f", "pprof", "-o", "rec.pb.gz"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc, path = json_profile(tmp_path / "rec.json"), tmp_path / "rec.pb.gz"
    rate = doc["sample_rate"]
    samples, cpu = go_top(path, "samples", "ns"), go_top(path, "cpu", "ns")
    stats = json_stats(doc)
    for name, (_, tottime, cumtime, unique) in stats.items():
        assert samples.get(name, [0])[0] == round(tottime * rate), name
        assert cpu.get(name, [0])[0] == round(tottime * rate) * round(1e9 / rate), name
        if unique:
            assert samples[name][1] == round(cumtime * rate), name
    # The program's work is there (which function is widest is the
    # recording's, checked above function by function: on a busy machine
    # the start-up's share grows, so no share is asserted here).
    assert samples.get("burn", [0])[0] > 0, samples
    want = {k: round(v * rate) for k, v in json_stacks(doc, 4).items() if round(v * rate)}
    assert go_traces(path, "samples", "ns") == want


def shares_of(stacks):
    """Share of samples (in %) per caller of burn: half, third, fifth."""
    counts = {"half": 0, "third": 0, "fifth": 0}
    for stack, n in stacks.items():
        for name in stack:
            if name.split()[0] in counts:
                counts[name.split()[0]] += n
                break
    total = sum(counts.values())
    got = {k: 100.0 * v / total for k, v in counts.items()}
    got["samples"] = total
    return got


@needs_go
def test_record_writes_pprof(tmp_path):
    """sonde record -f pprof: sonde-PID.pb.gz, the program's own measured
    shares in go tool pprof, the lines it was at (-lines), and sonde's own
    report of the file (its collapsed stacks) stack for stack."""
    (tmp_path / "prog.py").write_text(SHARES_PROGRAM)
    # --mode wall: the truth is the program's own wall clock.
    rec = run_sonde(["record", "--mode", "wall", "-r", "1000", "-f", "pprof", "--",
                     sys.executable, "prog.py", "2"], tmp_path)
    assert rec.returncode == 0, rec.stderr
    (name,) = [f for f in os.listdir(str(tmp_path)) if f.endswith(".pb.gz")]
    assert re.match(r"sonde-\d+\.pb\.gz$", name) and "wrote %s (pprof)" % name in rec.stderr
    path = tmp_path / name
    traces = go_traces(path, "samples", "ns", lines=True)
    text = SHARES_PROGRAM.splitlines()
    burn = [i + 1 for i, l in enumerate(text) if l.startswith("def burn")][0]
    lines = {k for k in go_top(path, "samples", "ns", lines=True) if k.startswith("burn ")}
    assert lines and lines <= {"burn %s:%d" % (path.parent / "prog.py", n)
                               for n in (burn + 1, burn + 2, burn + 3)}, lines
    collapsed = run_sonde(["report", name, "-f", "collapsed"], tmp_path)
    assert collapsed.returncode == 0, collapsed.stderr
    assert stacks_of(collapsed.stdout) == traces
    kept_its_rate(rec)
    close_enough(shares_of(traces), measured(rec.stdout))


def stacks_of(collapsed):
    """{stack of "name file:line", leaf first: count} of collapsed stacks;
    a frame of no source file (sonde's "<GC>", "~:0" in collapsed stacks)
    is its name alone, as go tool pprof shows a function with no file."""
    stacks = {}
    for line in collapsed.splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = [f.rsplit(" (", 1) for f in stack.split(";")]
        key = tuple(q if where == "~:0)" else "%s %s" % (q, where[:-1])
                    for q, where in reversed(frames))
        stacks[key] = stacks.get(key, 0) + int(n)
    return stacks


MEM = r'''
keep = []

def build(n):
    data = [bytearray(1000) for _ in range(n)]
    keep.append(data)
    return len(data)

def churn(n):
    for _ in range(n):
        x = [0] * 10000
    return build(200)

def main():
    build(500)
    churn(100)

main()
'''


def doc_stacks(entries, key):
    """{stack of names, leaf first: entry[key]} of a mem document's leaks
    or allocations, as go tool pprof -traces shows them."""
    stacks = {}
    for entry in entries:
        stack = tuple(f["name"] for f in reversed(entry["stack"])) or \
            ("(outside the profiled functions)",)
        stacks[stack] = stacks.get(stack, 0) + round(entry[key])
    return {k: v for k, v in stacks.items() if v}


@needs_go
def test_mem_document_in_go_pprof(tmp_path):
    """sonde report mem.json -f pprof: alloc_space and alloc_objects per
    stack are the document's allocations (and churn's lists, followed
    exactly at 80 KB, are all there), inuse_space and inuse_objects its
    "Still alive" list."""
    (tmp_path / "m.py").write_text(MEM)
    proc = run_sonde(["mem", "-o", "mem.json", "m.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = run_sonde(["report", "mem.json", "-f", "pprof", "-o", "mem.pb.gz"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc, path = json_profile(tmp_path / "mem.json"), tmp_path / "mem.pb.gz"
    for index, unit, entries, key in (("alloc_space", "B", "allocations", "bytes"),
                                      ("alloc_objects", "", "allocations", "objects"),
                                      ("inuse_space", "B", "leaks", "bytes"),
                                      ("inuse_objects", "", "leaks", "objects")):
        got = go_traces(path, index, unit)
        assert nonzero(got) == doc_stacks(doc[entries], key), index
    # churn's 100 lists of 10,000 items: 80,000 bytes each, always followed
    # (blocks of 16 x sample_bytes and more are), their small headers sampled:
    # about 1.5 samples of about 65 objects each, none in about one run in
    # six (so no lower bound on them), nine or more about once in 10^5 runs.
    lists = doc_stacks(doc["allocations"], "bytes")[("churn", "main", "<module>")]
    objects = doc_stacks(doc["allocations"], "objects")[("churn", "main", "<module>")]
    assert 100 * 80000 <= lists <= 100 * 80000 * 1.02, lists
    assert 100 <= objects <= 100 + 600, objects
    assert ("build", "main", "<module>") in doc_stacks(doc["leaks"], "bytes")
    table = run_sonde(["report", "mem.json"], tmp_path).stdout
    assert "still alive" in table.lower()
    types = go_pprof("-raw", path).split("Samples:\n", 1)[1].splitlines()[0]
    assert types.split() == ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                             "inuse_space/bytes[dflt]"]


def go_cpu_profile(tmp_path):
    """A CPU profile written by Go's own runtime/pprof."""
    (tmp_path / "main.go").write_text(GO_PROGRAM)
    env = dict(os.environ, GO111MODULE="off", GOFLAGS="")
    subprocess.run([GO, "run", "main.go", "cpu.pb.gz"], cwd=str(tmp_path), env=env, check=True,
                   timeout=300)
    return tmp_path / "cpu.pb.gz"


GO_PROGRAM = r'''
package main

import (
	"os"
	"runtime/pprof"
)

func sq(i int) int { return i * i % 7 }

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += sq(i)
	}
	return s
}

//go:noinline
func other(n int) int { return spin(n) }

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	s := 0
	for k := 0; k < 300; k++ {
		s += spin(1000000) + other(500000)
	}
	pprof.StopCPUProfile()
	f.Close()
	if s == 42 {
		println(s)
	}
}
'''


# A sampled profile's table: nsamples tottime persample cumtime persample
# name (a persample column is blank where a function never ran itself).
TOTTIME, CUMTIME = 1, 3


@needs_go
def test_reads_go_cpu_profile(tmp_path):
    """Go's own CPU profile (inlined frames, mappings, addresses): sonde
    report's stacks and times are go tool pprof's; sonde view draws it."""
    path = go_cpu_profile(tmp_path)
    traces = go_traces(path, "samples", "ns", lines=True)
    collapsed = run_sonde(["report", str(path), "-f", "collapsed"], tmp_path)
    assert collapsed.returncode == 0, collapsed.stderr
    ours = stacks_of(collapsed.stdout)
    # go tool pprof marks inlined frames " (inline)"
    assert ours == {tuple(f.replace(" (inline)", "") for f in k): v for k, v in traces.items()}
    assert any("main.sq" in f for k in ours for f in k)
    top = go_top(path, "cpu", "ns")
    table = run_sonde(["report", str(path), "-l", "0"], tmp_path).stdout
    (row,) = [l for l in table.splitlines() if l.endswith("(main.spin)")]
    assert float(row.split()[CUMTIME]) == pytest.approx(top["main.spin"][1] / 1e9, abs=0.0006)
    plain = tmp_path / "cpu.pb"
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    again = run_sonde(["report", "cpu.pb", "-f", "collapsed"], tmp_path)
    assert again.returncode == 0 and again.stdout == collapsed.stdout
    view = run_sonde(["view", "cpu.pb", "-o", "go.html"], tmp_path)
    assert view.returncode == 0 and "main.spin" in (tmp_path / "go.html").read_text()


def test_reads_go_profile_without_go(tmp_path):
    """The Go CPU profile kept in tests/c/corpus (what go tool pprof -top
    showed for it: main.spin 80 ms cumulative, main.sq inlined 70 ms)."""
    shutil.copy(os.path.join(CORPUS, "go_cpu.pb.gz"), str(tmp_path))
    proc = run_sonde(["report", "go_cpu.pb.gz", "-l", "0"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {l.split()[-1]: l.split() for l in proc.stdout.splitlines() if "go:0(" in l}
    assert rows["/tmp/goapp/main.go:0(main.spin)"][CUMTIME] == "0.080"
    assert rows["/tmp/goapp/main.go:0(main.sq)"][CUMTIME] == "0.070"
    assert rows["/tmp/goapp/main.go:0(main.sq)"][TOTTIME] == "0.040"


def test_bad_pprof_files(tmp_path):
    """One line on stderr, exit 1: a cut gzip stream, protobuf garbage, a
    mem document's pprof asked of a lines document (exit 2)."""
    data = open(os.path.join(CORPUS, "go_cpu.pb.gz"), "rb").read()
    (tmp_path / "cut.pb.gz").write_bytes(data[:len(data) // 2])
    (tmp_path / "bad.pb").write_bytes(b"\x0a\x04\x08\x01\x10\x02\x12\xff")
    for name, why in (("cut.pb.gz", "the gzip stream is cut short"),
                      ("bad.pb", "a length past the end")):
        proc = run_sonde(["report", name], tmp_path)
        assert proc.returncode == 1 and proc.stdout == "", proc.stdout
        assert len(proc.stderr.splitlines()) == 1 and why in proc.stderr, proc.stderr
        assert "as a pprof profile" in proc.stderr
    (tmp_path / "l.json").write_text('{"sonde": 1, "mode": "lines", "functions": []}')
    proc = run_sonde(["report", "l.json", "-f", "pprof"], tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    proc = run_sonde(["report", "cut.pb.gz", "-f", "pprof"], tmp_path)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, proc.stderr
