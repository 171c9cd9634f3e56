"""A new user's machine: `git clone` then `make demo` where only a compiler,
make, git and Python with its headers are installed (no -dev package of
libdw or zlib, no chromium, Graphviz or go), and what each missing library
costs at run time: native frames without libdw keep their names and lose
only file:line, said in one line; pprof files without zlib are still gzip.

What is missing is hidden in a mount namespace of the test's own (unshare
-m, as root), so the rest of the machine keeps it; the references are the
same commands with the libraries present, Python's pstats and gzip."""

import glob
import gzip
import os
import pstats
import re
import subprocess
import sys

import pytest

from conftest import ROOT, SONDE
from test_native import LIBS, blocked_in_read, main_thread

FRESH = os.path.join(ROOT, "tests", "fresh_machine.sh")


def can_unshare():
    return subprocess.call(["unshare", "-m", "true"], stderr=subprocess.DEVNULL) == 0


needs_namespace = pytest.mark.skipif(not can_unshare(),
                                     reason="hiding libraries needs a mount namespace (root)")


def library(soname):
    """The file the dynamic loader opens for soname."""
    out = subprocess.run(["ldconfig", "-p"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    paths = re.findall(r"^\s+%s \(libc6,x86-64\) => (\S+)$" % re.escape(soname), out, re.M)
    assert paths, "%s is not installed" % soname
    return os.path.realpath(paths[0])


def without(soname, argv, **kw):
    """argv run where soname's file reads as empty (dlopen fails on it)."""
    script = 'mount --bind /dev/null "$1" && shift && exec "$@"'
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", library(soname)] + argv,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120, **kw)


@needs_namespace
def test_make_demo_on_a_bare_machine(tmp_path):
    """Before the libraries were loaded at run time this stopped at once:
    `symbols.c: fatal error: dwarf.h: No such file or directory`."""
    run = subprocess.run(["sh", FRESH, str(tmp_path)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:]
    demo = tmp_path / "sonde" / "build" / "demo"
    # The deterministic profile, read by the standard library's own pstats.
    stats = pstats.Stats(str(demo / "julia.prof")).stats
    calls = {func[2]: v[1] for func, v in stats.items()}
    assert calls["calculate_z"] == 1 and calls["coordinates"] == 1, calls
    # The pprof file is gzip (compressed: zlib's runtime library is on every
    # such machine) of a protobuf that names the example's functions.
    raw = (demo / "julia.pb.gz").read_bytes()
    plain = gzip.decompress(raw)
    assert len(raw) < len(plain) and b"calculate_z" in plain
    for name in ("julia.svg", "julia.html", "julia-mem.svg", "sum.json"):
        assert (demo / name).stat().st_size > 0, name
    # What was left out is named with the package that brings it.
    assert "apt-get install golang-go" in run.stdout
    assert "apt-get install graphviz" in run.stdout


@needs_namespace
def test_native_frames_without_libdw_keep_their_names(tmp_path):
    """dump --native of a thread blocked in the test library (-O2 -g):
    with libdw, tl_* frames carry testlib.c's lines; without it, the same
    frames by the same names, no file:line, and one line saying why."""
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "native", "block.py"),
                             os.path.join(LIBS, "libtl.so"), "tl_outer"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        blocked_in_read(proc.pid)
        argv = [SONDE, "dump", "--native", "-p", str(proc.pid)]
        full = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
        bare = without("libdw.so.1", argv)
    finally:
        proc.kill()
        proc.wait()
    assert full.returncode == 0 and bare.returncode == 0, full.stderr + bare.stderr
    ours = [f for f in main_thread(full.stdout) if f[0].startswith("tl_")]
    theirs = [f for f in main_thread(bare.stdout) if f[0].startswith("tl_")]
    assert [f[0] for f in ours] == ["tl_leaf_static", "tl_middle", "tl_outer"], full.stdout
    assert all(f[1].endswith("testlib.c") and int(f[2]) > 0 for f in ours), ours
    assert [f[0] for f in theirs] == [f[0] for f in ours], bare.stdout
    assert not [f for f in theirs if f[1].endswith("testlib.c") or int(f[2]) > 0], theirs
    said = [l for l in bare.stderr.splitlines() if "libdw" in l]
    assert said == ["sonde: native frames have no file:line: libdw.so.1 is not installed (it "
                    "reads DWARF line tables; Debian/Ubuntu: apt-get install libdw1, Fedora: "
                    "dnf install elfutils-libs)"], bare.stderr
    assert "libdw" not in full.stderr


@needs_namespace
def test_pprof_without_zlib_is_gzip_all_the_same(tmp_path):
    """-f pprof without libz.so.1 writes gzip of stored blocks: Python's gzip
    reads it, and it holds the very profile that sonde, with zlib, writes
    compressed from the same document."""
    prof = tmp_path / "p.json"
    made = subprocess.run([SONDE, "run", "-f", "json", "-o", str(prof), "-c",
                           "def f(n):\n    return sum(range(n))\nfor i in range(50): f(1000)"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, cwd=str(tmp_path), timeout=120)
    assert made.returncode == 0, made.stderr
    argv = [SONDE, "report", str(prof), "-f", "pprof", "-o"]
    bare = without("libz.so.1", argv + [str(tmp_path / "bare.pb.gz")])
    full = subprocess.run(argv + [str(tmp_path / "full.pb.gz")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert bare.returncode == 0 and full.returncode == 0, bare.stderr + full.stderr
    stored = (tmp_path / "bare.pb.gz").read_bytes()
    packed = (tmp_path / "full.pb.gz").read_bytes()
    assert gzip.decompress(stored) == gzip.decompress(packed)
    assert len(stored) > len(gzip.decompress(stored)) > len(packed)
    # Reading a gzipped file is what needs zlib: refused in one line.
    read = without("libz.so.1", [SONDE, "report", str(tmp_path / "full.pb.gz")])
    assert read.returncode != 0
    assert read.stderr.strip().splitlines()[-1].endswith(
        "reading a gzipped file needs zlib, and libz.so.1 is not installed "
        "(Debian/Ubuntu: apt-get install zlib1g); or gunzip it first"), read.stderr
