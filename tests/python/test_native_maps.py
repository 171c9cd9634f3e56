"""record --native of a process with 10,000 executable mappings and a
thread running in an anonymous executable one (a JIT's code): the maps are
not read again at every unwind that meets an address in no object (issue
23, item 10), and a library the program loads while it is recorded is
still found and named.  References: the address the program put its code
at, the function it calls in the library, and the number of the JIT
thread's unwinds (each read the maps again before)."""

import re
import sys

from test_native import SHARE_LIB, collapsed, sonde

# 7,000 anonymous executable mappings (r-x and --x in turn, so that no two
# neighbours merge) and 3,000 of a file's second page (no offset-0
# mapping: each its own object of a non-ELF file, which needed a walk of
# all the mappings to find that it has no base; under the 4,096 objects a
# process may have, so that the library loaded later still gets one), one
# page of code that
# jumps to itself run by a thread through ctypes, then libshare loaded and
# its sl_a called for 2 s of this thread's CPU time.
PROGRAM = r'''
import ctypes, mmap, os, sys, threading, time
with open("pages.bin", "wb") as f:
    f.write(b"\0" * 8192)
fd = os.open("pages.bin", os.O_RDONLY)
keep = []
for i in range(10000):
    if i % 10 < 3:
        keep.append(mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC,
                              offset=4096))
    else:
        keep.append(mmap.mmap(-1, 4096, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                              mmap.PROT_EXEC | (mmap.PROT_READ if i % 2 else 0)))
code = mmap.mmap(-1, 4096, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                 mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
code.write(b"\xeb\xfe")  # jmp .
at = ctypes.addressof(ctypes.c_char.from_buffer(code))
threading.Thread(target=ctypes.CFUNCTYPE(None)(at), daemon=True).start()
print("code at 0x%x" % at, flush=True)
lib = ctypes.CDLL(sys.argv[1])
t0 = time.thread_time()
while time.thread_time() - t0 < 2:
    lib.sl_a(1000000)  # CALL
os._exit(0)
'''


def test_jit_code_beside_10000_mappings(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    out = tmp_path / "p.txt"
    rec = sonde("record", "--native", "--mode", "wall", "-r", "100", "-f", "collapsed", "-o",
                str(out), "--", sys.executable, str(prog), SHARE_LIB, cwd=str(tmp_path))
    assert rec.returncode == 0, rec.stderr
    code = int(re.search(r"code at 0x([0-9a-f]+)", rec.stdout).group(1), 16)
    rows = collapsed(out)
    jit = [(f, n) for f, n in rows if f[-1][0] == "0x%x" % code]
    called = [(f, n) for f, n in rows if f[-1][0] == "sl_a"]
    # Each unwind of the JIT thread read the maps again before (as many
    # reads as its stacks: 2-3 Hz kept of 100 here); now a few (an address
    # already mapped is looked at again once a second; new libraries).
    said = re.search(r"the maps read again (\d+) times?", rec.stderr)   # when not 0
    reads = int(said.group(1)) if said else 0
    unwinds = sum(n for _, n in jit)   # --mode wall: a stack counts 1
    assert reads * 4 < unwinds, (reads, unwinds, rec.stderr)
    # The JIT thread, its innermost frame the program's code (no object:
    # [unmapped]); the library loaded after the recording began, named,
    # under the line that calls it; nothing else in no object.
    assert jit and called, rows
    line = PROGRAM.splitlines().index("    lib.sl_a(1000000)  # CALL") + 1
    for frames, _ in called:
        assert ("<module>", str(prog), line) in frames, frames
    assert not [f for f, _ in rows if f[-1][0] != "0x%x" % code and
                any(x[1] == "[unmapped]" for x in f)], rows
