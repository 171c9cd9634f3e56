"""Plain-torch models for the --torch tests, and a driver that runs one.

    python torch_workloads.py WORKLOAD OUT_JSON [reference [with_stack] [shapes]]

runs WORKLOAD (an MLP's inference, a small CNN's, a CNN training step with
backward and an SGD step, a record_function-labelled loop, an MLP on two
threads) and writes to
OUT_JSON what the machine did meanwhile (CPU time and time spent waiting
for a CPU, from /proc/self/schedstat).  With `reference`, the workload runs
inside torch.profiler.profile (CPU activity, started right after `import
torch`, where `sonde run --torch` starts), and OUT_JSON also gets
key_averages(): each operator's count and self CPU time, the nesting of
record_function regions, and with `with_stack`, the Python caller of
each top-level operator, and with `shapes` (record_shapes=True) the
counts of key_averages(group_by_input_shape=True).
"""

import json
import re
import sys

import torch
from torch import nn
from torch.autograd.profiler import record_function

torch.set_num_threads(1)  # one intra-op thread: steadier timings on a shared machine


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


def mlp():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(256, 256)
    with torch.no_grad():
        for _ in range(30):
            model(x)


def cnn():
    torch.manual_seed(0)
    model = CNN().eval()
    x = torch.randn(16, 3, 32, 32)
    with torch.no_grad():
        for _ in range(30):
            model(x)


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def training():
    torch.manual_seed(0)
    model = CNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    for _ in range(15):
        train_step(model, opt, x, y)


def labelled():
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(128, 256)
    for step in range(4):
        with record_function("step"):
            with record_function("forward"):
                out = model(x)
            with record_function("loss"):
                loss = out.square().mean()
            loss.backward()


def threads():
    """Operators on the main thread and on a Python thread it starts (which
    torch.profiler, following the thread that started it, does not see)."""
    import threading
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(64, 256)

    def worker():
        with torch.no_grad():
            for _ in range(3):
                model(x)

    t = threading.Thread(target=worker)
    t.start()
    for _ in range(3):
        model(x).sum().backward()
    t.join()


WORKLOADS = {"mlp": mlp, "cnn": cnn, "training": training, "labelled": labelled,
             "threads": threads}


def schedstat():
    """(CPU ns, ns waited for a CPU) of this process's main thread."""
    try:
        with open("/proc/self/schedstat") as f:
            ran, waited = f.read().split()[:2]
        return int(ran), int(waited)
    except (OSError, ValueError):
        return 0, 0


def regions_nesting(events):
    """(region, enclosing region or None) pairs of record_function regions."""
    pairs = set()
    for e in events:
        if not e.is_user_annotation:
            continue
        up = e.cpu_parent
        while up is not None and not up.is_user_annotation:
            up = up.cpu_parent
        pairs.add((e.name, up.name if up is not None else None))
    return sorted(pairs, key=str)


# What torch's Python tracer names its events (torch/csrc/profiler/
# python_tracer): "path(line): name" for a Python call, "<built-in ...>"
# for a C function, "nn.Module: Name_N" for a module's call.
_PYTHON_EVENT = re.compile(r"\(\d+\): |^<built-in |^<method |^nn\.Module: ")


def is_python_function(e):
    """Whether e is a with_stack Python event: FunctionEvent's own flag
    where it has one (torch 2.13), else the name torch's Python tracer
    gives such events (torch 2.11's FunctionEvent has no flag)."""
    flag = getattr(e, "is_python_function", None)
    if flag is not None:
        return flag
    return not e.is_user_annotation and _PYTHON_EVENT.search(e.name) is not None


def callers(events):
    """(operator, its Python caller's file base name, first line and name)
    of every top-level operator (in no other), from with_stack's events:
    the nearest enclosing Python function event named "path(line): name"
    (C functions and modules are named otherwise)."""
    found = set()
    for e in events:
        if is_python_function(e) or e.is_user_annotation:
            continue
        up, caller = e.cpu_parent, None
        while up is not None and caller is None:
            if not (is_python_function(up) or up.is_user_annotation):
                break  # e runs inside another operator
            if is_python_function(up) and "): " in up.name:
                where, name = up.name.split("): ", 1)
                path, line = where.rsplit("(", 1)
                caller = (path.rsplit("/", 1)[-1], int(line), name)
            up = up.cpu_parent
        if caller is not None:
            found.add((e.name,) + caller)
    return sorted(found)


def chrome_ops(path):
    """Operator and region names -> events in torch.profiler's own Chrome
    trace (export_chrome_trace), less those key_averages() does not count
    (_remove_dup_nodes: an operator that is the only one inside one of its
    own name)."""
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and
                  e.get("cat") in ("cpu_op", "user_annotation")]
    counts = {}
    for tid in {e["tid"] for e in events}:
        mine = sorted((e for e in events if e["tid"] == tid),
                      key=lambda e: (e["ts"], -e["dur"]))
        stack, kids = [], {}
        for i, e in enumerate(mine):
            while stack and mine[stack[-1]]["ts"] + mine[stack[-1]]["dur"] <= e["ts"]:
                stack.pop()
            parent = stack[-1] if stack else None
            kids.setdefault(parent, []).append(i)
            stack.append(i)
        for i, e in enumerate(mine):
            below = kids.get(i, [])
            if len(below) == 1 and mine[below[0]]["name"] == e["name"]:
                continue  # the one below takes its place
            counts[e["name"]] = counts.get(e["name"], 0) + 1
    return counts


class Without211:
    """A FunctionEvent seen as torch 2.11 shows it: no is_python_function."""

    def __init__(self, e):
        self._e = e

    def __getattr__(self, name):
        if name == "is_python_function":
            raise AttributeError(name)
        value = getattr(self._e, name)
        return Without211(value) if name == "cpu_parent" and value is not None else value


def main():
    workload, out = WORKLOADS[sys.argv[1]], sys.argv[2]
    mode = sys.argv[3:]
    before = schedstat()
    doc = {}
    if "reference" in mode:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], with_stack="with_stack" in mode,
                     record_shapes="shapes" in mode, profile_memory="memory" in mode) as prof:
            workload()
        doc["ops"] = {e.key: [e.count, e.self_cpu_time_total] for e in prof.key_averages()}
        if "memory" in mode:
            doc["memory"] = {e.key: [e.cpu_memory_usage, e.self_cpu_memory_usage]
                             for e in prof.key_averages()}
        doc["regions"] = regions_nesting(prof.events())
        doc["table"] = prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1)
        if "chrome" in mode:
            prof.export_chrome_trace(out + ".trace.json")
            doc["chrome_ops"] = chrome_ops(out + ".trace.json")
        if "with_stack" in mode:
            doc["callers"] = callers(prof.events())
            doc["callers_211"] = callers([Without211(e) for e in prof.events()])
        if "shapes" in mode:
            doc["by_shape"] = [[e.key, str(e.input_shapes), e.count]
                               for e in prof.key_averages(group_by_input_shape=True)]
    else:
        workload()
    after = schedstat()
    doc["ran_ns"], doc["waited_ns"] = after[0] - before[0], after[1] - before[1]
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
