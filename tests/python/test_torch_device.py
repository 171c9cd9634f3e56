"""sonde run --torch with a GPU's events: kernels beneath the operators
that launched them, CUDA time and memory columns in `report --ops`, the
kernels' track in the Chrome trace.  This machine has no GPU, so the
program (torch_device_events.py) adds to torch's real CPU recording the
events a CUDA device adds (kernels linked to their operators by
correlation id, a runtime call, a GPU allocation, a kernel of no
operator); torch's own parser and key_averages() read the same events and
are the reference.  tests/gpu/torch_cuda_check.py checks the same on a
real GPU when one is lent."""

import json
import os
import pstats

import pytest

from conftest import HERE, run_sonde
from torch_table import microseconds, nbytes, table

torch = pytest.importorskip("torch", reason="torch is not installed in the test environment "
                            "(make test installs torch==2.13.0 for Python 3.11)")

PROGRAM = os.path.join(HERE, "torch_device_events.py")


def record(tmp_path, fmt, *extra):
    """sonde run --torch of the program: (its output file, torch's
    reference, the run)."""
    out, ref = tmp_path / ("device." + fmt), tmp_path / ("reference-%s.json" % fmt)
    r = run_sonde(["run", "--torch", "-f", fmt, "-o", str(out)] + list(extra) +
                  [PROGRAM, str(ref)], tmp_path)
    assert r.returncode == 0, r.stderr
    return out, json.loads(ref.read_text()), r


def test_ops_table_has_torchs_cuda_columns(tmp_path):
    """Self CUDA, CUDA total, CUDA time avg, CUDA Mem and Self CUDA Mem of
    every row (operators, the runtime call, each kernel, the kernel no
    operator launched) are key_averages()' of the same events; the headers
    are its table's, and sorted by self_cuda_time_total its order."""
    out, ref, r = record(tmp_path, "json", "--torch-memory")
    assert "1 GPU kernels (0.009 ms on the GPU) were launched by no operator" in r.stderr
    got = run_sonde(["report", str(out), "--ops", "-l", "0", "-s", "self_cuda_time_total"],
                    tmp_path)
    assert got.returncode == 0, got.stderr
    want_headers, want_rows = table(ref["table"])
    headers, rows = table(got.stdout)
    assert headers == want_headers
    cells = dict(rows)
    # torch's "[memory]" row (allocations outside any operator) sonde has
    # not: its memory is the Python lines' (sonde mem)
    want = {name: row for name, row in ref["rows"].items() if name != "[memory]"}
    assert set(cells) == set(want)
    for name, want in want.items():
        cell = cells[name]
        assert int(cell["# of Calls"]) == want["count"], name
        assert microseconds(cell["Self CUDA"]) == pytest.approx(want["self_us"], abs=1e-3), name
        assert microseconds(cell["CUDA total"]) == pytest.approx(want["total_us"], abs=1e-3), name
        assert microseconds(cell["CUDA time avg"]) == pytest.approx(
            want["total_us"] / want["count"], abs=1e-3), name
        assert nbytes(cell["CUDA Mem"]) == want["mem"], name
        assert nbytes(cell["Self CUDA Mem"]) == want["self_mem"], name
    busy = lambda rows: [name for name, cell in rows if microseconds(cell["Self CUDA"]) > 0]
    assert busy(rows) == busy(want_rows) and len(busy(rows)) == 5
    total = [line for line in got.stdout.splitlines() if line.startswith("Self CUDA time total")]
    assert total == [line for line in ref["table"].splitlines()
                     if line.startswith("Self CUDA time total")]


def test_kernels_lie_beneath_the_operators_that_launched_them(tmp_path):
    """In the tree, each kernel is a child of its operator's node (the
    orphan of its thread's root), with one call and its GPU time in
    "torch_device_ns", none on the CPU; the .prof file names kernels
    ('~torch', 2, NAME)."""
    out, ref, _r = record(tmp_path, "json")
    doc = json.loads(out.read_text())
    funcs, nodes = doc["functions"], doc["nodes"]
    device_ns = dict(doc["torch_device_ns"])
    kernels = {name: end - start for name, start, end in ref["kernels"]}
    launched_by = {"ampere_sgemm_64x32_nn": "aten::addmm",
                   "elementwise_relu_kernel": "aten::relu", "ncclKernel_AllReduce": None}
    seen = {}
    for i, (f, parent, calls, total, self_) in enumerate(n[:5] for n in nodes[1:]):
        i += 1
        if f < 0 or funcs[f]["kind"] != "torch" or funcs[f]["line"] != 2:
            continue
        name = funcs[f]["name"]
        assert funcs[f]["file"] == "~torch"
        up = nodes[parent][0]
        seen[name] = funcs[up]["name"] if up >= 0 else None
        assert (calls, total, self_) == (1, 0, 0) and device_ns[i] == kernels[name]
    assert seen == launched_by
    assert set(device_ns) == {i for i, n in enumerate(nodes) if n[0] >= 0 and
                              funcs[n[0]]["kind"] == "torch" and funcs[n[0]]["line"] == 2}
    prof, _ref, _r = record(tmp_path, "pstats")
    stats = pstats.Stats(str(prof)).stats
    assert {key[2]: value[1] for key, value in stats.items()
            if key[:2] == ("~torch", 2)} == {name: 1 for name in kernels}


def test_chrome_trace_has_a_kernel_track(tmp_path):
    """-f chrome: each kernel on track "GPU 0" / "stream 7" (torch's
    device and stream), lasting what it lasted, as far after its
    operator's start as it was (the CPU slices went through sonde's clock
    conversion: within a microsecond)."""
    out, ref, _r = record(tmp_path, "chrome")
    events = json.loads(out.read_text())["traceEvents"]
    names = {(e["name"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["pid"] == 0}
    assert names == {("process_name", "GPU 0"), ("thread_name", "stream 7")}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert [(e["pid"], e["tid"]) for e in kernels] == [(0, 7)] * 3
    by_name = {e["name"]: e for e in kernels}
    ops = {}
    for e in events:
        if e.get("cat") == "torch":
            ops.setdefault(e["name"], e["ts"])
    for name, start, end in ref["kernels"]:
        assert by_name[name]["dur"] == pytest.approx((end - start) / 1e3, abs=1e-3)
    name, start, _end = ref["kernels"][0]
    gap = (start - ref["ops"]["aten::addmm"]) / 1e3
    assert by_name[name]["ts"] - ops["aten::addmm"] == pytest.approx(gap, abs=1.0)


def test_kernel_goes_to_the_operator_that_made_the_launch_call():
    """Where several CPU events share a kernel's correlation id (a runtime
    call made outside any operator carries an id of CUPTI's count; an
    overhead record of CUPTI's sits on no thread), the kernel is the
    launching operator's alone: the one on the launch call's thread whose
    span holds the call, as torch.profiler's own tree nests it."""
    import sys
    from conftest import PKG
    from torch_device_events import DEVICE, DeviceEvent
    sys.path.insert(0, PKG)
    try:
        from sonde._torch import _operators
    finally:
        sys.path.remove(PKG)
    thread = 4242
    events = [
        DeviceEvent("cudaGetDeviceCount", 0, 10, DEVICE.CPU, tid=thread, resource=thread,
                    correlation_id=5),
        DeviceEvent("Lazy Function Loading", 30, 35, DEVICE.CPU, resource=0, correlation_id=5),
        DeviceEvent("aten::add", 20, 40, DEVICE.CPU, tid=thread, resource=thread,
                    correlation_id=5),
        DeviceEvent("cudaLaunchKernel", 25, 30, DEVICE.CPU, 5, tid=thread, resource=thread),
        DeviceEvent("add_kernel", 50, 60, DEVICE.CUDA, 5),
        DeviceEvent("Optimizer.step", 45, 70, DEVICE.CUDA, is_user_annotation=True),
    ]

    class Result:
        def events(self):
            return events

    ops = _operators(torch, Result(), {}, False)
    assert ops.names == ["cudaGetDeviceCount", "Lazy Function Loading", "aten::add",
                         "cudaLaunchKernel"]
    assert ops.kernels == [(2, "add_kernel", 50, 60, 0, 7)] and ops.unlaunched == []
