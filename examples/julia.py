"""The Julia set from the seeds: the CPU-bound example sonde's demo profiles.

Builds a grid of complex coordinates, then iterates z = z*z + c for each
point until it escapes or maxiter is reached.  calculate_z is the hot
function; its inner `while` loop is where the time goes.
"""

import sys

X1, X2, Y1, Y2 = -1.8, 1.8, -1.8, 1.8
C_REAL, C_IMAG = -0.62772, -0.42193


def calculate_z(maxiter, zs, cs):
    """Calculate output list using the Julia update rule."""
    output = [0] * len(zs)
    for i in range(len(zs)):
        n = 0
        z = zs[i]
        c = cs[i]
        while abs(z) < 2 and n < maxiter:
            z = z * z + c
            n += 1
        output[i] = n
    return output


def coordinates(width):
    x_step = (X2 - X1) / width
    y_step = (Y1 - Y2) / width
    xs = [X1 + i * x_step for i in range(width)]
    ys = [Y2 + i * y_step for i in range(width)]
    zs = [complex(x, y) for y in ys for x in xs]
    cs = [complex(C_REAL, C_IMAG)] * len(zs)
    return zs, cs


def main(width=200, maxiter=120):
    zs, cs = coordinates(width)
    output = calculate_z(maxiter, zs, cs)
    print("Julia set: %d points, total iterations %d" % (len(output), sum(output)))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))
