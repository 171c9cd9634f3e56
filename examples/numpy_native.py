"""numpy_native.py - numpy's linear algebra, for `sonde record --native` (make demo).

    python numpy_native.py [N] [ROUNDS]

Inverts and solves N x N systems: the time goes to OpenBLAS/LAPACK kernels
inside numpy, which only native frames show (under invert's and solve's
lines)."""
import sys

import numpy as np


def invert(a):
    return np.linalg.inv(a)


def solve(a, b):
    return np.linalg.solve(a, b)


def main(n, rounds):
    rng = np.random.default_rng(0)
    a = rng.random((n, n))
    b = rng.random((n, n))
    for _ in range(rounds):
        invert(a)
        solve(a, b)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300,
         int(sys.argv[2]) if len(sys.argv) > 2 else 150)
