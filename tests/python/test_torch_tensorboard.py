"""sonde run --torch -f tensorboard: the trace TensorBoard's PyTorch
profiler plugin (torch-tb-profiler) reads, checked through the plugin's
own parser and through a real `tensorboard --logdir` over HTTP against
torch.profiler's own trace of the same training loop and steps
(torch_steps_loop.py, written by tensorboard_trace_handler): operator
names and call counts equal, ProfilerStep#N equal to the steps the loop
ran, the file named as the handler names its own and within ten times
its size; with --torch-steps, the steps and operators of torch.profiler's
schedule(wait, warmup=0, active, repeat).

torch and the plugin are optional: these run with the test environment's
interpreter (build/venv, where `make test` installs torch==2.13.0,
tensorboard and torch-tb-profiler on Python 3.11) and are skipped with a
note where they are missing."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from conftest import HERE, run_sonde, with_pkg_env
from torch_table import microseconds, table

pytest.importorskip("torch", reason="torch is not installed in the test environment "
                    "(make test installs torch==2.13.0 for Python 3.11)")
plugin_data = pytest.importorskip("torch_tb_profiler.profiler.data",
                                  reason="torch-tb-profiler is not installed in the test "
                                  "environment (make test installs it for Python 3.11)")
plugin_consts = pytest.importorskip("torch_tb_profiler.consts")

LOOP = os.path.join(HERE, "torch_steps_loop.py")


def one_trace(folder):
    """The one trace file in the folder, its name as the plugin reads it."""
    names = os.listdir(str(folder))
    assert len(names) == 1, names
    assert plugin_consts.WORKER_PATTERN.match(names[0]), names[0]
    return folder / names[0]


def torch_traces(tmp_path, *schedule):
    """torch.profiler's traces of the loop, every step or those of
    schedule(wait, warmup=0, active, repeat) given as W:A[:R]: one file
    a cycle, in the order written."""
    folder = tmp_path / "torch"
    proc = subprocess.run([sys.executable, LOOP, "torch", str(folder)] + list(schedule),
                          env=with_pkg_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    return sorted((folder / name for name in os.listdir(str(folder))),
                  key=lambda path: path.stat().st_mtime_ns)


def torch_trace(tmp_path, *schedule):
    traces = torch_traces(tmp_path, *schedule)
    assert len(traces) == 1, traces
    return one_trace(traces[0].parent)


def sonde_trace(tmp_path, *args, options=()):
    """sonde's trace of the loop run with args, with sonde run's options."""
    folder = tmp_path / "sonde"
    r = run_sonde(["run", "--torch", "-f", "tensorboard", "-o", str(folder)] + list(options)
                  + [LOOP] + list(args), tmp_path)
    assert r.returncode == 0 and r.stdout == "trained\n", r.stderr
    return one_trace(folder)


def plugin_view(path):
    """What the plugin makes of a trace: its operator table (name ->
    calls) and its steps."""
    run = plugin_data.RunProfileData.parse("worker", "1", str(path), tempfile.mkdtemp())
    return {op.name: op.calls for op in run.op_list_groupby_name}, run.steps_names


def test_the_plugin_reads_what_torch_profiler_reads(tmp_path):
    theirs, ours = torch_trace(tmp_path), sonde_trace(tmp_path)
    their_ops, their_steps = plugin_view(theirs)
    our_ops, our_steps = plugin_view(ours)
    assert len(their_ops) > 30  # convolution, pooling, linear, loss, backward, SGD
    assert our_ops == their_ops
    assert our_steps == their_steps == [str(n) for n in range(6)]
    # sonde's additions, the Python calls that hold an operator, are there
    # (as torch's with_stack traces name them), and the trace stays small.
    events = json.loads(ours.read_text())["traceEvents"]
    calls = {e["name"] for e in events if e.get("cat") == "python_function"}
    with open(LOOP) as f:
        line = next(n for n, text in enumerate(f, 1) if text.startswith("def train_step"))
    assert any(name.endswith("torch_steps_loop.py(%d): train_step" % line)
               for name in calls), calls
    assert os.path.getsize(str(ours)) <= 10 * os.path.getsize(str(theirs))


def test_sonde_step_ends_a_step_without_an_optimizer(tmp_path):
    _ops, steps = plugin_view(sonde_trace(tmp_path, "no-optimizer"))
    assert steps == [str(n) for n in range(6)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read().decode("utf-8"))


def test_tensorboard_serves_the_trace(tmp_path):
    """A real `tensorboard --logdir` on loopback lists sonde's run and
    serves its operator table, equal to the plugin's reading of torch's
    own trace."""
    theirs = torch_trace(tmp_path)
    ours = sonde_trace(tmp_path)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    os.rename(str(ours.parent), str(logdir / "sonde"))
    tensorboard = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    port = free_port()
    server = subprocess.Popen([tensorboard, "--logdir", str(logdir), "--host", "127.0.0.1",
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, universal_newlines=True)
    base = "http://127.0.0.1:%d/data/plugin/pytorch_profiler" % port
    try:
        # Ready when it says where it serves; the run is loaded when the
        # run list has it and says it is done loading.
        for line in server.stderr:
            if "http://127.0.0.1:%d" % port in line:
                break
        else:
            pytest.fail("tensorboard ended before serving (exit %s)" % server.wait())
        deadline = time.monotonic() + 300  # a bound, not a pace: it answers when loaded
        while True:
            runs = get_json(base + "/runs")
            if runs["runs"] == ["sonde"] and not runs["loading"]:
                break
            assert time.monotonic() < deadline, runs
            time.sleep(0.2)
        worker, = get_json(base + "/workers?run=sonde&view=Operator")
        span, = get_json(base + "/spans?run=sonde&worker=" + worker)
        table = get_json("%s/operation/table?run=sonde&worker=%s&span=%s&group_by=Operation"
                         % (base, worker, span))
    finally:
        server.terminate()
        server.wait()
        server.stderr.close()
    their_ops, _steps = plugin_view(theirs)
    assert {row["name"]: row["calls"] for row in table["data"]} == their_ops


def test_torch_steps_records_the_window_torch_schedule_records(tmp_path):
    """--torch-steps 2:3: exactly ProfilerStep#2-#4 (the 3rd to 5th steps),
    and the operators torch.profiler records with schedule(wait=2,
    warmup=0, active=3) of the same loop."""
    their_ops, their_steps = plugin_view(torch_trace(tmp_path, "2:3"))
    our_ops, our_steps = plugin_view(sonde_trace(tmp_path, options=["--torch-steps", "2:3"]))
    assert len(their_ops) > 30
    assert our_ops == their_ops
    assert our_steps == their_steps == ["2", "3", "4"]


def test_torch_steps_cycles_file_by_file(tmp_path):
    """--torch-steps 1:2:2 -o DIR: the two windows in two files, as torch
    writes them (steps 1-2 and 4-5), each with the operators of torch's
    file of the same cycle, in order of their names."""
    theirs = [plugin_view(path) for path in torch_traces(tmp_path, "1:2:2")]
    assert [steps for _ops, steps in theirs] == [["1", "2"], ["4", "5"]]
    folder = tmp_path / "sonde"
    r = run_sonde(["run", "--torch", "-f", "tensorboard", "-o", str(folder), "--torch-steps",
                   "1:2:2", LOOP], tmp_path)
    assert r.returncode == 0 and r.stdout == "trained\n", r.stderr
    names = sorted(os.listdir(str(folder)))
    assert len(names) == 2 and all(plugin_consts.WORKER_PATTERN.match(n) for n in names), names
    assert "--torch-steps cycle 2" in r.stderr
    ours = [plugin_view(folder / name) for name in names]
    assert ours == theirs


def test_torch_steps_in_a_chrome_trace(tmp_path):
    """-f chrome names the steps too, and holds the operators of the
    window only: as many as torch's trace of the same steps."""
    their_ops, _steps = plugin_view(torch_trace(tmp_path, "2:3"))
    r = run_sonde(["run", "--torch", "--torch-steps", "2:3", "-f", "chrome", "-o", "t.json",
                   LOOP], tmp_path)
    assert r.returncode == 0, r.stderr
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert [e["name"] for e in events if e.get("cat") == "step"] == [
        "ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    ops = {}
    for e in events:
        if e.get("cat") == "torch":
            ops[e["name"]] = ops.get(e["name"], 0) + 1
    for name, calls in their_ops.items():
        assert ops.get(name) == calls, name


def ops_by_step(text, column="# of Calls", value=int):
    """`sonde report --ops --by-step`'s table: {step: {operator name:
    calls}} (or another column's value), rows in no step under None."""
    steps = {}
    for _name, row in table(text)[1]:
        step = None if row["Step"] == "-" else int(row["Step"])
        steps.setdefault(step, {})[row["Name"]] = value(row[column])
    return steps


def test_report_ops_by_step_is_torch_profilers_table_of_each_step(tmp_path):
    """report --ops --by-step (from sonde run --torch -f json, no option
    asked at run time): each step's operators and regions with their
    calls, the same as torch.profiler's key_averages() of that step alone
    (a schedule of one step a cycle); summed, the plain table's calls."""
    theirs_file = tmp_path / "each.json"
    proc = subprocess.run([sys.executable, LOOP, "each-step", str(theirs_file)],
                          env=with_pkg_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(theirs_file.read_text())
    r = run_sonde(["run", "--torch", "-f", "json", "-o", "p.json", LOOP], tmp_path)
    assert r.returncode == 0 and r.stdout == "trained\n", r.stderr
    r = run_sonde(["report", "--ops", "--by-step", "-l", "0", "p.json"], tmp_path)
    assert r.returncode == 0, r.stderr
    ours = ops_by_step(r.stdout)
    assert len(theirs) == 6 and len(theirs[1]) > 30
    assert [ours.get(n) for n in range(6)] == theirs
    assert None not in ours  # the loop runs no operator outside a step
    r = run_sonde(["report", "--ops", "-l", "0", "p.json"], tmp_path)
    whole = {name: int(row["# of Calls"]) for name, row in table(r.stdout)[1]}
    summed = {}
    for step in ours.values():
        for name, calls in step.items():
            summed[name] = summed.get(name, 0) + calls
    assert summed == whole
    # An operator's self time, step by step, adds up to the plain table's
    # (both are its time less the operators counted in it).  The regions,
    # which sonde makes frames, are left out: step by step a region's self
    # time is torch's (less the operators in it), the plain table's the
    # tree's (less the Python calls in it too).
    r = run_sonde(["report", "--ops", "--by-step", "-l", "0", "p.json"], tmp_path)
    self_by_step = ops_by_step(r.stdout, "Self CPU", microseconds)
    r = run_sonde(["report", "--ops", "-l", "0", "p.json"], tmp_path)
    self_whole = {name: microseconds(row["Self CPU"]) for name, row in table(r.stdout)[1]}
    for name, us in self_whole.items():
        if name not in ("loss_and_grad", "Optimizer.step#SGD.step",
                        "Optimizer.zero_grad#SGD.zero_grad"):
            got = sum(step.get(name, 0) for step in self_by_step.values())
            assert abs(got - us) <= 0.002 * us + 7, (name, got, us)


def test_report_ops_by_step_needs_steps(tmp_path):
    """A profile with no steps (a program that never stepped), or with
    damaged ones: one line, saying how to get them, or what is wrong."""
    r = run_sonde(["run", "--torch", "-f", "json", "-o", "p.json", "-c", NO_STEP], tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_sonde(["report", "--ops", "--by-step", "p.json"], tmp_path)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr == ("sonde: this profile has no training steps: record it with sonde run "
                        "--torch -f json, on a program that steps an optimizer or calls "
                        "sonde.step()\n")
    # A damaged file: its steps' parts name no node, or are not lists.
    doc = json.loads((tmp_path / "p.json").read_text())
    for bad in ([[10 ** 6, 0, 1, 0.5, 0.5]], [[1, "0", 1, 0.5, 0.5]], [[1, 0, -1, 0.5, 0.5]],
                {"1": 2}):
        doc["torch_step_nodes"] = bad
        (tmp_path / "bad.json").write_text(json.dumps(doc))
        r = run_sonde(["report", "--ops", "--by-step", "bad.json"], tmp_path)
        assert r.returncode == 1 and r.stdout == "", r.stderr
        assert r.stderr.count("\n") == 1 and "torch_step_nodes" in r.stderr, r.stderr


NO_STEP = """
import torch
x = torch.ones(4, 4)
with torch.autograd.profiler.record_function("no_step"):
    for _ in range(3):
        x = (x @ x).relu()
"""


def test_torch_steps_without_a_step_records_the_whole_run(tmp_path):
    """A program that steps no optimizer (nor calls sonde.step()): the
    whole run, as torch.profiler records it, and a line saying so."""
    folder = tmp_path / "sonde"
    r = run_sonde(["run", "--torch", "--torch-steps", "2:3", "-f", "tensorboard", "-o",
                   str(folder), "-c", NO_STEP], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "sonde: --torch-steps: no step was seen" in r.stderr
    ours, steps = plugin_view(one_trace(folder))
    probe = tmp_path / "probe.py"
    probe.write_text("import collections, json\nfrom torch.profiler import profile\n"
                     "with profile() as prof:\n"
                     + "".join("    " + line + "\n" for line in NO_STEP.strip().split("\n"))
                     + "print(json.dumps(collections.Counter(e.name for e in prof.events() "
                     "if e.name.startswith('aten::'))))\n")
    proc = subprocess.run([sys.executable, str(probe)], env=with_pkg_env(),
                          stdout=subprocess.PIPE, universal_newlines=True)
    theirs = json.loads(proc.stdout.strip().split("\n")[-1])
    assert {name: calls for name, calls in ours.items() if name.startswith("aten::")} == theirs
    assert theirs["aten::mm"] == 3


def test_torch_steps_never_reached_writes_no_trace(tmp_path):
    """Fewer steps than the waiting ones: a line, no trace (it would hold
    nothing), and a failed exit."""
    folder = tmp_path / "sonde"
    r = run_sonde(["run", "--torch", "--torch-steps", "8:3", "-f", "tensorboard", "-o",
                   str(folder), LOOP], tmp_path)
    assert r.returncode == 1 and r.stdout == "trained\n", r.stderr
    assert ("sonde: --torch-steps: the program ran 6 steps, the first recorded would have "
            "been step 9 (ProfilerStep#8): no operators recorded, no trace written") in r.stderr
    assert os.listdir(str(folder)) == []


@pytest.mark.parametrize("spec", ["0", "3:-1", "a:b", "1:2:3:4", "", "2:", "1::1"])
def test_torch_steps_bad_spec(tmp_path, spec):
    r = run_sonde(["run", "--torch", "--torch-steps", spec, LOOP], tmp_path)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert "--torch-steps takes [WAIT:]ACTIVE[:REPEAT]" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, code, why", [
    (["--torch-steps", "2:3"], 2, "add --torch"),
    (["-f", "tensorboard", "-o", "t"], 2, "add --torch"),
    (["--torch", "-f", "tensorboard"], 2, "needs -o DIR"),
    (["--torch", "-f", "tensorboard", "-o", "a-file/t"], 1, "cannot make the folder"),
])
def test_tensorboard_bad_input(tmp_path, args, code, why):
    (tmp_path / "a-file").write_text("")
    r = run_sonde(["run"] + args + [LOOP], tmp_path)
    assert r.returncode == code and why in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


PROFILED_LOOP = """\
import runpy, sys
import sonde
sys.argv = [sys.argv[1]]
with sonde.Profile(torch_steps=(1, 2, 2)) as prof:
    runpy.run_path(sys.argv[0], run_name="__main__")
for k, (first, last) in enumerate(prof.torch_cycles()):
    prof.write("%s/api.%d.pt.trace.json" % (sys.argv[0] + ".out", k), "tensorboard",
               steps=(first, last))
prof.write(sys.argv[0] + ".out/all.json", "chrome")
print(prof.torch_cycles())
"""


def test_profile_torch_steps_writes_each_cycle_as_torch_does(tmp_path):
    """sonde.Profile(torch_steps=(1, 2, 2)) around the loop: its cycles are
    steps 1-2 and 4-5, and each cycle's trace holds torch's file's
    operators and steps for that cycle (schedule(wait=1, warmup=0,
    active=2, repeat=2)); its chrome trace holds both cycles."""
    theirs = [plugin_view(path) for path in torch_traces(tmp_path, "1:2:2")]
    loop = tmp_path / "loop.py"
    loop.write_text(open(LOOP).read())
    (tmp_path / "loop.py.out").mkdir()
    proc = subprocess.run([sys.executable, "-c", PROFILED_LOOP, str(loop)], env=with_pkg_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "trained\n[(1, 2), (4, 5)]\n", proc.stdout
    ours = [plugin_view(tmp_path / "loop.py.out" / ("api.%d.pt.trace.json" % k)) for k in (0, 1)]
    assert ours == theirs
    # write(path, "chrome"): both cycles' steps and operators in one trace
    events = json.loads((tmp_path / "loop.py.out" / "all.json").read_text())["traceEvents"]
    assert [e["name"] for e in events if e.get("cat") == "step"] == [
        "ProfilerStep#%d" % n for n in (1, 2, 4, 5)]
    ops = {}
    for e in events:
        if e.get("cat") == "torch":
            ops[e["name"]] = ops.get(e["name"], 0) + 1
    summed = {name: sum(view[0].get(name, 0) for view in theirs)
              for name in set().union(*(view[0] for view in theirs))}
    assert {name: n for name, n in ops.items() if name in summed} == summed
    # and the regions, which the plugin's operator table leaves out: one a step
    assert {name: n for name, n in ops.items() if name not in summed} == {
        "loss_and_grad": 4, "Optimizer.step#SGD.step": 4,
        "Optimizer.zero_grad#SGD.zero_grad": 4}


@pytest.mark.parametrize("steps", [(0,), (1, 0), (1, -2), (-1, 2), (1, 2, -1), "1:2", (1.5, 2),
                                   (True, 2)])
def test_profile_torch_steps_refuses_what_makes_no_sense(steps):
    check = ("import sonde\ntry:\n    sonde.Profile(torch_steps=%r)\nexcept ValueError as e:\n"
             "    print(e)\n" % (steps,))
    proc = subprocess.run([sys.executable, "-c", check], env=with_pkg_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("torch_steps takes (WAIT, ACTIVE) or (WAIT, ACTIVE, REPEAT), "
                                  "whole numbers with ACTIVE 1 or more"), proc.stdout
