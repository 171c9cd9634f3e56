"""record --native --subprocesses of a pool whose workers each run one task
(maxtasksperchild=1): the processes share the object files they map, so
that each new worker does not open libpython and libc again, index their
CFI and load their symbols (issue 23, item 10).  The reference is the
program's own count of the executable files it maps: sonde opens no more
files than that however many workers it samples."""

import re
import sys

from test_native import SHARE_LIB, collapsed, sonde

PROGRAM = r'''
import ctypes, hashlib, multiprocessing, os, sys

def work(n):
    for _ in range(n):
        hashlib.sha1(b"y" * 50000).digest()
    ctypes.CDLL(sys.argv[1]).sl_a(30000000)  # loaded by each worker, not by the parent
    return n

if __name__ == "__main__":
    with multiprocessing.Pool(2, maxtasksperchild=1) as pool:
        total = sum(pool.map(work, [2000] * 8, chunksize=1))
    files = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if "x" in parts[1] and len(parts) == 6 and parts[5].startswith("/"):
                files.add((parts[3], parts[4]))
    print(total, len(files))
'''


def test_pool_workers_share_their_object_files(tmp_path):
    prog = tmp_path / "pool.py"
    prog.write_text(PROGRAM)
    rec = sonde("record", "--native", "--subprocesses", "-r", "100", "-f", "collapsed", "-o",
                str(tmp_path / "p.txt"), "--", sys.executable, str(prog), SHARE_LIB,
                cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    total, mapped = map(int, rec.stdout.split())
    assert total == 16000
    said = re.search(r"(\d+) object files opened, (\d+) times one shared with a process that "
                     r"mapped it before, (\d+) symbol tables loaded", rec.stderr)
    assert said, rec.stderr
    opened, shared, tables = map(int, said.groups())
    # Each file opened once (the workers were forked: they map what the
    # parent maps, and libshare, which each loads; one may load libgcc_s to
    # end a thread), its symbols loaded at most once: not once per
    # process.  A worker runs 100 ms or so of CPU: sonde reads it, and its
    # files are the parent's.
    assert opened <= mapped + 2, (opened, mapped, rec.stderr)
    assert tables <= opened, rec.stderr
    assert shared >= 1, rec.stderr
    # libshare's lines are read by the file's name, which may be the one a
    # worker that has ended reached it by: each sl_a frame has its line.
    rows = [f for f, _ in collapsed(tmp_path / "p.txt") if f[-1][0] == "sl_a"]
    assert rows, rec.stderr
    for frames in rows:
        assert frames[-1][1].endswith("sharelib.c") and frames[-1][2] > 0, frames
