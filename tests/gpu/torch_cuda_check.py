"""A check for a machine with a CUDA GPU (run by hand on a lent one; CI
never runs it): a small CNN trained on the GPU, profiled by `sonde run
--torch` and by torch.profiler in turn.  The names and call counts must
equal torch.profiler's with CPU activity (what sonde records); a second
reference with CPU and CUDA activity shows what torch saw on the GPU
(kernels, CUDA time, and the CUDA runtime's own events), which sonde does
not record yet, printed for the record.  Prints PASS or FAIL lines; exit status 1 on a
FAIL.

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
    if sys.argv[1] in ("reference", "reference-cuda"):
        from torch.profiler import profile, ProfilerActivity
        activities = [ProfilerActivity.CPU]
        if sys.argv[1] == "reference-cuda":
            activities.append(ProfilerActivity.CUDA)
        with profile(activities=activities) as prof:
            body()
        rows = []
        for e in prof.key_averages():
            rows.append({"name": e.key, "count": e.count,
                         "device": str(getattr(e, "device_type", "")),
                         "cuda_us": getattr(e, "self_device_time_total",
                                            getattr(e, "self_cuda_time_total", 0))})
        with open(sys.argv[2], "w") as f:
            json.dump(rows, f)
    else:
        body()

main()
'''


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
    refs = {}
    for mode in ("reference", "reference-cuda"):
        path = os.path.join(tmp, mode + ".json")
        subprocess.run([sys.executable, prog, mode, path], check=True)
        with open(path) as f:
            refs[mode] = json.load(f)
    cpu = {r["name"]: r["count"] for r in refs["reference"]}
    gpu = [r for r in refs["reference-cuda"] if r["cuda_us"]]
    prof = os.path.join(tmp, "sonde.json")
    env = dict(os.environ, SONDE_PYTHON=sys.executable)
    run = subprocess.run([sonde, "run", "--torch", "-f", "json", "-o", prof, prog, "plain"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    print(run.stderr[-3000:])
    if run.returncode != 0:
        print("FAIL sonde run --torch exited %d" % run.returncode)
        return 1
    with open(prof) as f:
        doc = json.load(f)
    got = {}
    for node in doc["nodes"][1:]:
        fn = doc["functions"][node[0]] if node[0] >= 0 else None
        if fn and fn["kind"] == "torch":
            got[fn["name"]] = got.get(fn["name"], 0) + node[2]
    same = {k for k in cpu if got.get(k) == cpu[k]}
    differ = sorted(k for k in set(cpu) | set(got) if got.get(k) != cpu.get(k))
    print("%s CPU-side operators: %d named by torch.profiler, %d by sonde, %d with equal counts"
          % ("PASS" if not differ else "FAIL", len(cpu), len(got), len(same)))
    for k in differ[:20]:
        print("   %-50s torch %s, sonde %s" % (k, cpu.get(k), got.get(k)))
    print("INFO torch.profiler saw %d rows with CUDA time (%.0f us in all); sonde records no "
          "CUDA activity yet" % (len(gpu), sum(r["cuda_us"] for r in gpu)))
    for r in sorted(gpu, key=lambda r: -r["cuda_us"])[:8]:
        print("   %-60s %8.0f us x%d" % (r["name"][:60], r["cuda_us"], r["count"]))
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
