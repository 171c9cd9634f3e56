"""Writes what torch's profiler recorded of a small CNN trained on a CUDA
GPU, every Kineto event with the answers of each of its methods, so that a
machine without a GPU can replay a real GPU recording through torch's
parser and through sonde (run by hand on a lent GPU machine;
tests/python/recorded/torch_h200_cnn.json.gz is its `reference` file of
an H200, less the fields at their defaults, gzipped, which
tests/python/test_torch_recorded.py replays):

    python3 tests/gpu/dump_kineto.py OUT.json reference   (torch.profiler)
    sonde run --torch tests/gpu/dump_kineto.py OUT.json   (sonde's recording)

With `reference` the file also holds torch.profiler's key_averages() rows.
"""

import json
import sys

import torch
import torch.nn as nn

METHODS = ("name", "start_ns", "end_ns", "device_type", "device_index", "device_resource_id",
           "correlation_id", "linked_correlation_id", "is_user_annotation", "is_async",
           "is_hidden_event", "is_python_function", "start_thread_id", "end_thread_id",
           "fwd_thread_id", "shapes", "dtypes", "nbytes", "sequence_nr", "scope", "activity_type",
           "cuda_elapsed_us", "privateuse1_elapsed_us", "flops", "overload_name", "external_id",
           "flow_id", "flow_type", "flow_start", "metadata_json", "python_id", "python_parent_id",
           "python_module_id")


def answers(event):
    row = {}
    for method in METHODS:
        try:
            value = getattr(event, method)()
        except Exception:  # a method this torch lacks, or a name not UTF-8
            continue
        if method == "device_type":
            value = value.name
        try:
            json.dumps(value)
        except TypeError:
            value = repr(value)
        row[method] = value
    return row


def dump(result, path, rows=None):
    doc = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "trace_start_ns": result.trace_start_ns(),
           "events": [answers(e) for e in result.events()]}
    if rows is not None:
        doc["key_averages"] = rows
    with open(path, "w") as f:
        json.dump(doc, f)


def train():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 16 * 16, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    torch.cuda.synchronize()


def main():
    path = sys.argv[1]
    if sys.argv[2:] == ["reference"]:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            train()
        rows = [{"name": a.key, "count": a.count, "device_type": a.device_type.name,
                 "self_cpu_us": a.self_cpu_time_total, "self_us": a.self_device_time_total,
                 "total_us": a.device_time_total} for a in prof.key_averages()]
        dump(prof.profiler.kineto_results, path, rows)
        return
    original = torch.autograd._disable_profiler

    def disable():  # sonde's --torch stops torch's profiler through this
        result = original()
        dump(result, path)
        return result

    torch.autograd._disable_profiler = disable
    train()


if __name__ == "__main__":
    main()
