"""A program for test_torch_recorded.py: a real GPU recording replayed.

recorded/torch_h200_cnn.json.gz holds every event torch.profiler (CPU and
CUDA activity) recorded of a small CNN's five training steps on an NVIDIA
H200 (tests/gpu/dump_kineto.py's `reference` file, less the fields at
their defaults): operators, CUDA runtime calls, kernels, memsets and
copies, the GPU's spans of record_function regions, and CUPTI's records
of its own overhead ("Lazy Function Loading", whose correlation ids
collide with operators').  Run under
`sonde run --torch`, this program stands for the recorded one: for as
long as the recording lasted it waits in replayed_steps() (the backward
pass's thread in autograd_thread()), and it wraps torch's
_disable_profiler so that sonde reads the recorded events, moved to that
span and to these threads.  torch's own parser (_parse_kineto_results,
key_averages) reads the same events; its figures, and those torch 2.11
printed on the GPU machine, go to the reference file:

    python torch_recorded.py REFERENCE.json   (under sonde run --torch)
"""

import gzip
import json
import os
import sys
import threading
import time

import torch

from torch_device_events import DeviceEvent, WithDevice, reference

RECORDING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded",
                         "torch_h200_cnn.json.gz")
DEVICE = torch._C._autograd.DeviceType


def load():
    with gzip.open(RECORDING, "rt") as f:
        return json.load(f)


def first_start(recording):
    return min(e["start_ns"] for e in recording["events"] if e["device_type"] == "CPU")


def moved(recording, began, threads):
    """The recorded events as this process would have recorded them: the
    first CPU event at `began` (CLOCK_REALTIME ns), each recorded thread id
    (a CPU event's device_resource_id) the native id in `threads`."""
    shift = began - first_start(recording)
    replayed = []
    for e in recording["events"]:
        values = dict(e, device_type=getattr(DEVICE, e["device_type"]),
                      start_ns=e["start_ns"] + shift, end_ns=e["end_ns"] + shift)
        if e["device_type"] == "CPU":
            values["device_resource_id"] = threads.get(e["device_resource_id"],
                                                       e["device_resource_id"])
        replayed.append(DeviceEvent.of(values))
    return replayed


def apart(events):
    """The events with CUPTI's overhead records (CPU events on no thread)
    given no correlation id: torch's parser then credits each kernel to its
    operator alone, not also to a record whose id, from CUPTI's count,
    happens to equal the operator's."""
    return [DeviceEvent.of(dict(e.values, correlation_id=0))
            if e.device_type() == DEVICE.CPU and e.device_resource_id() == 0
            else e for e in events]


def recorded_threads(recording):
    """The recorded native thread ids: the main thread's (its events come
    first) and the backward pass's."""
    ids = []
    for e in recording["events"]:
        tid = e["device_resource_id"]
        if e["device_type"] == "CPU" and tid and tid not in ids:
            ids.append(tid)
    return ids


def main(out):
    recording = load()
    main_tid, backward_tid = recorded_threads(recording)
    span = {}
    original = torch.autograd._disable_profiler

    def disable():
        original()  # sonde's real (empty) recording ends; the replay stands for it
        threads = {main_tid: threading.get_native_id(), backward_tid: span["backward"]}
        start = recording["trace_start_ns"] + span["began"] - first_start(recording)
        events = moved(recording, span["began"], threads)
        as_torch, _ = reference(WithDevice(EmptyResult(start), events))
        rows, table = reference(WithDevice(EmptyResult(start), apart(events)))
        with open(out, "w") as f:
            json.dump({"rows": rows, "table": table, "as_torch": as_torch,
                       "on_gpu": recording["key_averages"]}, f)
        return WithDevice(EmptyResult(start), events)

    torch.autograd._disable_profiler = disable
    lasted = max(e["end_ns"] for e in recording["events"]) - first_start(recording)
    replayed_steps(span, lasted)


class EmptyResult:
    """A result of torch's profiler with no events of its own."""

    def __init__(self, trace_start_ns):
        self.start = trace_start_ns

    def events(self):
        return []

    def trace_start_ns(self):
        return self.start


def replayed_steps(span, lasted):
    """Waits for as long as the recording lasted, with a second thread
    standing for the backward pass's."""
    ready, done = threading.Event(), threading.Event()

    def autograd_thread():
        span["backward"] = threading.get_native_id()
        ready.set()
        done.wait()

    helper = threading.Thread(target=autograd_thread)
    helper.start()
    ready.wait()
    span["began"] = time.time_ns()
    time.sleep(lasted / 1e9)
    done.set()
    helper.join()


if __name__ == "__main__":
    main(sys.argv[1])
