"""Allocation-heavy work for bench_mem.py: many small, short-lived objects
(dicts, tuples, lists, strings, instances), about 1.6 million allocations
a second on CPython 3.11 here.  The hot function carries @profile, which
memory_profiler and sonde mem supply; under other tools it is a no-op."""

import sys

try:
    profile  # noqa: B018 (supplied by the profiler as a builtin)
except NameError:
    def profile(func):
        return func


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


@profile
def churn(n):
    total = 0
    for i in range(n):
        record = {"id": i, "name": str(i), "tags": [i, i + 1]}
        point = Point(i, (i, i * 2))
        total += len(record) + len(record["tags"]) + point.y[1]
    return total


if __name__ == "__main__":
    churn(int(sys.argv[1]) if len(sys.argv) > 1 else 200000)
