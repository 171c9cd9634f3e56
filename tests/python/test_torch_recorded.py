"""sonde run --torch on a real GPU recording, replayed (torch_recorded.py):
a small CNN's five training steps as torch.profiler recorded them on an
NVIDIA H200 (torch 2.11, CUDA 13), with what a real GPU adds that a
synthetic event list lacked: memsets and copies, kernels of cuBLAS and
cuDNN, the GPU's spans of record_function regions, and CUPTI's records
of its own overhead whose correlation ids equal operators'.  torch's
parser reads the same events and is the reference."""

import json
from collections import Counter

import pytest

from conftest import HERE, run_sonde
from pages import browser, open_page, view  # noqa: F401 (browser: a fixture)
from torch_table import microseconds, table

torch = pytest.importorskip("torch", reason="torch is not installed in the test environment "
                            "(make test installs torch==2.13.0 for Python 3.11)")

PROGRAM = HERE + "/torch_recorded.py"


def replay(tmp_path, fmt):
    out, ref = tmp_path / ("replay." + fmt), tmp_path / "reference.json"
    r = run_sonde(["run", "--torch", "-f", fmt, "-o", str(out), PROGRAM, str(ref)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "sonde: --torch" not in r.stderr  # every kernel found its operator
    return out, json.loads(ref.read_text())


def test_replay_is_the_recording(tmp_path):
    """The replayed events, read by this machine's torch, give the figures
    torch printed on the GPU machine: every CPU row's calls and Self CUDA."""
    _, ref = replay(tmp_path, "json")
    on_gpu = {r["name"]: r for r in ref["on_gpu"] if r["device_type"] == "CPU"}
    assert len(on_gpu) == 116
    for name, row in on_gpu.items():
        assert ref["as_torch"][name]["count"] == row["count"], name
        assert ref["as_torch"][name]["self_us"] == pytest.approx(row["self_us"], abs=1e-3), name


def test_ops_table_is_torchs_with_each_kernel_under_its_operator(tmp_path):
    """Every row of `report --ops` (operators, runtime calls, kernels,
    memsets) has torch's calls, Self CUDA, CUDA total and CUDA time avg,
    the table its headers and Self CUDA time total, where torch credits
    each kernel to its operator alone.  torch also credits it to the
    CUPTI overhead record that shares the operator's correlation id
    ("Lazy Function Loading": 185 us of GPU time that ran elsewhere, and
    every caller's total with it); sonde does not."""
    out, ref = replay(tmp_path, "json")
    assert ref["as_torch"]["Lazy Function Loading"]["self_us"] > 100
    got = run_sonde(["report", str(out), "--ops", "-l", "0", "-s", "self_cuda_time_total"],
                    tmp_path)
    assert got.returncode == 0, got.stderr
    want_headers, _ = table(ref["table"])
    headers, rows = table(got.stdout)
    assert headers == [h for h in want_headers if "Mem" not in h]  # no --torch-memory
    cells = dict(rows)
    assert set(cells) == set(ref["rows"])
    for name, want in ref["rows"].items():
        cell = cells[name]
        assert int(cell["# of Calls"]) == want["count"], name
        assert microseconds(cell["Self CUDA"]) == pytest.approx(want["self_us"], abs=1e-3), name
        assert microseconds(cell["CUDA total"]) == pytest.approx(want["total_us"], abs=1e-3), name
    assert microseconds(cells["Lazy Function Loading"]["Self CUDA"]) == 0
    total = [line for line in got.stdout.splitlines() if line.startswith("Self CUDA time total")]
    assert total == [line for line in ref["table"].splitlines()
                     if line.startswith("Self CUDA time total")]


def test_trace_has_every_kernel_and_no_region_span(tmp_path):
    """-f chrome: a slice for each of the 169 kernels, memsets and copies,
    on its device's and stream's track, as many on each as were recorded
    there, each track named once and the GPU once; the regions' GPU spans
    are not kernels."""
    from torch_recorded import load
    out, _ = replay(tmp_path, "chrome")
    events = json.loads(out.read_text())["traceEvents"]
    got = Counter((e["pid"], e["tid"]) for e in events if e.get("cat") == "kernel")
    want = Counter((e["device_index"], e["device_resource_id"]) for e in load()["events"]
                   if e["device_type"] == "CUDA" and not e.get("is_user_annotation"))
    assert got == want and sum(want.values()) == 169 and len(want) == 3
    named = [(e["name"], e["pid"], e.get("tid")) for e in events
             if e.get("ph") == "M" and e["pid"] == 0]
    assert sorted(named) == [("process_name", 0, None)] + sorted(
        ("thread_name", 0, stream) for _device, stream in want)


def test_page_weighs_the_frames_by_gpu_time(browser, tmp_path):
    """sonde view's "weigh: GPU time": the frames' widths are GPU time, the
    whole what torch's table calls Self CUDA time total, each operator's
    frames together its CUDA total in torch's figures, each frame as wide
    as its share; without GPU time the choice is hidden."""
    out, ref = replay(tmp_path, "json")
    page = view(tmp_path, out.name)
    tab = open_page(browser, page, "view=icicle&weight=gpu")
    assert tab.is_visible("#weight")
    frames = tab.evaluate("window.sondeView.frames()")
    tab.close()
    whole = frames[0]
    want = microseconds(next(line for line in ref["table"].splitlines()
                             if line.startswith("Self CUDA time total")).split(": ")[1])
    assert whole["name"] == "all" and whole["total"] * 1e6 == pytest.approx(want, abs=1e-3)
    for name in ("aten::addmm", "aten::cudnn_batch_norm", "aten::convolution_backward",
                 "aten::mm"):
        got = sum(f["total"] for f in frames if f["name"] == name)
        assert got * 1e6 == pytest.approx(ref["rows"][name]["total_us"], abs=1e-3), name
    for f in frames:
        assert abs(f["w"] - whole["w"] * f["total"] / whole["total"]) <= 1, f
    (tmp_path / "plain.py").write_text("print(sum(range(10)))\n")
    r = run_sonde(["run", "-f", "json", "-o", "plain.json", "plain.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    plain = open_page(browser, view(tmp_path, "plain.json"), "weight=gpu")
    assert not plain.is_visible("#weight")
    plain.close()
