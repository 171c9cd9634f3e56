"""target_numpy.py - a fixed amount of numpy linear algebra, for bench_native.py.

    python target_numpy.py ROUNDS N

Inverts an N x N matrix ROUNDS times (OpenBLAS's threads do the work:
OPENBLAS_NUM_THREADS sets how many), then prints "elapsed WALL cpu CPU":
its wall time for the work and its own CPU time, in seconds."""
import sys
import time

import numpy as np


def work(a, rounds):
    for _ in range(rounds):
        np.linalg.inv(a)


def main():
    rounds, n = int(sys.argv[1]), int(sys.argv[2])
    a = np.random.default_rng(1).random((n, n))
    np.linalg.inv(a)  # warm: threads started, pages touched
    t0 = time.perf_counter()
    work(a, rounds)
    print("elapsed %.6f cpu %.6f" % (time.perf_counter() - t0, time.process_time()), flush=True)


if __name__ == "__main__":
    main()
