"""sonde mem and sonde.MemoryProfiler: allocations of every kind land on
their lines (tracemalloc's figures, or the known sizes of native blocks,
as the reference), sampled figures stay within 10% of the truth, the
timeline holds the RSS peak, forks, threads, generators and running out
of memory are handled, and the command line and report behave."""

import json
import os
import resource
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import HERE, SONDE, need, run_sonde, version_params, with_pkg_env

MB = 1 << 20
WORKLOADS = os.path.join(HERE, "mem_workloads.py")


def within(got, want, share=0.10):
    return abs(got - want) <= share * want


def lines_of(doc):
    """{line number: line figures} of the lines that ran, over every
    function of a mem document (without line events: that samples or RSS
    readings found)."""
    out = {}
    for function in doc["functions"]:
        for line in function["lines"]:
            if line["hits"] or any(line[k] for k in ("alloc_bytes", "freed_bytes", "net_bytes",
                                                     "rss_bytes")):
                out[line["line"]] = line
    return out


@pytest.mark.parametrize("python", version_params())
def test_every_block_followed_equals_tracemalloc(python):
    """sample_bytes=0: net bytes per line as tracemalloc counts them, in
    the same process, on every interpreter; known sizes for native blocks."""
    python = need(python)
    out = subprocess.run([python, os.path.join(HERE, "mem_driver.py")], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    got = json.loads(out)
    for name in ["big_kept", "small_kept", "dict_kept", "thread_kept", "gen_first",
                 "gen_second", "gen_consumer"]:
        assert got[name]["tracemalloc"] > MB
        assert abs(got[name]["net"] - got[name]["tracemalloc"]) <= 1024, (name, got[name])
    # Tuples taken back from the interpreter's free list belong to the line
    # that takes them, as tracemalloc moves them; sonde hears of that from
    # 3.13 (a reference tracer), before it they stay where first allocated.
    assert got["reuse_kept"]["tracemalloc"] > 50000
    if tuple(got["python"]) >= (3, 13):
        for name in ["reuse_dropped", "reuse_kept"]:
            assert abs(got[name]["net"] - got[name]["tracemalloc"]) <= 1024, (name, got[name])
    # Released on the line, or by another thread on its own line.
    assert within(got["big_freed"]["alloc"], 16 * MB) and got["big_freed"]["net"] == 0
    assert within(got["freed_elsewhere"]["alloc"], 6 * MB)
    assert got["freed_elsewhere"]["net"] == 0
    assert within(got["thread_frees"]["freed"], 6 * MB)
    # Without the shim, C allocations are not the Python allocators'.
    assert got["native_kept"]["net"] < 4096
    # A fork with a thread running: from 3.12 its warning is made on the
    # fork's line (3.15: 114 KB), the same bytes tracemalloc counts there
    # (before 3.13 less a block or two taken back from a free list, as
    # reuse_kept's); the child's 8 MB are not the parent's.
    fork = got["fork_threads"]
    assert abs(fork["net"] - fork["tracemalloc"]) <= 1024 and fork["net"] < MB, fork


@pytest.fixture(scope="module")
def workloads_run(tmp_path_factory):
    """sonde mem on the workloads (sampled, with the C allocator shim),
    and tracemalloc's view of the same workloads."""
    tmp = tmp_path_factory.mktemp("mem")
    proc = run_sonde(["mem", "-o", "w.json", "--plot", "w.svg", WORKLOADS], tmp)
    assert proc.returncode == 0, proc.stderr
    ref = json.loads(subprocess.run([sys.executable, WORKLOADS, "--reference"],
                                    stdout=subprocess.PIPE, universal_newlines=True,
                                    check=True).stdout)
    return tmp, proc, json.load(open(str(tmp / "w.json"))), ref


def test_sampled_lines_within_ten_percent(workloads_run):
    _, _, doc, ref = workloads_run
    lines, markers = lines_of(doc), ref["markers"]
    assert doc["native"] is True and doc["sample_bytes"] == 512
    checked = 0
    for line, want in ref["net"].items():
        if want >= MB and int(line) in markers.values():
            assert within(lines[int(line)]["net_bytes"], want), (line, lines[int(line)], want)
            checked += 1
    assert checked >= 7
    # Many small blocks: sampled, and still within 10% (allocated and net).
    small = lines[markers["small_churn"]]
    assert small["hits"] is None  # placed from the stack: no line events
    assert small["alloc_bytes"] > 5 * MB and small["net_bytes"] < 0.1 * small["alloc_bytes"]
    # Native blocks, through the shim: exact (they are large; the lines'
    # few small Python objects are sampled).
    assert within(lines[markers["native_kept"]]["net_bytes"], 8 * MB, 0.01)
    assert within(lines[markers["native_freed"]]["alloc_bytes"], 4 * MB, 0.01)
    assert lines[markers["native_freed"]]["net_bytes"] < 0.01 * MB
    # Released by another thread: the allocating line keeps nothing, the
    # releasing thread's line released it.
    assert lines[markers["freed_elsewhere"]]["net_bytes"] < 0.1 * MB
    assert within(lines[markers["thread_frees"]]["freed_bytes"], 6 * MB)
    # Generators: each block on the line of the generator that made it.
    assert within(lines[markers["gen_first"]]["alloc_bytes"], 3 * MB)
    assert within(lines[markers["gen_second"]]["alloc_bytes"], 5 * MB)


SMALL_BLOCKS = ("import sonde\n"
                "def work():\n"
                "    a = [str(i) for i in range(60000)]\n"
                "    b = [(i, i) for i in range(60000)]\n"
                "    return a, b\n"
                "p = sonde.MemoryProfiler(work, sample_bytes=512)\n"
                "with p:\n"
                "    keep = work()\n"
                "lines = p.results()['functions'][0]['lines']\n"
                "print([[l['net_bytes'], l['alloc_bytes']] for l in lines[1:3]])\n")


def test_seed_replays_the_samples(sonde_seed):
    """SONDE_SEED seeds the sampler: the same seed samples the same blocks
    (the figures are equal to the byte), another seed others."""
    def figures(seed):
        return subprocess.run([sys.executable, "-c", SMALL_BLOCKS],
                              env=dict(with_pkg_env(), SONDE_SEED=seed), stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
    first = figures(sonde_seed)
    assert figures(sonde_seed) == first
    assert figures(sonde_seed + "+1") != first


def test_sampling_error_on_small_blocks(sonde_seed):
    """Many small blocks (no block over 200 bytes): the sampled estimate of
    each line's bytes within 10% of the exact count, over several seeds."""
    script = ("import sonde\n"
              "def work():\n"
              "    a = [str(i) for i in range(60000)]\n"
              "    b = [(i, i) for i in range(60000)]\n"
              "    return a, b\n"
              "for s in (0, 512):\n"
              "    p = sonde.MemoryProfiler(work, sample_bytes=s)\n"
              "    with p:\n"
              "        keep = work()\n"
              "    lines = p.results()['functions'][0]['lines']\n"
              "    print([l['net_bytes'] for l in lines[1:3]], [l['alloc_bytes'] for l in lines[1:3]])\n"
              "    del keep\n")
    for k in range(3):
        seed = "%s.%d" % (sonde_seed, k)
        out = subprocess.run([sys.executable, "-c", script],
                             env=dict(with_pkg_env(), SONDE_SEED=seed),
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
        exact, sampled = [json.loads("[%s]" % line.replace("] [", "], [")) for line in
                          out.splitlines()]
        for kind in (0, 1):
            for want, got in zip(exact[kind], sampled[kind]):
                assert want > MB and within(got, want), (seed, exact, sampled)


def test_table_and_leaks(workloads_run):
    _, proc, doc, ref = workloads_run
    table = proc.stderr
    for column in ["Line #", "Mem usage", "Increment", "Occurrences", "Allocated", "Net",
                   "Line Contents"]:
        assert column in table
    assert "Filename: %s (big_blocks)" % os.path.realpath(WORKLOADS) in table
    leaks = doc["leaks"]
    assert within(leaks[0]["bytes"], 20 * MB, 0.001)
    assert leaks[0]["stack"][-1]["line"] == ref["markers"]["big_kept"]
    assert leaks[0]["stack"][-1]["name"] == "big_blocks"
    assert [leak["bytes"] for leak in leaks] == sorted((leak["bytes"] for leak in leaks),
                                                      reverse=True)
    native = [leak for leak in leaks if leak["stack"] and
              leak["stack"][-1]["line"] == ref["markers"]["native_kept"]]
    assert native and native[0]["native_bytes"] == 8 * MB
    assert "Still alive at the end" in table and "big_kept" in table


def test_line_events_give_memory_profilers_columns(tmp_path):
    """--lines: every line followed, so Occurrences are the interpreter's
    hit counts, Mem usage is the RSS at the end of the line and Increment
    the change across it, as memory_profiler measures them."""
    (tmp_path / "g.py").write_text(
        "def grow():\n"
        "    kept = [str(i) * 3 for i in range(100000)]\n"
        "    block = b'x' * (32 << 20)\n"
        "    del block\n"
        "    for i in range(3):\n"
        "        kept.append(i)\n"
        "    return kept\n"
        "grow()\n")
    proc = run_sonde(["mem", "--lines", "-o", "g.json", "g.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "g.json")))
    assert doc["line_events"] is True
    lines = lines_of(doc)
    # Line 2's hits count its list comprehension's line events too.
    assert lines[2]["hits"] > 100000 and [lines[n]["hits"] for n in (3, 4, 5, 6)] == [1, 1, 4, 3]
    assert lines[2]["rss_increment_bytes"] > 3 * MB
    assert within(lines[3]["rss_increment_bytes"], 32 * MB)
    assert within(-lines[4]["rss_increment_bytes"], 32 * MB)
    assert lines[3]["rss_bytes"] >= lines[2]["rss_bytes"] + 30 * MB
    assert within(lines[3]["alloc_bytes"], 32 * MB) and within(lines[4]["freed_bytes"], 32 * MB)
    assert "Every line followed" in proc.stderr
    assert max(l["rss_bytes"] for l in lines.values()) <= doc["rss_high_water_bytes"], doc


@pytest.mark.parametrize("python", version_params())
def test_stack_mode_puts_rss_on_the_line_that_touched_it(python, tmp_path):
    """Without --lines RSS is read as a line allocates (before it touches
    the pages) or releases (before it returns them): the change up to the
    next reading is the reading's line's, as memory_profiler's Increment
    is the change across the line.  (It went to the line of the next
    reading: a 64 MiB bytearray's +64 MiB was on `del`, and `del`'s
    -64 MiB on nothing.)"""
    python = need(python)
    (tmp_path / "g.py").write_text(
        "def grow():\n"
        "    block = bytearray(64 << 20)\n"
        "    small = bytes(10)\n"
        "    del block\n"
        "    return small\n"
        "grow()\n")
    proc = run_sonde(["mem", "-o", "g.json", "g.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "g.json")))
    assert doc["line_events"] is False
    lines = lines_of(doc)
    assert within(lines[2]["rss_increment_bytes"], 64 * MB), lines
    assert within(-lines[4]["rss_increment_bytes"], 64 * MB), lines
    assert lines[2]["rss_bytes"] >= lines[4]["rss_bytes"] + 60 * MB, lines
    # no line's Mem usage above the peak (the kernel's VmHWM can lag a reading)
    assert max(l["rss_bytes"] for l in lines.values()) <= doc["rss_high_water_bytes"], doc


MAPPED_AND_FILLED = """import ctypes, mmap

def mapped_and_filled(n):
    block = mmap.mmap(-1, n)
    view = (ctypes.c_char * n).from_buffer(block)
    ctypes.memset(ctypes.addressof(view), 1, n)
    del view
    return block

def grow():
    block = mapped_and_filled(48 << 20)
    small = bytearray(1 << 20)
    return block, small

grow()
"""


@pytest.mark.parametrize("python", version_params())
def test_stack_mode_reads_rss_as_a_mapping_comes(python, tmp_path):
    """A line whose memory is an anonymous mapping (an allocator's arena:
    jemalloc's in polars, mimalloc's) touched after it is made, with no
    allocation after it on the line: RSS is read as the mapping comes, so
    the line's Increment is the 48 MiB it touched.  (Mappings did not
    count towards the 256 KiB that call for a reading: the line had no
    RSS at all, and its change went to the line read before.)"""
    python = need(python)
    (tmp_path / "m.py").write_text(MAPPED_AND_FILLED)
    proc = run_sonde(["mem", "-f", "grow", "-o", "m.json", "m.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    lines = lines_of(json.load(open(str(tmp_path / "m.json"))))
    assert within(lines[11]["rss_increment_bytes"], 48 * MB), lines
    assert within(lines[12]["rss_increment_bytes"], 1 * MB, 0.25), lines


def test_timeline_and_plot(workloads_run):
    tmp, _, doc, _ = workloads_run
    tl = doc["timeline"]
    assert len(tl["t_ns"]) == len(tl["rss_bytes"]) == len(tl["heap_bytes"]) > 2
    assert tl["t_ns"] == sorted(tl["t_ns"])
    assert {span["name"] for span in tl["spans"]} >= {"big_blocks", "many_small", "worker"}
    svg = ET.parse(str(tmp / "w.svg")).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert len(svg.findall(ns + "polyline")) == 2
    names = {t.text for t in svg.findall(ns + "text")}
    assert "<module>" in names and "big_blocks" in names  # escaped, parsed back


def test_timeline_peak_matches_high_water(tmp_path):
    script = ("import time\n"
              "def spike():\n"
              "    block = b'x' * (120 << 20)\n"
              "    del block\n"
              "spike()\n"
              "time.sleep(0.05)\n")
    (tmp_path / "spike.py").write_text(script)
    proc = run_sonde(["mem", "-o", "s.json", "spike.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "s.json")))
    peak, high_water = max(doc["timeline"]["rss_bytes"]), doc["rss_high_water_bytes"]
    assert high_water > 120 * MB
    # The kernel's counters behind VmHWM and statm are batched per CPU: they
    # may disagree by a little either way.
    assert 0.95 * high_water <= peak <= 1.02 * high_water


def test_fork_child_not_counted(tmp_path):
    script = ("import os\n"
              "def work():\n"
              "    pid = os.fork()\n"
              "    if pid == 0:\n"
              "        junk = b'y' * (64 << 20)\n"
              "        os._exit(0)\n"
              "    os.waitpid(pid, 0)\n"
              "    mine = bytearray(2 << 20)\n"
              "    return mine\n"
              "keep = work()\n")
    (tmp_path / "f.py").write_text(script)
    proc = run_sonde(["mem", "-o", "f.json", "f.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = lines_of(json.load(open(str(tmp_path / "f.json"))))
    assert 5 not in lines  # the child's line: not this process's memory
    assert lines.get(3, {"alloc_bytes": 0})["alloc_bytes"] < MB
    assert within(lines[8]["net_bytes"], 2 * MB)


FORKS = """
import multiprocessing, os, sys

def child_exits(n):
    data = bytearray(n)
    sys.exit(2)

def work():
    pid = os.fork()
    if pid == 0:
        junk = bytearray(4 << 20)
        sys.exit(3)
    _, status = os.waitpid(pid, 0)
    print("fork child", status >> 8)
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=child_exits, args=(1 << 20,))
    p.start()
    p.join()
    print("process child", p.exitcode)
    with ctx.Pool(2) as pool:
        print("pool", sum(pool.map(abs, range(-50, 50))))
    return bytearray(3 << 20)

keep = work()
"""


def run_bounded(args, cwd, python, limit=120):
    """run_sonde in its own session; a run still going after `limit`
    seconds is a hang: the whole session is killed and the test fails."""
    env = dict(os.environ, SONDE_PYTHON=python or sys.executable)
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen([SONDE] + list(args), cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("sonde %s did not end: a forked child hangs" % " ".join(args))
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("lines", [False, True], ids=["stacks", "lines"])
@pytest.mark.parametrize("python", version_params())
def test_forked_children_can_leave(python, lines, tmp_path):
    """A child forked while the timeline thread waits leaves with
    sys.exit (its copy of the books is left alone); multiprocessing's fork
    children too; the parent's figures are its own."""
    python = need(python)
    (tmp_path / "forks.py").write_text(FORKS)
    args = ["mem", "-o", "f.json"] + (["--lines"] if lines else []) + ["forks.py"]
    proc = run_bounded(args, tmp_path, python)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["fork child 3", "process child 2", "pool 2500"]
    got = lines_of(json.load(open(str(tmp_path / "f.json"))))
    assert 11 not in got  # the forked child's line: not this process's memory
    assert within(got[22]["net_bytes"], 3 * MB)


FAILED_REALLOC = """
import ctypes

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.realloc.restype = ctypes.c_void_p
libc.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
api = ctypes.pythonapi
api.PyMem_Malloc.restype = ctypes.c_void_p
api.PyMem_Malloc.argtypes = [ctypes.c_size_t]
api.PyMem_Realloc.restype = ctypes.c_void_p
api.PyMem_Realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

def native():
    p = libc.malloc(8 << 20)
    q = libc.realloc(p, 1 << 62)
    return p, q

def python():
    p = api.PyMem_Malloc(6 << 20)
    q = api.PyMem_Realloc(p, 1 << 62)
    return p, q

keep = native(), python()
print(keep[0][1], keep[1][1])
"""


@pytest.mark.parametrize("lines", [False, True], ids=["stacks", "lines"])
def test_block_survives_failed_realloc(lines, tmp_path):
    """A realloc that fails leaves its block alive: still counted as net
    on the line that allocated it (C allocator and Python's alike)."""
    (tmp_path / "r.py").write_text(FAILED_REALLOC)
    args = ["mem", "-o", "r.json"] + (["--lines"] if lines else []) + ["r.py"]
    proc = run_sonde(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "None None\n"  # both reallocs failed
    doc = json.load(open(str(tmp_path / "r.json")))
    got = lines_of(doc)
    assert within(got[16]["net_bytes"], 8 * MB, 0.01) and got[17]["freed_bytes"] < 4096
    assert within(got[21]["net_bytes"], 6 * MB, 0.01) and got[22]["freed_bytes"] < 4096
    assert doc["heap_peak_bytes"] >= 14 * MB


LIBC_HANDLE = """
import ctypes, ctypes.util

libc = ctypes.CDLL("libc.so.6")
found = ctypes.CDLL(ctypes.util.find_library("c"))
for lib in (libc, found):
    lib.malloc.restype = ctypes.c_void_p
    lib.malloc.argtypes = [ctypes.c_size_t]
    lib.calloc.restype = ctypes.c_void_p
    lib.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    lib.free.argtypes = [ctypes.c_void_p]

def work():
    kept = libc.malloc(8 << 20)
    also = found.calloc(1, 6 << 20)
    gone = libc.malloc(4 << 20)
    libc.free(gone)
    return kept, also

keep = work()
"""


def line_of(source, text):
    return [i for i, line in enumerate(source.splitlines(), 1) if text in line][0]


def test_allocator_reached_through_a_libc_handle(tmp_path):
    """ctypes.CDLL("libc.so.6").malloc and find_library("c"): the C
    library's own handle, looked up with dlsym, still reaches the shim;
    known sizes on their lines."""
    (tmp_path / "h.py").write_text(LIBC_HANDLE)
    proc = run_sonde(["mem", "-o", "h.json", "h.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "h.json")))
    got = lines_of(doc)
    kept, also = line_of(LIBC_HANDLE, "kept ="), line_of(LIBC_HANDLE, "also =")
    gone, free = line_of(LIBC_HANDLE, "gone ="), line_of(LIBC_HANDLE, "libc.free(gone)")
    assert within(got[kept]["net_bytes"], 8 * MB, 0.01)
    assert within(got[also]["net_bytes"], 6 * MB, 0.01)
    assert within(got[gone]["alloc_bytes"], 4 * MB, 0.01) and got[gone]["net_bytes"] < 4096
    assert within(got[free]["freed_bytes"], 4 * MB, 0.01)
    native = {leak["stack"][-1]["line"]: leak["native_bytes"] for leak in doc["leaks"]
              if leak["stack"]}
    assert native[kept] == 8 * MB and native[also] == 6 * MB


RESERVED = """
import ctypes, mmap

libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
MB = 1 << 20

def reserve():
    # what OpenBLAS does for each thread's buffer: mapped, touched a little
    p = libc.mmap(None, 32 * MB, mmap.PROT_READ | mmap.PROT_WRITE,
                  mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    ctypes.memset(p, 1, 3 * MB)
    return p

def shared():
    m = mmap.mmap(-1, 16 * MB)
    m.write(bytes(2 * MB))
    return m

kept = reserve(), shared()
"""


@pytest.mark.parametrize("lines", [False, True], ids=["stacks", "lines"])
def test_mapped_but_untouched_is_reserved_not_heap(lines, tmp_path):
    """Anonymous mappings count as heap as far as they are touched (known
    sizes written); the rest is reserved, apart, in the lines, the leaks,
    the timeline and the table; the heap stays under RSS."""
    (tmp_path / "m.py").write_text(RESERVED)
    proc = run_sonde(["mem", "-o", "m.json"] + (["--lines"] if lines else []) + ["m.py"],
                     tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "m.json")))
    got = lines_of(doc)
    private, shared = line_of(RESERVED, "p = libc.mmap"), line_of(RESERVED, "m = mmap.mmap")
    assert within(got[private]["net_bytes"], 3 * MB, 0.01)
    assert within(got[private]["reserved_bytes"], 29 * MB, 0.01)
    assert within(got[shared]["net_bytes"], 2 * MB, 0.01)
    assert within(got[shared]["reserved_bytes"], 14 * MB, 0.01)
    assert within(doc["reserved_bytes"], 43 * MB, 0.01)
    leaks = {leak["stack"][-1]["line"]: leak for leak in doc["leaks"] if leak["stack"]}
    assert within(leaks[private]["bytes"], 3 * MB, 0.01)
    assert within(leaks[private]["reserved_bytes"], 29 * MB, 0.01)
    tl = doc["timeline"]
    assert len(tl["reserved_bytes"]) == len(tl["t_ns"]) and max(tl["reserved_bytes"]) >= 43 * MB
    assert max(tl["heap_bytes"]) <= max(tl["rss_bytes"]) and doc["heap_peak_bytes"] < 16 * MB
    assert "Reserved" in proc.stderr and "29.0 MiB reserved (mapped, never touched)" in proc.stderr
    svg = run_sonde(["report", "m.json", "-f", "svg", "-o", "m.svg"], tmp_path)
    assert svg.returncode == 0, svg.stderr
    root = ET.parse(str(tmp_path / "m.svg")).getroot()
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 3


def test_numpy_import_is_mostly_reserved(tmp_path):
    """import numpy: OpenBLAS maps a buffer per thread and barely touches
    it.  The followed heap stays under the kernel's RSS high-water mark,
    and the reservation is reported apart (when numpy is installed)."""
    found = subprocess.run([sys.executable, "-c", "import numpy"], stderr=subprocess.DEVNULL)
    if found.returncode != 0:
        pytest.skip("numpy is not installed for %s" % sys.executable)
    (tmp_path / "n.py").write_text("import numpy\na = numpy.ones((300, 300))\nb = a @ a\n")
    proc = run_sonde(["mem", "-o", "n.json", "n.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "n.json")))
    assert doc["heap_peak_bytes"] < doc["rss_high_water_bytes"]
    assert max(doc["timeline"]["heap_bytes"]) < max(doc["timeline"]["rss_bytes"])
    assert doc["reserved_bytes"] > 16 * MB


def test_out_of_memory_still_writes(tmp_path):
    script = ("blocks = []\n"
              "def grow():\n"
              "    while True:\n"
              "        blocks.append(bytearray(1 << 20))\n"
              "grow()\n")
    (tmp_path / "oom.py").write_text(script)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (600 * MB, 600 * MB))

    proc = run_sonde(["mem", "-o", "oom.json", "oom.py"], tmp_path, preexec_fn=limit)
    assert proc.returncode == 1
    assert "MemoryError" in proc.stderr
    assert "sonde/" not in proc.stderr.split("MemoryError")[0]  # the program's traceback only
    lines = lines_of(json.load(open(str(tmp_path / "oom.json"))))
    assert lines[4]["alloc_bytes"] > 200 * MB


def test_children_do_not_inherit_the_shim(tmp_path):
    (tmp_path / "c.py").write_text(
        "import os, subprocess\n"
        "print(os.environ.get('LD_PRELOAD', ''))\n"
        "subprocess.run(['sh', '-c', 'echo child:$LD_PRELOAD'])\n")
    proc = run_sonde(["mem", "c.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "libsonde_alloc" not in proc.stdout and "child:" in proc.stdout


def test_api_hooks_removed_on_exit():
    script = ("import sonde\n"
              "def work(n):\n"
              "    return bytearray(n)\n"
              "p = sonde.MemoryProfiler(work)\n"
              "with p:\n"
              "    a = work(3 << 20)\n"
              "before = p.results()['functions'][0]['lines'][1]['alloc_bytes']\n"
              "b = work(5 << 20)\n"
              "after = p.results()['functions'][0]['lines'][1]['alloc_bytes']\n"
              "q = sonde.MemoryProfiler(work)\n"
              "with q:\n"
              "    c = work(1 << 20)\n"
              "print(before, after, q.results()['functions'][0]['lines'][1]['alloc_bytes'])\n")
    out = subprocess.run([sys.executable, "-c", script], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    before, after, second = map(int, out.split())
    assert within(before, 3 * MB, 0.01) and after == before and within(second, MB, 0.01)


def test_report_reads_a_mem_file(workloads_run, tmp_path):
    tmp, proc, _, _ = workloads_run
    again = run_sonde(["report", str(tmp / "w.json")], tmp_path)
    assert again.returncode == 0 and again.stdout == proc.stderr
    drawn = run_sonde(["report", str(tmp / "w.json"), "-f", "svg", "-o", "x.svg"], tmp_path)
    assert drawn.returncode == 0
    assert open(str(tmp_path / "x.svg")).read() == open(str(tmp / "w.svg")).read()
    wrong = run_sonde(["report", str(tmp / "w.json"), "-f", "json"], tmp_path)
    assert wrong.returncode == 2 and "a mem profile becomes a table or svg" in wrong.stderr


@pytest.mark.parametrize("args, message", [
    ([], "what should run?"),
    (["--interval", "0", "x.py"], "--interval takes milliseconds"),
    (["--interval", "abc", "x.py"], "--interval takes milliseconds"),
    (["--sample-bytes", "-3", "x.py"], "--sample-bytes"),
    (["missing.py"], "cannot run 'missing.py'"),
    (["--plot", "/nonexistent/dir/p.svg", "x.py"], "cannot write '/nonexistent/dir/p.svg'"),
    (["--bogus", "x.py"], "unknown option '--bogus'"),
])
def test_mem_bad_input(tmp_path, args, message):
    (tmp_path / "x.py").write_text("pass\n")
    proc = run_sonde(["mem"] + args, tmp_path)
    assert proc.returncode in (1, 2)
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2


LISTENING = "\n" * 300 + """
def leaf():
    return 1

def loop():
    t = 0
    for i in range(100):
        t += leaf()
    return t

for _ in range(2000):
    loop()
"""


@pytest.mark.parametrize("python", version_params())
def test_listening_allocates_nothing(python, tmp_path):
    """What the interpreter allocates only to report events to sonde (3.12+:
    ints for offsets and line numbers past 256; 3.11: a frame object per
    call for the trace function) is not the program's memory."""
    python = need(python)
    (tmp_path / "l.py").write_text(LISTENING)
    proc = run_sonde(["mem", "--lines", "--sample-bytes", "0", "-o", "l.json", "l.py"], tmp_path,
                     python=python)
    assert proc.returncode == 0, proc.stderr
    lines = lines_of(json.load(open(str(tmp_path / "l.json"))))
    assert lines[308]["hits"] == 200000 and lines[308]["alloc_bytes"] < 1024  # a first call's frame
    assert lines[303]["hits"] == 200000 and lines[303]["alloc_bytes"] == 0


METHOD_CALLS = """
import collections, sys, tracemalloc

def drain(queue, table, text):
    n = 0
    while queue:
        item = queue.popleft()
        table.get(item)
        text.startswith("ab")
        n += 1
    return n

def fill():
    return collections.deque(range(20000)), dict.fromkeys(range(100)), "abc"

if sys.argv[1:] == ["--reference"]:
    # A bare run's own figure: the most memory traced while drain runs,
    # over what was traced before it.
    args = fill()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    drain(*args)
    print(tracemalloc.get_traced_memory()[1] - before)
else:
    drain(*fill())
"""


@pytest.mark.parametrize("python", version_params())
def test_method_calls_under_line_events_allocate_nothing(python, tmp_path):
    """With --lines, up to 3.11 the interpreter makes a bound method object
    for each call of a method such as deque.popleft only to report it to
    profilers: not the program's memory.  A bare run allocates nothing in
    drain (tracemalloc's peak), and sonde counts nothing there either."""
    python = need(python)
    (tmp_path / "m.py").write_text(METHOD_CALLS)
    bare = subprocess.run([python, str(tmp_path / "m.py"), "--reference"], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    assert int(bare) < 1024
    proc = run_sonde(["mem", "--lines", "--sample-bytes", "0", "-o", "m.json", "-f", "drain",
                      "m.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    lines = lines_of(json.load(open(str(tmp_path / "m.json"))))
    for number in (7, 8, 9):
        assert lines[number]["hits"] == 20000
        assert lines[number]["alloc_bytes"] == 0, (number, lines[number])


DECORATED = """
@profile
def build(n):
    return [bytearray(1024) for _ in range(n)]

kept = build(4096)
"""


@pytest.mark.parametrize("python", version_params())
def test_profile_decorator(python, tmp_path):
    """@profile registers the function while the profiler already runs."""
    python = need(python)
    (tmp_path / "d.py").write_text(DECORATED)
    proc = run_sonde(["mem", "-o", "d.json", "d.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "d.json")))
    assert [f["name"] for f in doc["functions"]] == ["build"]
    line = lines_of(doc)[4]
    assert within(line["net_bytes"], 4096 * (1024 + 57), 0.1)


NOT_UTF8_MAIN = """
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.fsdecode(b"sub\\xfe")))
import other

def work(n):
    return bytearray(n)

work(1 << 20)
other.work(2 << 20)
print(json.dumps([work.__code__.co_filename, other.work.__code__.co_filename]))
"""


@pytest.mark.parametrize("mode", ["run", "lines", "mem"])
@pytest.mark.parametrize("python", version_params())
def test_file_names_that_are_not_utf8(python, mode, tmp_path):
    """Scripts in folders whose names are not UTF-8 run under every mode;
    each function keeps its file's name, as the interpreter's co_filename
    (no merging of two files' functions), in the files written and, as
    "\\xNN" escapes, in the table."""
    python = need(python)
    top = os.path.join(os.fsencode(str(tmp_path)), b"m\xff")
    os.makedirs(os.path.join(top, b"sub\xfe"))
    with open(os.path.join(top, b"main.py"), "w") as f:
        f.write(NOT_UTF8_MAIN)
    with open(os.path.join(top, b"sub\xfe", b"other.py"), "w") as f:
        f.write("def work(n):\n    return bytearray(n)\n")
    out = {"run": "p.prof", "lines": "l.json", "mem": "m.json"}[mode]
    args = [SONDE, mode, "-o", out] + (["-l", "0"] if mode == "run" else ["-f", "work"])
    args.append("main.py")
    env = dict(os.environ, SONDE_PYTHON=python)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(args, cwd=top, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    files = json.loads(proc.stdout.decode())
    assert len(set(files)) == 2 and "\udcff" in files[1]  # 3.8: main.py's is relative
    if mode != "run":
        doc = json.load(open(os.path.join(top, out.encode())))
        assert {f["file"] for f in doc["functions"] if f["name"] == "work"} == set(files)
    if mode == "run":
        import pstats
        keys = pstats.Stats(os.fsdecode(os.path.join(top, b"p.prof"))).stats
        assert {k[0] for k in keys if k[2] == "work"} == set(files)
    for name in files:  # the table shows a byte that is not UTF-8 as \xNN
        shown = "".join("\\x%02x" % (ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c
                        for c in name)
        assert shown.encode() in proc.stderr, (shown, proc.stderr[-3000:])


STACKS = """\
keep = []

def build(n):
    keep.append([bytearray(1000) for _ in range(n)])

def main():
    build(300)

main()
"""


@pytest.mark.parametrize("python", version_params())
def test_stacks_are_the_programs_own(python, tmp_path):
    """Every allocating stack ends at the program's <module>, once: the
    launcher starts the program from the program's own first frame (so
    that its argv is a bare run's), and that frame and the launcher's are
    left out.  Before: every stack ended '<module>; <module>', and the
    module's first line got all the program's memory."""
    python = need(python)
    (tmp_path / "s.py").write_text(STACKS)
    proc = run_sonde(["mem", "-o", "s.json", "s.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    stacks = {tuple(f["name"] for f in e["stack"]) for e in doc["allocations"]}
    assert ("<module>", "main", "build") in stacks, stacks
    assert all(s.count("<module>") <= 1 and (not s or s[0] == "<module>") for s in stacks), stacks


WORKERS = """
import ctypes, sys, tracemalloc
from concurrent.futures import ThreadPoolExecutor

libc = ctypes.CDLL("libc.so.6")  # its calls release the GIL
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]

def make(n):
    return [bytearray(1000) for _ in range(n)]

def work():
    ex = ThreadPoolExecutor(4)
    parts = list(ex.map(make, [5000] * 4))
    blocks = list(ex.map(libc.malloc, [3 << 20] * 4))
    ex.shutdown()
    return parts, blocks

if sys.argv[1:] == ["reference"]:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [make(5000) for _ in range(4)]
    print(tracemalloc.get_traced_memory()[0] - before)
else:
    keep = work()
"""


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("how", ["stack", "lines", "no-native"])
def test_workers_memory_goes_to_the_line_that_waits(python, how, tmp_path):
    """What a thread pool's workers allocate belongs to the line that
    handed them the work and waits for it, as a callee's bytes are its
    caller's: Python objects the workers make (tracemalloc's count of the
    same objects made in one thread) and C blocks of known size they
    allocate without the GIL (ctypes releases it; the shim names the
    starting thread); the timeline shows the function running at the
    peak.  Before, both were 'outside the profiled functions', the lines
    showed a few KiB and no function ran at the peak."""
    python = need(python)
    (tmp_path / "w.py").write_text(WORKERS)
    reference = subprocess.run([python, "w.py", "reference"], cwd=str(tmp_path),
                               capture_output=True, text=True, check=True)
    made = int(reference.stdout)
    flags = {"stack": [], "lines": ["--lines"], "no-native": ["--no-native"]}[how]
    proc = run_sonde(["mem", "-o", "w.json"] + flags + ["w.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "w.json")))
    got = lines_of(doc)
    objects, blocks = line_of(WORKERS, "ex.map(make"), line_of(WORKERS, "ex.map(libc")
    assert made > 16 * MB and within(got[objects]["net_bytes"], made), (made, got[objects])
    if how != "no-native":  # C blocks are seen through the shim
        assert within(got[blocks]["net_bytes"], 12 * MB, 0.01), got[blocks]
    # The heap reaches 90% of its peak inside work (the program's last
    # small allocations may raise the peak itself after work returned).
    timeline = doc["timeline"]
    high = 0.9 * max(timeline["heap_bytes"])
    at = next(t for t, heap in zip(timeline["t_ns"], timeline["heap_bytes"]) if heap >= high)
    assert any(s["name"] == "work" and s["start_ns"] <= at <= (s["end_ns"] or at)
               for s in timeline["spans"]), (at, timeline["spans"])


PAUSE = r'''
import os, subprocess
from concurrent.futures import ThreadPoolExecutor

# Writes a byte once sonde's timeline thread has slept 40 more times (at
# most twice per reading of the program's stack): a readiness signal that
# no load can hurry.
WATCH = """
t=$(grep -l '^sonde-timeline$' /proc/$1/task/*/comm | cut -d/ -f5)
count() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$1/task/$t/status; }
v=$(count $1)
while [ "$(count $1)" -lt $((v + 40)) ]; do sleep 0.01; done
echo x
"""

def make(n):
    return [bytearray(1000) for _ in range(n)]

def work():
    with ThreadPoolExecutor(4) as ex:
        return list(ex.map(make, [5000] * 4))

def pause(fd):
    os.read(fd, 1)  # waits for the watcher, allocating only what it returns

keep = work()
watch = subprocess.Popen(["sh", "-c", WATCH, "sh", str(os.getpid())], stdout=subprocess.PIPE)
pause(watch.stdout.fileno())
watch.wait()
'''


@pytest.mark.parametrize("python", version_params())
def test_timeline_shows_a_function_that_waits_without_allocating(python, tmp_path):
    """From the stack, the timeline's spans come from the timeline
    thread's readings of the program's main thread too, not only from
    allocation samples: a function that waits without allocating (for a
    byte a watcher writes after 40 of the timeline thread's sleeps) runs
    across the readings made meanwhile, and one that waits for a thread
    pool runs while the heap rises to its peak.  Before, the waiting
    function had at most a span of no length, where its one allocation
    was sampled."""
    python = need(python)
    (tmp_path / "p.py").write_text(PAUSE)
    proc = run_sonde(["mem", "-o", "p.json", "p.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    timeline = json.load(open(str(tmp_path / "p.json")))["timeline"]
    spans = [s for s in timeline["spans"] if s["name"] == "pause"]
    readings = [sum(s["start_ns"] <= t <= s["end_ns"] for t in timeline["t_ns"]) for s in spans]
    assert readings and max(readings) >= 10, (spans, readings)
    # The heap first reaches 90% of its peak inside work (the pool's lists
    # stay alive, and later small allocations may raise the peak itself).
    high = 0.9 * max(timeline["heap_bytes"])
    at = next(t for t, heap in zip(timeline["t_ns"], timeline["heap_bytes"]) if heap >= high)
    assert any(s["name"] == "work" and s["start_ns"] <= at <= s["end_ns"]
               for s in timeline["spans"]), (at, timeline["spans"])


ENDED_STARTER = """
import ctypes, threading

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
starter_ended, worker_done = threading.Event(), threading.Event()
kept = []

def worker():
    starter_ended.wait()
    for _ in range(200):  # Python objects with the GIL, C blocks without it
        kept.append([bytearray(512) for _ in range(50)])
        kept.append(libc.malloc(64 << 10))
    worker_done.set()

def starter():
    threading.Thread(target=worker).start()

def work():
    first = threading.Thread(target=starter)
    first.start()
    first.join()
    # the starter's thread state is freed; new threads may take its memory
    others = [threading.Thread(target=len, args=("x",)) for _ in range(8)]
    for t in others:
        t.start()
    starter_ended.set()
    for t in others:
        t.join()
    worker_done.wait()

work()
print(len(kept))
"""


@pytest.mark.parametrize("python", version_params())
def test_worker_whose_starter_ended(python, tmp_path):
    """A worker whose starting thread has ended (its thread state freed,
    its memory reused by new threads) allocates on: the ended starter is
    not read (its lines, and those of the threads that took its memory,
    get none of the worker's 18 MiB), the worker's own lines keep them,
    and so do the lines of the starter's starter, which waits for the
    worker (the shim hands a thread its whole chain of starters); the
    program runs to its end with its output."""
    python = need(python)
    (tmp_path / "e.py").write_text(ENDED_STARTER)
    proc = run_sonde(["mem", "-o", "e.json", "e.py"], tmp_path, python=python)
    assert proc.returncode == 0 and proc.stdout == "400\n", proc.stderr
    doc = json.load(open(str(tmp_path / "e.json")))
    net = {f["name"]: sum(line["net_bytes"] for line in f["lines"]) for f in doc["functions"]}
    assert net["worker"] > 16 * MB and net["starter"] < MB and net["work"] > 16 * MB, net


NESTED = """
import ctypes, sys, threading, tracemalloc

libc = ctypes.CDLL("libc.so.6")  # its calls release the GIL
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
kept = []

def make():
    kept.append([bytearray(1000) for _ in range(16000)])
    kept.extend(libc.malloc(3 << 20) for _ in range(4))

def relay():
    inner = threading.Thread(target=make)
    inner.start()
    inner.join()

def work():
    outer = threading.Thread(target=relay)
    outer.start()
    outer.join()

if sys.argv[1:] == ["reference"]:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    objects = [bytearray(1000) for _ in range(16000)]
    print(tracemalloc.get_traced_memory()[0] - before)
else:
    work()
"""


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("how", ["stack", "lines"])
def test_thread_started_by_a_worker_counts_for_every_line_that_waits(python, how, tmp_path):
    """A thread started by a worker works for the worker's starter too: the
    objects (tracemalloc's count of the same made in one thread) and the
    12 MiB of C blocks the inner thread makes go to the worker that starts
    it and waits for it, and to the main thread's function that does the
    same with the worker (to the lines each is on meanwhile).  Before, only
    the worker had them."""
    python = need(python)
    (tmp_path / "n.py").write_text(NESTED)
    reference = subprocess.run([python, "n.py", "reference"], cwd=str(tmp_path),
                               capture_output=True, text=True, check=True)
    made = int(reference.stdout) + 12 * MB
    flags = ["--lines"] if how == "lines" else []
    proc = run_sonde(["mem", "-o", "n.json"] + flags + ["n.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    doc = json.load(open(str(tmp_path / "n.json")))
    net = {f["name"]: sum(line["net_bytes"] for line in f["lines"]) for f in doc["functions"]}
    assert within(net["relay"], made) and within(net["work"], made), (net, made)
