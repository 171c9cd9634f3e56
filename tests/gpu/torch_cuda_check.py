"""A check for a machine with a CUDA GPU (run by hand on a lent one; CI
never runs it): a small CNN trained on the GPU, profiled by `sonde run
--torch` and by torch.profiler (CPU and CUDA activity) in turn.  The CPU
operators' names and counts, and each GPU kernel's launches, must equal
torch.profiler's (less what torch.profiler records of itself: the
cudaDeviceSynchronize of its stop, the GPU's spans of record_function
regions); the operators with GPU time must be the same, and the whole GPU
time within a fifth of torch's (two runs: kernel times vary), not
counting the kernels torch also credits to CUPTI's overhead records; each
operator's GPU memory (--torch-memory) must be torch's (profile_memory;
regions aside); the Chrome trace must hold every kernel on a GPU track.
Prints PASS or FAIL lines; exit status 1 on a FAIL.

    python3 tests/gpu/torch_cuda_check.py [SONDE]   (default build/bin/sonde)
"""

import json
import os
import subprocess
import sys
import tempfile

PROGRAM = r'''
import json, sys
import torch
import torch.nn as nn

def model():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 16 * 16, 10)).cuda()

def train(net, opt, x, y, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()

def body():
    torch.manual_seed(0)
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    train(net, opt, x, y, 5)

def main():
    # sonde --torch records from the end of `import torch` on: the
    # reference profiles the same span, everything after the import.
    if sys.argv[1] == "reference":
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     profile_memory=True) as prof:
            body()
        rows = []
        for e in prof.key_averages():
            rows.append({"name": e.key, "count": e.count,
                         "device": str(getattr(e, "device_type", "")),
                         "annotation": bool(e.is_user_annotation),
                         "cuda_mem": e.device_memory_usage,
                         "cuda_us": e.self_device_time_total})
        # CUPTI's records of its own overhead sit on no thread
        cpu = torch._C._autograd.DeviceType.CPU
        overhead = sorted({e.name() for e in prof.profiler.kineto_results.events()
                           if e.device_type() == cpu and e.device_resource_id() == 0})
        with open(sys.argv[2], "w") as f:
            json.dump({"rows": rows, "overhead": overhead}, f)
    else:
        body()

main()
'''


def kernels_of(doc):
    """sonde's JSON: {kernel name: launches}, {operator: self GPU us}."""
    launches, busy = {}, {}
    device_ns = dict(doc.get("torch_device_ns", []))
    for i, node in enumerate(doc["nodes"][1:], 1):
        fn = doc["functions"][node[0]] if node[0] >= 0 else None
        if fn and fn["kind"] == "torch" and fn["line"] == 2:
            launches[fn["name"]] = launches.get(fn["name"], 0) + node[2]
            up = doc["nodes"][node[1]][0]
            if up >= 0:
                name = doc["functions"][up]["name"]
                busy[name] = busy.get(name, 0) + device_ns.get(i, 0) / 1e3
    return launches, busy


def main():
    sonde = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "bin", "sonde")
    import torch
    print("torch %s, CUDA available: %s, device: %s" % (
        torch.__version__, torch.cuda.is_available(),
        torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-"))
    if not torch.cuda.is_available():
        print("FAIL no CUDA device")
        return 1
    tmp = tempfile.mkdtemp()
    prog = os.path.join(tmp, "cnn_cuda.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    path = os.path.join(tmp, "reference.json")
    subprocess.run([sys.executable, prog, "reference", path], check=True)
    with open(path) as f:
        ref = json.load(f)
    rows, overhead = ref["rows"], set(ref["overhead"])
    # kernels, memsets and copies; not the GPU's spans of record_function regions
    cuda = [r for r in rows if "CUDA" in r["device"] and not r["annotation"]]
    # torch's "[memory]" row (allocations outside any operator) sonde has not
    cpu = {r["name"]: r["count"] for r in rows
           if "CUDA" not in r["device"] and r["name"] != "[memory]"}
    cpu["cudaDeviceSynchronize"] -= 1  # torch.profiler's own, as it stops
    want_kernels = {r["name"]: r["count"] for r in cuda}
    # torch credits a kernel to its operator and also to any overhead
    # record of CUPTI's that has the operator's correlation id
    want_busy = {r["name"]: r["cuda_us"] for r in rows
                 if "CUDA" not in r["device"] and r["cuda_us"] and r["name"] not in overhead}
    prof = os.path.join(tmp, "sonde.json")
    trace = os.path.join(tmp, "sonde.trace.json")
    env = dict(os.environ, SONDE_PYTHON=sys.executable)
    for fmt, out, more in (("json", prof, ["--torch-memory"]), ("chrome", trace, [])):
        run = subprocess.run([sonde, "run", "--torch", "-f", fmt, "-o", out] + more +
                             [prog, "plain"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        print(run.stderr[-1500:])
        if run.returncode != 0:
            print("FAIL sonde run --torch -f %s exited %d" % (fmt, run.returncode))
            return 1
    with open(prof) as f:
        doc = json.load(f)
    got = {}
    for node in doc["nodes"][1:]:
        fn = doc["functions"][node[0]] if node[0] >= 0 else None
        if fn and fn["kind"] == "torch" and fn["line"] != 2:
            got[fn["name"]] = got.get(fn["name"], 0) + node[2]
    failed = 0
    differ = sorted(k for k in set(cpu) | set(got) if got.get(k) != cpu.get(k))
    failed += report(not differ, "CPU-side operators: %d named by torch.profiler, %d by sonde"
                     % (len(cpu), len(got)), differ, cpu, got)
    launches, busy = kernels_of(doc)
    differ = sorted(k for k in set(want_kernels) | set(launches)
                    if launches.get(k) != want_kernels.get(k))
    failed += report(not differ, "GPU kernels: %d kinds, %d launches by torch.profiler, %d kinds "
                     "by sonde" % (len(want_kernels), sum(want_kernels.values()), len(launches)),
                     differ, want_kernels, launches)
    total, want_total = sum(busy.values()), sum(want_busy.values())
    same = set(busy) == set(want_busy) and abs(total - want_total) <= 0.2 * want_total
    failed += report(same, "operators with GPU time: %d (torch %d); GPU time %.0f us (torch "
                     "%.0f us)" % (len(busy), len(want_busy), total, want_total),
                     sorted(set(busy) ^ set(want_busy)), want_busy, busy)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    on_track = sum(1 for e in events if e.get("cat") == "kernel")
    failed += report(on_track == sum(want_kernels.values()), "kernels on the trace's GPU "
                     "tracks: %d (torch launched %d)" % (on_track, sum(want_kernels.values())),
                     [], {}, {})
    from torch.autograd.profiler_util import _format_memory
    # torch also counts a region's releases outside any operator; sonde
    # leaves them out (README), as it leaves out the "[memory]" row
    ops = set(cpu) - {r["name"] for r in rows if r["annotation"]}
    want_mem = {r["name"]: _format_memory(r["cuda_mem"]) for r in rows
                if r["name"] in ops and r["cuda_mem"]}
    mem = {name: cells["CUDA Mem"] for name, cells in ops_rows(sonde, prof).items()
           if name in ops and cells["CUDA Mem"] != _format_memory(0)}
    differ = sorted(k for k in set(want_mem) | set(mem) if mem.get(k) != want_mem.get(k))
    failed += report(not differ, "operators' GPU memory (CUDA Mem, --torch-memory): %d with "
                     "some (torch %d)" % (len(mem), len(want_mem)), differ, want_mem, mem)
    table = subprocess.run([sonde, "report", prof, "--ops", "-l", "12", "-s",
                            "self_cuda_time_total"], stdout=subprocess.PIPE,
                           universal_newlines=True)
    print(table.stdout)
    return 1 if failed else 0


def ops_rows(sonde, prof):
    """{name: {header: cell}} of sonde's whole --ops table."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from torch_table import table
    text = subprocess.run([sonde, "report", prof, "--ops", "-l", "0"], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout
    return dict(table(text)[1])


def report(ok, what, differ, want, got):
    print("%s %s" % ("PASS" if ok else "FAIL", what))
    for k in differ[:20]:
        print("   %-60s torch %s, sonde %s" % (k[:60], want.get(k), got.get(k)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
