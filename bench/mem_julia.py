"""The seeds' Julia set (examples/julia.py) for bench_mem.py, with the two
functions the seed profiles with memory_profiler under @profile: building
the coordinate lists (where the memory goes) and the hot loop."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import julia  # noqa: E402

try:
    profile  # noqa: B018 (supplied by the profiler as a builtin)
except NameError:
    def profile(func):
        return func

coordinates = profile(julia.coordinates)
calculate_z = profile(julia.calculate_z)

if __name__ == "__main__":
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    if width:  # 0: start-up only
        zs, cs = coordinates(width)
        calculate_z(60, zs, cs)
