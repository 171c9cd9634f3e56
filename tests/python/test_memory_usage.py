"""sonde.memory_usage, memory_profiler's memory_usage(): each value
checked against the kernel's own count, /proc/PID/status VmRSS, read by
the measured process at the same moment (a known allocation held), and
the peak of a 100 MB allocation against memory_profiler's own figure."""

import subprocess
import sys

import pytest

from conftest import PKG

sys.path.insert(0, PKG)
import sonde  # noqa: E402


def vm_rss_mib(pid="self"):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise AssertionError("no VmRSS")


def hold(mib):
    """Allocates and touches mib MiB; returns it with VmRSS then."""
    block = b"x" * (mib << 20)
    return block, vm_rss_mib()


def test_this_process_now():
    mib, = sonde.memory_usage(-1)
    assert abs(mib - vm_rss_mib()) < 1


def test_a_function_s_peak_is_what_the_kernel_counted():
    """The last value is taken after the function returns, with what it
    returned still held: the peak equals VmRSS at the allocation."""
    before, = sonde.memory_usage(-1)
    peak, (block, rss) = sonde.memory_usage((hold, (64,)), interval=0.01, max_usage=True,
                                            retval=True)
    assert len(block) == 64 << 20
    assert abs(peak - rss) < 1, (peak, rss)
    assert peak - before >= 63
    values = sonde.memory_usage((hold, (8,), {}), interval=0.01, timestamps=True)
    assert len(values) >= 2 and all(len(v) == 2 for v in values)
    assert [t for _m, t in values] == sorted(t for _m, t in values)


HOLDER = r"""
import sys
if len(sys.argv) > 2:  # a parent: its child holds the memory, and says "ready"
    import subprocess
    child = subprocess.Popen([sys.executable, __file__, sys.argv[1]], stdout=sys.stdout)
    sys.stdin.readline()
    child.kill()
    sys.exit(0)
block = b"x" * (int(sys.argv[1]) << 20)
print("ready", flush=True)
sys.stdin.readline()
"""


def start_holder(tmp_path, mib, parent=False):
    prog = tmp_path / "holder.py"
    prog.write_text(HOLDER)
    proc = subprocess.Popen([sys.executable, str(prog), str(mib)] + (["parent"] if parent else []),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            universal_newlines=True)
    assert proc.stdout.readline() == "ready\n"
    return proc


def end(proc):
    proc.stdin.close()
    proc.wait()
    proc.stdout.close()


def test_another_process_for_a_time(tmp_path):
    proc = start_holder(tmp_path, 40)
    try:
        values = sonde.memory_usage(proc.pid, interval=0.01, timeout=0.05)
        rss = vm_rss_mib(proc.pid)
        assert len(values) == 5
        assert all(abs(v - rss) < 1 for v in values), (values, rss)
        assert len(sonde.memory_usage(proc.pid, interval=0.01, max_iterations=3)) == 3
    finally:
        end(proc)


def test_a_popen_until_it_ends(tmp_path):
    proc = start_holder(tmp_path, 8)
    proc.stdin.close()  # it ends now, on its own
    values = sonde.memory_usage(proc, interval=0.01)
    assert proc.poll() is not None and 1 <= len(values)
    proc.stdout.close()


def test_children_are_added_when_asked(tmp_path):
    proc = start_holder(tmp_path, 48, parent=True)  # "ready" comes from the child
    try:
        alone, = sonde.memory_usage(proc.pid)
        together, = sonde.memory_usage(proc.pid, include_children=True)
        child, = [int(k) for k in open("/proc/%d/task/%d/children" % (proc.pid, proc.pid))
                  .read().split()]
        assert abs(together - alone - vm_rss_mib(child)) < 1
    finally:
        end(proc)


def test_stream_writes_mprof_lines(tmp_path):
    import io
    out = io.StringIO()
    assert sonde.memory_usage(-1, stream=out) is None
    kind, mib, when = out.getvalue().split()
    assert kind == "MEM" and abs(float(mib) - vm_rss_mib()) < 1 and float(when) > 0


@pytest.mark.parametrize("kw", [{"multiprocess": True}, {"interval": 0},
                                {"backend": "tracemalloc"}])
def test_what_it_does_not_do_says_so(kw):
    with pytest.raises(ValueError, match="memory_usage: "):
        sonde.memory_usage(-1, **kw)


def test_the_peak_is_memory_profilers(tmp_path):
    """A function that allocates 100 MB: the peak within 5% of what
    memory_profiler's memory_usage gives for the same call, in the same
    process (the function's result held until after each returns)."""
    memory_profiler = pytest.importorskip(
        "memory_profiler", reason="memory_profiler is not installed in the test environment "
        "(make test installs it)")
    theirs, (block, _rss) = memory_profiler.memory_usage((hold, (100,)), interval=0.01,
                                                         max_usage=True, retval=True)
    del block
    ours, (block, _rss) = sonde.memory_usage((hold, (100,)), interval=0.01, max_usage=True,
                                             retval=True)
    del block
    assert abs(ours - theirs) <= 0.05 * theirs, (ours, theirs)


def test_no_function_is_run_twice():
    """memory_profiler runs a function again when it gave under 4 values;
    sonde never does."""
    calls = []
    sonde.memory_usage((calls.append, (1,)), interval=10)
    assert calls == [1]
