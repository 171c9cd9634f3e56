"""A deliberate load on every CPU, started and ended by the test run itself.

    python tests/load.py [-n PROCS] -- COMMAND...   runs COMMAND under the load
    from load import Load; with Load(): ...         the same, in Python

One busy process per CPU (a Python loop that never sleeps, at the same
priority as the tests), so every CPU has at least one more runnable task
than the tests bring: the machine of a CI run beside other work.  The
processes end with the run however it ends: the context's exit (also on an
exception or Ctrl-C) kills them; if the process that started them dies
without running it (SIGKILL), the kernel sends each SIGKILL
(PR_SET_PDEATHSIG), and each also checks every few million rounds (a
fraction of a second) that its parent is still the one that started it.
"""

import os
import signal
import subprocess
import sys

# The busy loop: asks the kernel for SIGKILL when its parent dies, and checks
# (cheaply, every 2**22 rounds) that the parent is still there, for the
# case where the parent died before prctl ran.
BUSY = r'''
import ctypes, os, sys
parent = int(sys.argv[1])
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
except Exception:
    pass
i = 0
while True:
    i += 1
    if not i & 0x3fffff and os.getppid() != parent:
        sys.exit(0)
'''


class Load:
    """One busy process per CPU (or n) while the context is open."""

    def __init__(self, n=None):
        self.n = n or os.cpu_count() or 1
        self.procs = []

    def start(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-c", BUSY, str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        return self

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []

    def running(self):
        """How many of the busy processes are still running."""
        return sum(p.poll() is None for p in self.procs)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def main(argv):
    n = None
    if argv[:1] == ["-n"]:
        n, argv = int(argv[1]), argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    # SIGTERM (a CI runner ending the job) ends the load as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with Load(n) as load:
        sys.stderr.write("load: %d busy processes (%s)\n"
                         % (load.n, " ".join(str(p.pid) for p in load.procs)))
        try:
            return subprocess.call(argv)
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
