"""A demangling bomb under --native (issue 23, item 7): a C++ function
whose 188-byte mangled name nests substitutions 26 deep (P<P<P<...int...>>>,
each level naming the one before twice) demangles into 570 MB, and
libstdc++'s __cxa_demangle has no bound: `dump --native` and `record
--native` spent seconds and hundreds of megabytes on it.  sonde's
demangler runs bounded (src/sampler/native/demangle.h): the name keeps its
mangled form, an ordinary C++ name beside it is still demangled, and
sonde's memory stays small.  The timeouts only guard against a hang."""

import shutil
import subprocess
import sys

import pytest

from conftest import SONDE, start_ready

HANG_GUARD_S = 60
NESTING = 26
MAX_RSS_KB = 200 * 1024  # sonde's peak; the bomb's name alone is 570 MB

PROGRAM = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
print("ready", flush=True)
lib.run_bomb()
"""

# Peak memory of a command and of the processes it waited for, as the
# kernel counts them (the test process's own children are not mixed in).
MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      universal_newlines=True)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
sys.stderr.write("maxrss_kb=%d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)
"""


def bomb_source(nesting):
    lines = ["template <class A, class B> struct P {};", "typedef int T0;"]
    lines += ["typedef P<T%d, T%d> T%d;" % (i - 1, i - 1, i) for i in range(1, nesting + 1)]
    lines += [
        "namespace ns {",
        "__attribute__((noinline)) int helper(P<int, int>) {",
        "    for (volatile int forever = 1; forever;) {}",
        "    return 0;",
        "}",
        "}",
        "__attribute__((noinline)) int bomb(T%d) { return ns::helper(P<int, int>()) + 1; }"
        % nesting,
        'extern "C" int run_bomb(void) { return bomb(T%d()); }' % nesting,
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def bomb_lib(tmp_path_factory):
    """The library and its bomb's mangled name (from nm)."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        pytest.skip("no C++ compiler")
    tmp = tmp_path_factory.mktemp("bomb")
    (tmp / "bomb.cpp").write_text(bomb_source(NESTING))
    lib = tmp / "libbomb.so"
    subprocess.run([cxx, "-O1", "-shared", "-fPIC", str(tmp / "bomb.cpp"), "-o", str(lib)],
                   check=True)
    names = subprocess.run(["nm", "-D", "--defined-only", str(lib)], stdout=subprocess.PIPE,
                           universal_newlines=True, check=True).stdout.split()
    mangled = [n for n in names if n.startswith("_Z4bomb")]
    assert len(mangled) == 1 and mangled[0].count("S_") == NESTING - 1
    return lib, mangled[0]


def measured(args):
    """sonde args run under MEASURE: (its result, sonde's peak RSS in KiB)."""
    done = subprocess.run([sys.executable, "-c", MEASURE, SONDE] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=HANG_GUARD_S)
    rss = [l for l in done.stderr.splitlines() if l.startswith("maxrss_kb=")]
    return done, int(rss[-1].split("=")[1])


def test_dump_native_keeps_the_bombs_mangled_name(bomb_lib, tmp_path):
    lib, mangled = bomb_lib
    proc = start_ready(sys.executable, tmp_path, PROGRAM, lib)
    try:
        done, rss = measured(["dump", "--native", "-p", str(proc.pid)])
    finally:
        proc.kill()
        proc.wait()
    assert done.returncode == 0, done.stderr
    assert mangled in done.stdout
    assert "ns::helper(P<int, int>)" in done.stdout
    assert rss < MAX_RSS_KB, rss


def test_record_native_keeps_the_bombs_mangled_name(bomb_lib, tmp_path):
    lib, mangled = bomb_lib
    out = tmp_path / "p.txt"
    proc = start_ready(sys.executable, tmp_path, PROGRAM, lib)
    try:
        done, rss = measured(["record", "--native", "-d", "2", "-p", str(proc.pid),
                              "-f", "collapsed", "-o", str(out)])
    finally:
        proc.kill()
        proc.wait()
    assert done.returncode == 0, done.stderr
    # each line: frames "name (file:line)" outermost first, then a count
    stacks = [[frame.rsplit(" (", 1)[0] for frame in line.rsplit(" ", 1)[0].split(";")]
              for line in out.read_text().splitlines()]
    assert any(frames[-2:] == [mangled, "ns::helper(P<int, int>)"] for frames in stacks), stacks
    assert rss < MAX_RSS_KB, rss
