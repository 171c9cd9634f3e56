"""A distributed training job as one profile: `sonde run --torch
--subprocesses` of torchrun starting two DistributedDataParallel ranks on
the CPU (gloo).  Each rank is a part under "process PID (rank R: command)";
the reference is torch.profiler inside each rank of the same job run bare:
the collectives DDP's backward pass makes (c10d::allreduce_) counted per
rank are equal, and `report --ops --by-process` shows each rank's and
their sum."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import SONDE, run_sonde

torch = pytest.importorskip("torch", reason="torch is not installed in the test environment "
                            "(make test installs torch==2.13.0 for Python 3.11)")

TRAIN = r'''
import json, os, sys
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

def train(steps):
    model = DistributedDataParallel(torch.nn.Linear(64, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(16, 64)).sum().backward()
        opt.step()

if __name__ == "__main__":
    dist.init_process_group("gloo")
    rank, steps = dist.get_rank(), 5  # (DDP's ranks run the same collectives)
    if len(sys.argv) > 1:  # the reference: torch.profiler in this rank
        from torch.profiler import profile
        with profile() as prof:
            train(steps)
        calls = sum(e.count for e in prof.key_averages() if e.key == "c10d::allreduce_")
        with open(os.path.join(sys.argv[1], "rank-%d.json" % rank), "w") as f:
            json.dump({"pid": os.getpid(), "allreduce": calls}, f)
    else:
        train(steps)
        sys.stdout.write("rank %d pid %d\n" % (rank, os.getpid()))  # one write: ranks share stdout
        sys.stdout.flush()
    dist.destroy_process_group()
'''

TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "train.py"]


def calls_by_process(doc, name):
    """{process frame's label: calls of the function `name` beneath it}."""
    funcs, nodes = doc["functions"], doc["nodes"]
    label_of = {i: f["name"] for i, f in enumerate(funcs) if f["name"].startswith("process ")}
    wanted = {i for i, f in enumerate(funcs) if f["name"] == name}
    calls = {}
    for node in nodes[1:]:
        if node[0] not in wanted:
            continue
        up = node[1]
        for _ in range(len(nodes)):
            if up <= 0 or nodes[up][0] in label_of:
                break
            up = nodes[up][1]
        label = label_of.get(nodes[up][0]) if up > 0 else None
        calls[label] = calls.get(label, 0) + node[2]
    return calls


def reference(tmp_path):
    """train.py written in tmp_path, and run bare under torchrun with
    torch.profiler in each rank: [rank 0's c10d::allreduce_ calls, rank 1's]."""
    (tmp_path / "train.py").write_text(TRAIN)
    bare = subprocess.run([sys.executable] + TORCHRUN + [str(tmp_path)], cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600)
    assert bare.returncode == 0, bare.stderr
    return [json.loads((tmp_path / ("rank-%d.json" % r)).read_text())["allreduce"]
            for r in (0, 1)]


def test_a_ddp_job_is_one_profile_with_a_part_per_rank(tmp_path):
    truth = reference(tmp_path)
    assert truth[0] > 0 and truth[1] == truth[0], truth

    proc = run_sonde(["run", "--torch", "--subprocesses", "-f", "json", "-o", "job.json"] +
                     TORCHRUN, tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    pids = {int(r): int(p) for r, p in re.findall(r"rank (\d) pid (\d+)", proc.stdout)}
    assert sorted(pids) == [0, 1], proc.stdout
    doc = json.loads((tmp_path / "job.json").read_text())
    calls = calls_by_process(doc, "c10d::allreduce_")
    for rank in (0, 1):
        label = [l for l in calls if l and l.startswith("process %d (rank %d: " % (pids[rank], rank))]
        assert len(label) == 1 and calls[label[0]] == truth[rank], (rank, calls, truth)
    assert sum(calls.values()) == sum(truth)
    assert re.search(r"^processes: 3, the program and 2 children", proc.stderr, re.M), proc.stderr

    # report --ops --by-process: each rank's table, then the sum
    report = run_sonde(["report", "job.json", "--ops", "--by-process", "-l", "0"], tmp_path)
    assert report.returncode == 0, report.stderr
    rows = re.findall(r"^ +c10d::allreduce_ .* (\d+) *$", report.stdout, re.M)
    assert [int(n) for n in rows] == truth + [sum(truth)], report.stdout
    heads = re.findall(r"^(process \d+ \(rank \d|process \d+ \(|all processes)", report.stdout,
                       re.M)
    assert heads[-1] == "all processes" and len(heads) == 4, report.stdout


def test_sonde_as_the_program_torchrun_starts_writes_a_file_per_rank(tmp_path):
    """`torchrun --no-python sonde run --torch -o rank{rank}.json train.py`:
    each rank's sonde writes its own file, {rank} its RANK; each holds that
    rank's collectives, as torch.profiler counts them in the job run bare."""
    truth = reference(tmp_path)
    launch = [a for a in TORCHRUN if a != "train.py"] + ["--no-python", SONDE, "run", "--torch",
                                                          "-f", "json", "-o", "rank{rank}.json",
                                                          "train.py"]
    env = dict(os.environ, SONDE_PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    job = subprocess.run([sys.executable] + launch, cwd=str(tmp_path), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=600)
    assert job.returncode == 0, job.stderr
    for rank in (0, 1):
        doc = json.loads((tmp_path / ("rank%d.json" % rank)).read_text())
        assert sum(calls_by_process(doc, "c10d::allreduce_").values()) == truth[rank], rank
    # outside torchrun, {rank} has nothing to stand for: one line
    alone = run_sonde(["run", "-o", "x{rank}.json", "train.py"], tmp_path)
    assert alone.returncode == 2 and "{rank} is the process's rank" in alone.stderr, alone.stderr
