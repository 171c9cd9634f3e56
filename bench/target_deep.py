"""The process that bench_sampler.py samples: CPU-bound, 30 frames deep.

It recurses to depth 30, then loops for ever calling a leaf function that
does a fixed amount of arithmetic; each call is one unit of work. On
SIGUSR1 it prints one line to stdout, "UNITS MONOTONIC", the units done so
far and time.monotonic() (one clock for every process on Linux), so the
benchmark can measure its work rate over any window. It prints "ready"
once the loop starts. It has one thread, so every sample of it is one
stack, and runs until it is killed.

    python3 bench/target_deep.py
"""

import signal
import time

DEPTH = 30
units = 0


def report(signum, frame):
    """SIGUSR1: print the units done so far and the time."""
    print(units, time.monotonic(), flush=True)


def leaf():
    """One unit of work: a hundred multiplications and additions."""
    total = 0
    for i in range(100):
        total += i * i
    return total


def busy():
    """Count units of work for ever."""
    global units
    print("ready", flush=True)
    while True:
        leaf()
        units += 1


def descend(depth):
    """Recurse to DEPTH frames, then work."""
    if depth < DEPTH:
        descend(depth + 1)
    else:
        busy()


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, report)
    descend(1)
