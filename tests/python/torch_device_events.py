"""A program for test_torch_device.py: a small CPU model whose recording
gains GPU events as a CUDA device would add them, so that sonde's handling
of kernels and GPU memory is checked on a machine without a GPU.

Run under `sonde run --torch` (any format), it wraps torch's
_disable_profiler: what torch recorded comes back with, for the first
aten::addmm and aten::relu runs, a kernel each (a CUDA event whose linked
correlation id is the operator's, as Kineto links CUPTI's records), a
CUDA runtime event (cudaLaunchKernel, on the CPU, linked likewise), a
GPU allocation stamped inside addmm, and one kernel no operator launched.
torch's own parser (_parse_kineto_results, key_averages) reads the same
events; its figures are written to the reference file:

    python torch_device_events.py REFERENCE.json   (under sonde run --torch)
"""

import json
import sys
import warnings

import torch

DEVICE = torch._C._autograd.DeviceType

# Each synthetic kernel: (operator it follows, name, ns after the
# operator's end it starts, ns it lasts); the GPU bytes allocated in addmm.
KERNELS = (("aten::addmm", "ampere_sgemm_64x32_nn", 2000, 41000),
           ("aten::relu", "elementwise_relu_kernel", 1500, 3000))
ORPHAN = ("ncclKernel_AllReduce", 120000, 9000)  # linked to no operator
GPU_BYTES = 1 << 20
STREAM = 7


class DeviceEvent:
    """An event as Kineto hands one to torch's parser (a _KinetoEvent's
    methods, answering as a GPU record does)."""

    DEFAULTS = dict(shapes=[], concrete_inputs=[], kwinputs={}, stack=[], dtypes=[],
                    structured_input_shapes=[], structured_input_strides=[], metadata_json="",
                    extra_meta={}, overload_name="", python_id=-1, python_parent_id=-1,
                    python_module_id=-1, sequence_nr=-1, scope=0, flops=0, activity_type=0,
                    flow_id=0, flow_type=0, flow_start=False, external_id=0,
                    privateuse1_elapsed_us=0, cuda_elapsed_us=-1, correlation_id=0, nbytes=0, device_index=0)

    def __init__(self, name, start, end, device_type, linked=0, tid=0, resource=STREAM,
                 **more):
        self.values = dict(self.DEFAULTS, name=name, start_ns=start, end_ns=end,
                           device_type=device_type, linked_correlation_id=linked,
                           device_resource_id=resource, start_thread_id=tid,
                           end_thread_id=tid, fwd_thread_id=tid, **more)

    @classmethod
    def of(cls, values):
        """An event answering with `values` (a recorded event's, say), the
        defaults for the rest."""
        event = cls(values["name"], values["start_ns"], values["end_ns"], values["device_type"])
        event.values.update(values)
        return event

    def __getattr__(self, key):
        if key in self.values:
            return lambda: self.values[key]
        if key.startswith("is_"):
            return lambda: False
        raise AttributeError(key)


class WithDevice:
    """torch's recording, its events joined by the synthetic ones."""

    def __init__(self, result, extra):
        self.result, self.extra = result, extra

    def events(self):
        return list(self.result.events()) + self.extra

    def __getattr__(self, key):
        return getattr(self.result, key)


def device_events(result):
    events = result.events()
    extra = []
    for op_name, kernel, after, lasts in KERNELS:
        op = next(e for e in events if e.name() == op_name)
        tid = op.device_resource_id()
        start = op.end_ns() + after
        extra.append(DeviceEvent(kernel, start, start + lasts, DEVICE.CUDA,
                                 op.correlation_id()))
        extra.append(DeviceEvent("cudaLaunchKernel", op.end_ns() - 400, op.end_ns() - 100,
                                 DEVICE.CPU, op.correlation_id(), tid=tid, resource=tid))
        if op_name == "aten::addmm":
            extra.append(DeviceEvent("[memory]", op.start_ns() + 50, op.start_ns() + 50,
                                     DEVICE.CUDA, nbytes=GPU_BYTES))
    last = max(e.end_ns() for e in events)
    extra.append(DeviceEvent(ORPHAN[0], last + ORPHAN[1], last + ORPHAN[1] + ORPHAN[2],
                             DEVICE.CUDA, 10 ** 9))
    return extra


def reference(result):
    """torch.profiler's key_averages() of the result, as its CUDA table
    reads: per name the count, self and total GPU microseconds, GPU bytes;
    and the table itself, sorted by self GPU time."""
    from torch.autograd import profiler
    from torch.autograd.profiler_util import EventList
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available"
        parser = profiler.profile(use_device="cuda")
    parser.use_device = "cuda"
    events = EventList(parser._parse_kineto_results(result), use_device="cuda",
                       profile_memory=True)
    events._build_tree()
    averages = events.key_averages()
    # a record_function region's span on the GPU has a row of its own,
    # named as the region's; sonde's profile has the region alone
    rows = {a.key: {"count": a.count, "self_us": a.self_device_time_total,
                    "total_us": a.device_time_total, "mem": a.device_memory_usage,
                    "self_mem": a.self_device_memory_usage} for a in averages
            if a.device_type == DEVICE.CPU or not a.is_user_annotation}
    return rows, averages.table(sort_by="self_cuda_time_total", row_limit=-1)


def wrap(out):
    original = torch.autograd._disable_profiler

    def disable():
        result = original()
        joined = WithDevice(result, device_events(result))
        rows, table = reference(joined)
        with open(out, "w") as f:
            json.dump({"rows": rows, "table": table,
                       "kernels": [[k.name(), k.start_ns(), k.end_ns()] for k in joined.extra
                                   if k.device_type() == DEVICE.CUDA and k.name() != "[memory]"],
                       "ops": {e.name(): e.start_ns() for e in reversed(result.events())}}, f)
        return joined

    torch.autograd._disable_profiler = disable


def model_step():
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    x = torch.randn(16, 32)
    return model(x).sum()


if __name__ == "__main__":
    wrap(sys.argv[1])
    model_step()
