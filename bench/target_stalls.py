"""target_stalls.py - what a sampler's stops cost a thread, for bench_native.py.

    python target_stalls.py PROBE_LIB SECONDS THREADS

Starts THREADS - 1 Python threads that wait on an event (a process with
many threads, as a PyTorch or web server process has), then spins for
SECONDS in C (stall_probe.c, through ctypes: the main thread stays a Python
thread with its frames) and prints what the spinning thread saw:
"gaps N stalled S p50 P p99 Q max M cpu C", S the share of the time it did
not run, P, Q and M gap lengths in microseconds (gaps over 5 us), C the CPU
seconds the process used (the sampler's are the rest of what it and its
sampler used)."""
import ctypes
import resource
import sys
import threading


def main():
    lib = ctypes.CDLL(sys.argv[1])
    seconds, threads = float(sys.argv[2]), int(sys.argv[3])
    lib.probe_spin.restype = ctypes.c_long
    lib.probe_spin.argtypes = [ctypes.c_double, ctypes.c_uint64,
                               ctypes.POINTER(ctypes.c_uint64), ctypes.c_long]
    done = threading.Event()
    waiting = [threading.Thread(target=done.wait) for _ in range(threads - 1)]
    for t in waiting:
        t.start()
    cap = 1 << 20
    gaps = (ctypes.c_uint64 * cap)()
    n = lib.probe_spin(seconds, 5000, gaps, cap)
    done.set()
    for t in waiting:
        t.join()
    kept = sorted(gaps[i] for i in range(min(n, cap)))
    pick = lambda q: kept[min(int(q * len(kept)), len(kept) - 1)] / 1e3 if kept else 0.0  # noqa
    own = resource.getrusage(resource.RUSAGE_SELF)
    print("gaps %d stalled %.6f p50 %.1f p99 %.1f max %.1f cpu %.4f"
          % (n, sum(kept) / 1e9 / seconds, pick(0.5), pick(0.99), pick(1.0),
             own.ru_utime + own.ru_stime), flush=True)


if __name__ == "__main__":
    main()
