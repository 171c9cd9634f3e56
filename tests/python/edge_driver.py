"""Profiles one workload with cProfile and with sonde in this interpreter.

usage: edge_driver.py WORKLOAD SONDE_OUT CPROFILE_OUT

Both profilers see the same warm process: the workload runs once
unprofiled first, so lazy imports and caches are settled for both.
"""

import cProfile
import sys

import sonde
import workloads


def main():
    name, sonde_out, cprofile_out = sys.argv[1:4]
    work = workloads.ALL[name]
    work()

    cp = cProfile.Profile()
    cp.enable()
    work()
    cp.disable()
    cp.dump_stats(cprofile_out)

    sp = sonde.Profile()
    sp.enable()
    work()
    sp.disable()
    sp.dump_stats(sonde_out)


if __name__ == "__main__":
    main()
