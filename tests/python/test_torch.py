"""sonde run --torch and Profile(torch=True): PyTorch operators and
record_function regions in sonde's tree, checked against torch.profiler on
the same programs (torch_workloads.py): operator names and counts equal
key_averages()' exactly, self CPU shares within 10% for operators over 1%
of the total, region nesting equal to record_function's, Python callers
equal to with_stack=True's.

torch is optional: these tests run with the test environment's
interpreter (build/venv, where `make test` installs torch==2.13.0 on
Python 3.11) and are skipped with a note where torch is missing."""

import json
import os
import pstats
import subprocess
import sys

import pytest

from conftest import HERE, run_sonde, with_pkg_env
from torch_table import table

torch = pytest.importorskip("torch", reason="torch is not installed in the test environment "
                            "(make test installs torch==2.13.0 for Python 3.11)")

WORKLOADS = os.path.join(HERE, "torch_workloads.py")


def reference(tmp_path, workload, *mode):
    """What torch.profiler saw of the workload (torch_workloads.py)."""
    out = tmp_path / ("ref-%s-%s.json" % (workload, "-".join(mode)))
    for _attempt in range(3):
        proc = subprocess.run([sys.executable, WORKLOADS, workload, str(out), "reference"] +
                              list(mode), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=with_pkg_env())
        # torch 2.13 with with_stack=True now and then names an event with
        # bytes that are not UTF-8, and its own key_averages() fails on it.
        if proc.returncode == 0 or "UnicodeDecodeError" not in proc.stderr:
            break
    else:
        pytest.skip("torch.profiler's own reference failed 3 times on its UnicodeDecodeError "
                    "(torch's bug, not sonde's): nothing to compare with")
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def sonde_torch(tmp_path, workload, fmt="json", *extra):
    """sonde run --torch of the workload: (its profile in fmt, the
    driver's own figures, the run)."""
    out = tmp_path / ("sonde-%s.%s" % (workload, fmt))
    side = tmp_path / ("side-%s.json" % workload)
    r = run_sonde(["run", "--torch", "-f", fmt, "-o", str(out)] + list(extra) +
                  [WORKLOADS, workload, str(side)], tmp_path)
    assert r.returncode == 0, r.stderr
    return out, json.loads(side.read_text()), r


class Tree:
    """sonde's -f json profile, walked by function kind."""

    def __init__(self, path):
        doc = json.loads(path.read_text())
        self.funcs = doc["functions"]
        self.nodes = doc["nodes"]  # [function, parent, calls, total, self]
        self.mem = {node: nbytes for node, nbytes in doc.get("torch_memory", [])}

    def func(self, node):
        f = self.nodes[node][0]
        return self.funcs[f] if f >= 0 else None

    def torch_nodes(self):
        for i in range(1, len(self.nodes)):
            f = self.func(i)
            if f is not None and f["kind"] == "torch":
                yield i, f

    def ops(self):
        """name -> [calls, self seconds]."""
        got = {}
        for i, f in self.torch_nodes():
            entry = got.setdefault(f["name"], [0, 0.0])
            entry[0] += self.nodes[i][2]
            entry[1] += self.nodes[i][4]
        return got

    def memory(self):
        """name -> [bytes, self bytes] (--torch-memory), as torch's
        cpu_memory_usage and self_cpu_memory_usage: an operator's own
        less the nearest operators' beneath it."""
        below = [0] * len(self.nodes)
        mine = lambda i: self.mem.get(i, below[i])
        for i in range(len(self.nodes) - 1, 0, -1):
            f, parent = self.func(i), self.nodes[i][1]
            if 0 < parent < i:
                below[parent] += mine(i) if f is not None and f["kind"] == "torch" else below[i]
        got = {}
        for i, f in self.torch_nodes():
            entry = got.setdefault(f["name"], [0, 0])
            entry[0] += mine(i)
            entry[1] += mine(i) - below[i]
        return got

    def up(self, node):
        """The ancestors of node, nearest first."""
        node = self.nodes[node][1]
        while node > 0 and self.func(node) is not None:
            yield node
            node = self.nodes[node][1]

    def regions(self, names):
        pairs = set()
        for i, f in self.torch_nodes():
            if f["name"] not in names:
                continue
            outer = next((self.func(a)["name"] for a in self.up(i)
                          if self.func(a)["kind"] == "torch" and self.func(a)["name"] in names),
                         None)
            pairs.add((f["name"], outer))
        return pairs

    def callers(self, regions):
        """(operator, caller's file base name, first line, name) of every
        top-level operator, as torch_workloads.callers() reads with_stack."""
        found = set()
        for i, f in self.torch_nodes():
            if f["name"] in regions:
                continue
            for a in self.up(i):
                g = self.func(a)
                if g["kind"] == "torch" and g["name"] not in regions:
                    break  # inside another operator
                if g["kind"] == "python":
                    found.add((f["name"], os.path.basename(g["file"]), g["line"], g["name"]))
                    break
        return found


def region_names(ref):
    return {name for name, _outer in ref["regions"]}


@pytest.mark.parametrize("workload", ["mlp", "cnn", "training", "labelled", "threads"])
def test_operator_counts_equal_key_averages(tmp_path, workload):
    ref = reference(tmp_path, workload)
    out, _side, _r = sonde_torch(tmp_path, workload)
    got = Tree(out).ops()
    assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in ref["ops"].items()}


def shortest(runs):
    """Each operator's least self time over several runs: a preemption
    that landed in one run's operator is not the operator's."""
    return {name: min(run[name] for run in runs) for name in runs[0]}


# Two separate runs differ by more than 10% here even with sonde out of the
# way: three torch.profiler runs of the training step gave aten::clamp_min
# 4.21%, 8.05% and 3.91% of the self time, aten::fill_ 8.95%, 5.37% and
# 3.90% (each operator's time is a few microseconds a call, and whatever
# else the machine runs lands in it).  sonde's own figures are torch's:
# test_self_cpu_equals_key_averages_of_the_same_events compares them on one
# run.  This comparison across runs stays, as an expected failure where the
# machine's noise decides it, and it no longer skips on a busy machine (a
# skip there said nothing either): there its noise only makes the expected
# failure likelier.
@pytest.mark.xfail(reason="two separate runs' shares differ by their noise, not sonde's",
                   strict=False)
@pytest.mark.parametrize("workload", ["cnn", "training"])
def test_self_cpu_shares_match_key_averages(tmp_path, workload):
    refs, runs = [], []
    for _ in range(3):
        refs.append(reference(tmp_path, workload))
        runs.append(sonde_torch(tmp_path, workload))
    regions = region_names(refs[0])
    got = shortest([{k: v[1] for k, v in Tree(out).ops().items() if k not in regions}
                    for out, _side, _r in runs])
    want = shortest([{k: v[1] for k, v in ref["ops"].items() if k not in regions}
                     for ref in refs])
    got_total, want_total = sum(got.values()), sum(want.values())
    compared = 0
    for name, self_us in want.items():
        share = self_us / want_total
        if share < 0.01:
            continue
        compared += 1
        assert abs(got[name] / got_total - share) <= 0.1 * share, (name, got[name] / got_total,
                                                                    share)
    assert compared >= 3


def test_regions_nest_as_record_function(tmp_path):
    ref = reference(tmp_path, "labelled")
    out, _side, _r = sonde_torch(tmp_path, "labelled")
    assert ref["regions"]  # step > forward, step > loss
    assert Tree(out).regions(region_names(ref)) == {tuple(p) for p in ref["regions"]}


SAME_EVENTS = """\
import json, sys
import sonde, sonde._torch
import torch
from torch.autograd.profiler import profile
from torch.autograd.profiler_util import EventList
import torch_workloads

seen = {}
placed = sonde._torch._operators


def spy(torch_module, result, regions, *args):
    seen["result"], seen["regions"] = result, set(regions)
    return placed(torch_module, result, regions, *args)


sonde._torch._operators = spy
prof = sonde.Profile(torch=True)
with prof:
    torch_workloads.WORKLOADS[sys.argv[1]]()
prof.write(sys.argv[2] + ".profile.json", "json")
events = EventList(profile(use_cpu=True)._parse_kineto_results(seen["result"]))
events._build_tree()
with open(sys.argv[2], "w") as f:
    json.dump({"regions": sorted(seen["regions"]),
               "ops": {e.key: [e.count, e.self_cpu_time_total / 1e6]
                       for e in events.key_averages()}}, f)
"""


@pytest.mark.parametrize("workload", ["cnn", "training"])
def test_self_cpu_equals_key_averages_of_the_same_events(tmp_path, workload):
    """Each operator's self CPU time in sonde's tree equals what
    key_averages() makes of the very events sonde placed (torch's own
    parser, _parse_kineto_results, run on them afterwards): within 1% for
    the operators over 1% of the total.  Comparing one run with another
    measures the machine (see below); this measures sonde."""
    script = tmp_path / "same.py"
    script.write_text(SAME_EVENTS)
    out = tmp_path / "same.json"
    proc = subprocess.run([sys.executable, str(script), workload, str(out)],
                          env=with_pkg_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    ref = json.loads(out.read_text())
    regions = set(ref["regions"])
    got = {k: v for k, v in Tree(tmp_path / "same.json.profile.json").ops().items()
           if k not in regions}
    want = {k: v for k, v in ref["ops"].items() if k not in regions}
    assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in want.items()}
    total = sum(v[1] for v in want.values())
    compared = 0
    for name, (_count, self_s) in want.items():
        if self_s < 0.01 * total:
            continue
        compared += 1
        assert abs(got[name][1] - self_s) <= 0.01 * self_s, (name, got[name][1], self_s)
    assert compared >= 3


@pytest.mark.parametrize("workload", ["mlp", "cnn", "labelled"])
def test_python_callers_equal_with_stack(tmp_path, workload):
    ref = reference(tmp_path, workload, "with_stack")
    plain = reference(tmp_path, workload)
    out, _side, _r = sonde_torch(tmp_path, workload)
    assert Tree(out).callers(region_names(plain)) == {tuple(c) for c in ref["callers"]}


def test_with_stack_reference_without_is_python_function(tmp_path):
    """torch 2.11's FunctionEvent has no is_python_function: the reference
    then tells Python events by the names torch's Python tracer gives them,
    and finds the same callers as 2.13's flag does."""
    ref = reference(tmp_path, "training", "with_stack")
    assert ref["callers"] and ref["callers_211"] == ref["callers"]


def test_profile_api_places_operators_under_their_caller(tmp_path):
    """Profile(torch=True): the same tree from the in-process API; the
    .prof file keys operators ('~torch', 0, NAME), as pstats reads them."""
    script = tmp_path / "api.py"
    script.write_text(
        "import sonde, torch\n"
        "m = torch.nn.Linear(64, 64)\n"
        "x = torch.randn(32, 64)\n"
        "def work():\n"
        "    for _ in range(5):\n"
        "        m(x).sum().backward()\n"
        "prof = sonde.Profile(torch=True)\n"
        "with prof:\n"
        "    work()\n"
        "prof.dump_stats(%r)\n" % str(tmp_path / "api.prof"))
    proc = subprocess.run([sys.executable, str(script)], env=with_pkg_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    stats = pstats.Stats(str(tmp_path / "api.prof")).stats
    cc, nc, tt, ct, callers = stats[("~torch", 0, "aten::addmm")]
    assert nc == 5 and ct >= tt > 0
    # Inside aten::linear, run by F.linear, a C function under Linear.forward.
    assert list(callers) == [("~torch", 0, "aten::linear")]
    [(file, line, label)] = stats[("~torch", 0, "aten::linear")][4]
    assert (file, line) == ("~", 0) and label.endswith("linear>")
    assert stats[("~torch", 0, "aten::sum")][1] >= 5


def test_program_own_torch_profiler_takes_over(tmp_path):
    """A program that starts torch.profiler while sonde's records: its own
    profiler works, sonde says it stopped there and keeps the operators
    recorded before."""
    script = tmp_path / "own.py"
    script.write_text(
        "import torch\n"
        "from torch.profiler import profile, ProfilerActivity\n"
        "x = torch.randn(64, 64)\n"
        "y = x @ x\n"
        "with profile(activities=[ProfilerActivity.CPU]) as prof:\n"
        "    z = x + x\n"
        "print(sorted(e.key for e in prof.key_averages()))\n")
    out = tmp_path / "own.prof"
    r = run_sonde(["run", "--torch", "-o", str(out), str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['aten::add']"
    assert "started its own torch.profiler" in r.stderr
    stats = pstats.Stats(str(out)).stats
    assert stats[("~torch", 0, "aten::matmul")][1] == 1
    assert ("~torch", 0, "aten::add") not in stats


def test_program_that_never_imports_torch(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("print(sum(range(10)))\n")
    r = run_sonde(["run", "--torch", str(script)], tmp_path)
    assert r.returncode == 0 and r.stdout == "45\n"
    said = [l for l in r.stderr.splitlines() if l.startswith("sonde:")]
    assert said == ["sonde: --torch: the program never imported torch: no operators to record"]


def test_unsupported_torch_says_so(tmp_path):
    """A torch without the 2.x profiler API: one line naming its version;
    the program runs and its profile is written."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '1.4.0'\n")
    script = tmp_path / "old.py"
    script.write_text("import torch\nprint(torch.__version__)\n")
    out = tmp_path / "old.prof"
    r = run_sonde(["run", "--torch", "-o", str(out), str(script)], tmp_path)
    assert r.returncode == 0 and r.stdout == "1.4.0\n", r.stderr
    said = [l for l in r.stderr.splitlines() if l.startswith("sonde:")]
    assert len(said) == 1 and "torch 1.4.0 is not supported" in said[0], said
    assert any(k[2] == "<module>" for k in pstats.Stats(str(out)).stats)


def test_crash_inside_an_operator_keeps_the_profile(tmp_path):
    """An operator that raises: the program's traceback and exit status,
    and a profile with the operators, the failed one included."""
    script = tmp_path / "crash.py"
    script.write_text(
        "import torch\n"
        "def bad():\n"
        "    return torch.zeros(2, 3) @ torch.zeros(4, 5)\n"
        "torch.ones(3).sum()\n"
        "bad()\n")
    out = tmp_path / "crash.prof"
    r = run_sonde(["run", "--torch", "-o", str(out), str(script)], tmp_path)
    assert r.returncode == 1
    assert "RuntimeError" in r.stderr and "mat1 and mat2 shapes cannot be multiplied" in r.stderr
    stats = pstats.Stats(str(out)).stats
    assert stats[("~torch", 0, "aten::sum")][1] == 1
    callers = stats[("~torch", 0, "aten::zeros")][4]
    assert [k[2] for k in callers] == ["<built-in method zeros of type object>"] or \
        any("zeros" in k[2] for k in callers)


def torch_name(name):
    """A name as key_averages().table() shows it: cut past 51 characters."""
    return name if len(name) < 52 else name[:52] + "..."


def table_rows(text):
    """(headers, {name: count}) of a key_averages().table()-shaped text
    (torch_table.table), names cut as torch cuts them: the counts of the
    rows of one name (a row per Python caller, with that column) added."""
    headers, rows = table(text)
    counts = {}
    for name, cells in rows:
        name = torch_name(name)
        counts[name] = counts.get(name, 0) + int(cells["# of Calls"])
    return headers, counts


@pytest.mark.parametrize("profile_format", ["json", "pstats"])
def test_report_ops_is_key_averages_table(tmp_path, profile_format):
    """sonde report --ops: torch's columns, its operators and counts,
    sorted by CPU total as key_averages().table(sort_by="cpu_time_total"),
    from the JSON profile and from the .prof file alike."""
    ref = reference(tmp_path, "training")
    out, _side, _r = sonde_torch(tmp_path, "training", profile_format)
    r = run_sonde(["report", str(out), "--ops", "-l", "0"], tmp_path)
    assert r.returncode == 0, r.stderr
    want_headers, want = table_rows(ref["table"])
    got_headers, got = table_rows(r.stdout)
    assert got_headers == want_headers
    assert got == want
    # The figures are the profile's own: self seconds as pstats reads them.
    if profile_format == "pstats":
        stats = pstats.Stats(str(out)).stats
        total = sum(v[2] for k, v in stats.items() if k[0] == "~torch")
        assert r.stdout.splitlines()[-1] == "Self CPU time total: %.3fms" % (total * 1e3)


def test_report_ops_by_caller_splits_by_python_function(tmp_path):
    """--by-caller: each operator's rows are its top-level runs' Python
    callers (with_stack's), and their counts add up to the operator's."""
    ref = reference(tmp_path, "labelled", "with_stack")
    out, _side, _r = sonde_torch(tmp_path, "labelled")
    plain = run_sonde(["report", str(out), "--ops", "-l", "0"], tmp_path)
    split = run_sonde(["report", str(out), "--ops", "--by-caller", "-l", "0", "-s", "name"],
                      tmp_path)
    assert split.returncode == 0, split.stderr
    _h, totals = table_rows(plain.stdout)
    _h, per_caller = table_rows(split.stdout)
    assert per_caller == totals
    callers = {}
    for line in split.stdout.splitlines():
        if line.rstrip().endswith(")"):
            name, where = line.strip().split("  ")[0], line.rsplit("  ", 1)[1]
            path, func = where[:-1].split("(", 1)
            file, first = path.rsplit(":", 1)
            callers.setdefault(name, set()).add((os.path.basename(file), int(first), func))
    for op, file, first, func in ref["callers"]:
        assert (file, first, func) in callers[op], (op, file, func, callers.get(op))


def test_report_ops_by_shape_is_group_by_input_shape(tmp_path):
    """run --torch-shapes, report --ops --by-shape: a row per operator and
    input shapes, with key_averages(group_by_input_shape=True)'s counts;
    plain --ops of the same file still has key_averages()' counts."""
    ref = reference(tmp_path, "cnn", "shapes")
    out, _side, _r = sonde_torch(tmp_path, "cnn", "json", "--torch-shapes")
    r = run_sonde(["report", str(out), "--ops", "--by-shape", "-l", "0"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rules = [i for i, l in enumerate(lines) if l.startswith("---")]
    headers = [c.strip() for c in lines[rules[0] + 1].split("  ") if c.strip()]
    assert headers[-2:] == ["# of Calls", "Input Shapes"]
    got = {}
    for line in lines[rules[1] + 1:rules[2]]:
        cols = [c.strip() for c in line.strip().split("  ") if c.strip()]
        got[(cols[0], cols[-1])] = got.get((cols[0], cols[-1]), 0) + int(cols[-2])
    assert got == {(name, shapes): count for name, shapes, count in ref["by_shape"]}
    _h, plain = table_rows(run_sonde(["report", str(out), "--ops", "-l", "0"], tmp_path).stdout)
    assert plain == {torch_name(k): v[0] for k, v in ref["ops"].items()}


def test_report_ops_bad_input(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("print(1)\n")
    prof = tmp_path / "plain.prof"
    assert run_sonde(["run", "-o", str(prof), str(plain)], tmp_path).returncode == 0
    r = run_sonde(["report", str(prof), "--ops"], tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip() == ("sonde: no PyTorch operators in this profile (record "
                                "them with sonde run --torch)")
    r = run_sonde(["report", str(prof), "--ops", "--by-caller"], tmp_path)
    assert r.returncode == 1 and "no call tree" in r.stderr
    r = run_sonde(["report", str(prof), "--ops", "-s", "bogus"], tmp_path)
    assert r.returncode == 2 and "unknown sort key 'bogus' for --ops" in r.stderr
    r = run_sonde(["report", str(prof), "--ops", "--by-shape"], tmp_path)
    assert r.returncode == 1 and "no input shapes" in r.stderr
    r = run_sonde(["report", str(prof), "--by-caller"], tmp_path)
    assert r.returncode == 2 and ("--by-caller, --by-shape, --by-step and --by-process go "
                                  "with --ops") in r.stderr
    r = run_sonde(["report", str(prof), "--ops", "--by-process"], tmp_path)
    assert r.returncode == 1 and "holds one process: --by-process needs a profile of several" \
        in r.stderr, r.stderr


def trace_slices(path):
    """-f chrome's document and its slices (calls, operators, kernels; not
    the steps, on a track of their own), times in whole nanoseconds."""
    doc = json.loads(path.read_text())
    slices = [dict(e, start=round(e["ts"] * 1000), end=round((e["ts"] + e["dur"]) * 1000))
              for e in doc["traceEvents"] if e["ph"] == "X" and e.get("cat") != "step"]
    return doc, slices


def enclosing(slices):
    """(slice, the slice holding it or None) in each thread's start order;
    asserts that each lies wholly inside the one holding it."""
    pairs = []
    for tid in {e["tid"] for e in slices}:
        stack = []
        for e in sorted((e for e in slices if e["tid"] == tid),
                        key=lambda e: (e["start"], -e["end"])):
            while stack and stack[-1]["end"] <= e["start"] and stack[-1]["end"] < e["end"]:
                stack.pop()
            up = stack[-1] if stack else None
            assert up is None or up["start"] <= e["start"] and e["end"] <= up["end"], (e, up)
            pairs.append((e, up))
            stack.append(e)
    return pairs


@pytest.mark.parametrize("workload", ["training", "threads"])
def test_chrome_trace_nests_operators_under_their_callers(tmp_path, workload):
    """-f chrome: the operators on their thread's track, inside the Python
    call that ran them as in the tree; their names and counts are
    key_averages()' and those of torch.profiler's own export_chrome_trace
    of the same program (less the duplicates key_averages() drops)."""
    ref = reference(tmp_path, workload, "chrome")
    trace, _side, r = sonde_torch(tmp_path, workload, "chrome")
    doc, slices = trace_slices(trace)
    assert doc["otherData"]["dropped"] == 0 and doc["otherData"]["events"] >= len(slices)
    assert doc["otherData"]["python_calls"] == "holding an operator or region"
    assert "dropped" not in r.stderr
    pairs = enclosing(slices)
    # Of the Python calls, only those that hold an operator are written:
    # the trace stays within 10 times the size of torch's own.
    holder = {id(e): up for e, up in pairs}
    holding = set()
    for e, _up in pairs:
        if e["cat"] == "torch":
            up = holder[id(e)]
            while up is not None:
                holding.add(id(up))
                up = holder[id(up)]
    assert all(id(e) in holding for e, _up in pairs if e["cat"] == "python")
    theirs = tmp_path / ("ref-%s-chrome.json.trace.json" % workload)
    assert trace.stat().st_size <= 10 * theirs.stat().st_size, (trace.stat().st_size,
                                                                theirs.stat().st_size)
    counts = {}
    for e, _up in pairs:
        if e["cat"] == "torch":
            counts[e["name"]] = counts.get(e["name"], 0) + 1
    assert counts == {k: v[0] for k, v in ref["ops"].items()} == ref["chrome_ops"]
    # The tree of a second run holds each operator beneath the Python
    # function the trace puts it in.  Which C call holds an operator is not
    # compared: a detach or clone starts 100-400 ns after the builtin method
    # that runs it, within what joining torch's clock to the tracer's can
    # move from run to run, so the caller compared is the nearest function
    # written in Python on both sides.
    tree_path, _side, _r = sonde_torch(tmp_path, workload)
    tree = Tree(tree_path)
    in_tree = set()
    for i, f in tree.torch_nodes():
        up = tree.nodes[i][1]
        while tree.func(up)["kind"] == "c":
            up = tree.nodes[up][1]
        in_tree.add((tree.func(up)["qualname"], f["name"]))
    holder_of = {id(e): up for e, up in pairs}
    placed = set()
    for e, up in pairs:
        if e["cat"] == "torch":
            while up is not None and up["cat"] == "python" and up["name"].startswith("<"):
                up = holder_of[id(up)]
            assert up is not None, e
            placed.add((up["name"], e["name"]))
    assert placed <= in_tree, placed - in_tree
    assert any(up["cat"] == "python" for e, up in pairs if e["cat"] == "torch")


def test_chrome_trace_keeps_its_budget(tmp_path):
    """--max-events N: exactly N slices, the first ones (the operators kept
    are the run's first ones in order), still nested; what it dropped is
    said in the trace and in one stderr line.  --torch-all-calls: every
    call recorded is in the trace."""
    full, _side, _r = sonde_torch(tmp_path, "mlp", "chrome", "--torch-all-calls")
    _doc, everything = trace_slices(full)
    ordered = sorted(everything, key=lambda e: (e["start"], -e["end"]))
    order = [e["name"] for e in ordered if e["cat"] == "torch"]
    # A budget that ends halfway between the first operator and the end.
    # The Python calls before the first operator (imports) vary from run
    # to run (by hundreds in a fresh clone's first runs): when this run's
    # came to more than the budget, it kept no operator, and the budget
    # moves halfway into what this run made after it (at most twice).
    first = [i for i, e in enumerate(ordered) if e["cat"] == "torch"][0]
    budget = first + (len(ordered) - first) // 2
    for _attempt in range(3):
        out, _side, r = sonde_torch(tmp_path, "mlp", "chrome", "--max-events", str(budget),
                                    "--torch-all-calls")
        doc, slices = trace_slices(out)
        assert len(slices) == budget == doc["otherData"]["events"] == doc["otherData"]["budget"]
        assert doc["otherData"]["python_calls"] == "all"
        kept = [e["name"] for e, _up in enclosing(slices) if e["cat"] == "torch"]
        if kept:
            break
        budget += doc["otherData"]["dropped"] // 2
    assert 0 < len(kept) < len(order) and kept == order[:len(kept)]
    dropped = doc["otherData"]["dropped"]
    assert dropped >= len(order) - len(kept)
    said = [line for line in r.stderr.splitlines() if "dropped" in line]
    assert said == ["sonde: --torch: the trace keeps the first %d of %d calls and operators "
                    "(--max-events %d): %d dropped" % (budget, budget + dropped, budget, dropped)]


@pytest.mark.parametrize("args,why", [
    (["-f", "chrome", "-o", "t.json"], "'chrome' is a timeline: sonde run writes one of calls "
     "and operators with --torch; for samples, sonde record -f chrome"),
    (["--torch", "-f", "chrome", "-o", "t.json", "--max-events", "0"],
     "--max-events takes a number of events from 1 to 100000000"),
    (["--torch", "-f", "chrome", "-o", "t.json", "--max-events", "-5"],
     "--max-events needs a whole number of 0 or more, not '-5'"),
    (["--torch", "-o", "t.json", "-f", "json", "--max-events", "10"],
     "--max-events bounds a timeline: use it with --torch -f chrome or -f tensorboard"),
    (["--torch", "-f", "chrome"], "-f chrome needs -o FILE (the trace is a file for Perfetto "
     "or chrome://tracing)"),
    (["-f", "chrome", "-o", "t.json", "--torch-all-calls"], "--torch-all-calls chooses the "
     "Python calls of a PyTorch trace: add --torch"),
])
def test_chrome_trace_bad_input(tmp_path, args, why):
    prog = tmp_path / "plain.py"
    prog.write_text("print(1)\n")
    r = run_sonde(["run"] + args + [str(prog)], tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == ["sonde run: %s (see 'sonde run --help')" % why]


def memory_columns(text):
    """{name: (CPU Mem, Self CPU Mem)} of a key_averages().table()-shaped
    text with memory columns."""
    lines = text.splitlines()
    rules = [i for i, l in enumerate(lines) if l.startswith("---")]
    split = lambda l: [c.strip() for c in l.strip().split("  ") if c.strip()]
    headers = split(lines[rules[0] + 1])
    mem, own = headers.index("CPU Mem"), headers.index("Self CPU Mem")
    return {torch_name(cols[0]): (cols[mem], cols[own])
            for cols in map(split, lines[rules[1] + 1:rules[2]])}


@pytest.mark.parametrize("workload", ["training", "labelled"])
def test_torch_memory_equals_profile_memory(tmp_path, workload):
    """--torch-memory: each operator's CPU bytes (callees included, and
    self) equal torch.profiler(profile_memory=True)'s cpu_memory_usage
    and self_cpu_memory_usage in key_averages(), and report --ops shows
    them as its table does.  Regions differ (README): torch also counts
    the bytes released inside a region outside any operator, which sonde
    leaves out, as it leaves out torch's "[memory]" row."""
    ref = reference(tmp_path, "%s" % workload, "memory")
    out, _side, r = sonde_torch(tmp_path, workload, "json", "--torch-memory")
    skip = region_names(ref) | {"[memory]"}
    want = {k: v for k, v in ref["memory"].items() if k not in skip}
    got = Tree(out).memory()
    assert {k: v for k, v in got.items() if k not in skip} == want
    assert any(v[0] for v in want.values()) and any(v[1] < 0 for v in want.values())
    shown = run_sonde(["report", str(out), "--ops", "-l", "0"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    got_cols, want_cols = memory_columns(shown.stdout), memory_columns(ref["table"])
    assert {k: v for k, v in got_cols.items() if k not in skip} == \
        {k: v for k, v in want_cols.items() if k not in skip}


def test_torch_memory_bad_input(tmp_path):
    prog = tmp_path / "plain.py"
    prog.write_text("print(1)\n")
    r = run_sonde(["run", "--torch-memory", str(prog)], tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "sonde run: --torch-memory records operators' memory: add --torch (see 'sonde run "
        "--help')"]


TENSOR_LINES = """\
import sys
import torch


def main():
    x = torch.empty(3_000_000)
    y = torch.empty(25_000)
    z = torch.ones(1000, 1000, dtype=torch.float64)
    del y
    return x, z


if sys.argv[1:] == ["reference"]:
    from torch.profiler import ProfilerActivity, profile
    for size, dtype in ((3_000_000, torch.float32), (25_000, torch.float32),
                        (1_000_000, torch.float64)):
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            t = torch.empty(size, dtype=dtype)
        print(max(e.cpu_memory_usage for e in prof.key_averages()))
        del t
else:
    keep = main()
"""


def test_sonde_mem_counts_tensor_memory_on_its_line(tmp_path):
    """sonde mem: what libtorch's CPU allocator takes for a tensor
    (posix_memalign, mmap'd by glibc past its threshold) reaches the line
    that made the tensor: N elements of 4 bytes, as torch.profiler's
    profile_memory counts them, plus what the tensor's own small objects
    take (sampled: under 64 KiB); a tensor freed before the end nets 0."""
    prog = tmp_path / "tensors.py"
    prog.write_text(TENSOR_LINES)
    ref = subprocess.run([sys.executable, str(prog), "reference"], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True)
    want = [int(x) for x in ref.stdout.split()]
    assert want == [12_000_000, 100_000, 8_000_000]
    out = tmp_path / "mem.json"
    r = run_sonde(["mem", "-o", str(out), "-f", "main", str(prog)], tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    lines = {l["line"]: l for f in doc["functions"] if f["name"] == "main" for l in f["lines"]}
    for line, nbytes, alive in ((6, want[0], True), (7, want[1], False), (8, want[2], True)):
        assert nbytes <= lines[line]["alloc_bytes"] <= nbytes + 65536, (line, lines[line])
        assert (nbytes <= lines[line]["net_bytes"] <= nbytes + 65536 if alive
                else lines[line]["net_bytes"] < 65536), (line, lines[line])
