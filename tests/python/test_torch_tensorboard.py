"""sonde run --torch -f tensorboard: the trace TensorBoard's PyTorch
profiler plugin (torch-tb-profiler) reads, checked through the plugin's
own parser and through a real `tensorboard --logdir` over HTTP against
torch.profiler's own trace of the same training loop and steps
(torch_steps_loop.py, written by tensorboard_trace_handler): operator
names and call counts equal, ProfilerStep#N equal to the steps the loop
ran, the file named as the handler names its own and within ten times
its size.

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


def torch_trace(tmp_path):
    folder = tmp_path / "torch"
    proc = subprocess.run([sys.executable, LOOP, "torch", str(folder)], env=with_pkg_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    return one_trace(folder)


def sonde_trace(tmp_path, *args):
    folder = tmp_path / "sonde"
    r = run_sonde(["run", "--torch", "-f", "tensorboard", "-o", str(folder), LOOP] + list(args),
                  tmp_path)
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
    assert any(name.endswith("torch_steps_loop.py(35): train_step") for name in calls), calls
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


@pytest.mark.parametrize("args, code, why", [
    (["-f", "tensorboard", "-o", "t"], 2, "add --torch"),
    (["--torch", "-f", "tensorboard"], 2, "needs -o DIR"),
    (["--torch", "-f", "tensorboard", "-o", "a-file/t"], 1, "cannot make the folder"),
])
def test_tensorboard_bad_input(tmp_path, args, code, why):
    (tmp_path / "a-file").write_text("")
    r = run_sonde(["run"] + args + [LOOP], tmp_path)
    assert r.returncode == code and why in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
