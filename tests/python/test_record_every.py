"""sonde record --every: a profile per interval into a folder, for a service
profiled for hours, bounded by --keep / --keep-bytes, and summed back by
sonde merge.  The references are the sampler's own counts (every kept
stack lands in exactly one file, at a time inside that file's interval)
and the clock the files' names and starts are cut from."""

import calendar
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import SONDE, need, start_ready, stop_ready, version_params

PROGRAM = r'''
def alpha():
    s = 0
    for i in range(20000):
        s += i
    return s

def beta():
    s = 0
    for i in range(20000):
        s -= i
    return s

print("ready", flush=True)
while True:
    alpha()
    beta()
'''

NAME = re.compile(r"^sonde-(\d+)-(\d{8}T\d{6}Z)\.json$")


def record(pid, out, *extra, timeout=120):
    return subprocess.run([SONDE, "record", "-p", str(pid), "--mode", "wall", "-f", "json",
                           "-o", str(out)] + list(extra),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)


def kept_of(summary):
    return int(re.search(r"thread stacks read, (\d+) kept", summary).group(1))


def start_ns(about):
    """The file's start, ns since the epoch, from its "start" (microseconds)."""
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{6})Z$", about["start"])
    secs = calendar.timegm(tuple(int(x) for x in m.groups()[:6]))
    return secs * 10**9 + int(m.group(7)) * 1000


def sample_times(doc):
    """Every sample's time in the file, ns from its start (the timeline
    keeps each thread's as deltas)."""
    times = []
    for thread in doc["timeline"]["threads"]:
        t = 0
        for delta in thread["t_ns"]:
            t += delta
            times.append(t)
    return times


def interval_files(folder):
    names = sorted(os.listdir(str(folder)))
    return [(name, json.loads((folder / name).read_text())) for name in names]


@pytest.mark.parametrize("python", version_params())
def test_every_kept_stack_lands_in_the_file_of_its_interval(python, tmp_path):
    """-d 3 --every 1: three files one second apart, named by their start
    (no sample after -d: no fourth); the stacks the summary says were kept
    are the files' samples, each at a time inside its file's interval, and
    a file names only the functions its samples use; merge sums them under
    one frame of the process and one thread (its windows are apart, so not
    "#2")."""
    python = need(python)
    proc = start_ready(python, tmp_path, PROGRAM)
    try:
        out = record(proc.pid, tmp_path / "every", "--every", "1", "-d", "3")
    finally:
        stop_ready(proc)
    assert out.returncode == 0, out.stderr
    files = interval_files(tmp_path / "every")
    assert len(files) == 3, (files, out.stderr)
    assert "sonde: wrote %d files (json) into %s, one per 1 s of sampling" % (
        len(files), tmp_path / "every") in out.stderr, out.stderr
    first = start_ns(files[0][1]["about"])
    samples = 0
    for k, (name, doc) in enumerate(files):
        about = doc["about"]
        m = NAME.match(name)
        assert m and int(m.group(1)) == proc.pid == about["pid"], name
        assert m.group(2) == time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(start_ns(about) // 10**9))
        # intervals follow one clock: each starts a whole number of seconds after the first
        step = start_ns(about) - first
        assert step % 10**9 == 0 and step >= k * 10**9, (k, step)
        if k < len(files) - 1:
            assert about["wall_s"] == 1, about
        times = sample_times(doc)
        assert times and all(0 <= t < about["wall_s"] * 1e9 for t in times), (name, times)
        samples += len(times)
        used = {node[0] for node in doc["nodes"][1:]} - {-1}
        assert used == set(range(len(doc["functions"]))), (name, doc["functions"])
    assert samples == kept_of(out.stderr), out.stderr

    merged = tmp_path / "merged.json"
    m = subprocess.run([SONDE, "merge"] + [str(tmp_path / "every" / name) for name, _ in files] +
                       ["-o", str(merged)], stderr=subprocess.PIPE, universal_newlines=True)
    assert m.returncode == 0, m.stderr
    doc = json.loads(merged.read_text())
    labels = [f["name"] for f in doc["functions"] if f["name"].startswith("process ")]
    assert len(labels) == 1 and labels[0].startswith("process %d (" % proc.pid) and \
        "#" not in labels[0], labels
    assert len(sample_times(doc)) == samples
    # one process, its one thread: the windows' MainThreads are one thread
    assert [t["name"] for t in doc["threads"]] == ["MainThread in " + labels[0]], doc["threads"]
    assert doc["about"].get("processes", 1) == 1, doc["about"]


def test_a_command_started_names_the_files_after_its_pid(tmp_path):
    """-o DIR -- CMD: the files are named after the command's pid (the
    program prints its own), and the interval it ended in is written."""
    (tmp_path / "prog.py").write_text(
        "import os, time\n"
        "print(os.getpid(), flush=True)\n"
        "def spin():\n"
        "    t = time.thread_time()\n"
        "    while time.thread_time() - t < 2.2:\n"
        "        pass\n"
        "spin()\n")
    out = subprocess.run([SONDE, "record", "--mode", "wall", "-f", "json", "--every", "1", "-o",
                          str(tmp_path / "cmd"), "--", sys.executable, str(tmp_path / "prog.py")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout)
    files = interval_files(tmp_path / "cmd")
    assert len(files) >= 2 and all(name.startswith("sonde-%d-" % pid) for name, _ in files), files
    assert sum(len(sample_times(doc)) for _, doc in files) == kept_of(out.stderr), out.stderr


def test_nothing_recorded_leaves_no_folder(tmp_path):
    """A process sonde cannot read: one line, exit 1, and no empty folder
    where the files would have gone."""
    out = subprocess.run([SONDE, "record", "--every", "1", "-o", str(tmp_path / "none"), "--",
                          "true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=60)
    assert out.returncode == 1 and "nothing recorded" in out.stderr, out.stderr
    assert not (tmp_path / "none").exists()


def test_keep_removes_the_oldest_of_its_own_files(tmp_path):
    """--keep 2 leaves the two newest files this run wrote, and a file the
    folder held before; --keep-bytes 1 the newest alone."""
    python = sys.executable
    proc = start_ready(python, tmp_path, PROGRAM)
    try:
        folder = tmp_path / "kept"
        folder.mkdir()
        (folder / "mine.txt").write_text("the user's")
        out = record(proc.pid, folder, "--every", "1", "-d", "4.5", "--keep", "2")
        bytes_out = record(proc.pid, tmp_path / "bytes", "--every", "1", "-d", "3.5",
                           "--keep-bytes", "1")
    finally:
        stop_ready(proc)
    assert out.returncode == 0, out.stderr
    written = int(re.search(r"wrote (\d+) files", out.stderr).group(1))
    assert written >= 3, out.stderr
    names = sorted(os.listdir(str(folder)))
    assert "mine.txt" in names and (folder / "mine.txt").read_text() == "the user's"
    kept = [n for n in names if n != "mine.txt"]
    assert len(kept) == 2, names
    assert "removed the %d oldest for --keep (2 stay" % (written - 2) in out.stderr, out.stderr
    newest = re.search(r"the last (\S+?);", out.stderr).group(1)
    assert os.path.basename(newest) == kept[-1], (newest, kept)

    assert bytes_out.returncode == 0, bytes_out.stderr
    left = os.listdir(str(tmp_path / "bytes"))
    assert len(left) == 1 and "for --keep-bytes (1 stay" in bytes_out.stderr, (left,
                                                                                bytes_out.stderr)


def test_stopped_by_a_signal_writes_the_interval_it_was_in(tmp_path):
    """SIGTERM to sonde (a service's supervisor stopping it) writes the
    interval it was in, beside the whole ones: every kept stack is in a
    file."""
    python = sys.executable
    proc = start_ready(python, tmp_path, PROGRAM)
    folder = tmp_path / "stopped"
    try:
        sonde = subprocess.Popen([SONDE, "record", "-p", str(proc.pid), "--mode", "wall", "-f",
                                  "json", "--every", "1", "-o", str(folder)],
                                 stderr=subprocess.PIPE, universal_newlines=True)
        # readiness: the first interval's file is there
        deadline = time.monotonic() + 60
        while not (folder.exists() and os.listdir(str(folder))) and time.monotonic() < deadline:
            time.sleep(0.05)
        sonde.send_signal(signal.SIGTERM)
        _, err = sonde.communicate(timeout=60)
    finally:
        stop_ready(proc)
    assert sonde.returncode == 0, err
    files = interval_files(folder)
    assert len(files) >= 2, (files, err)
    assert sum(len(sample_times(doc)) for _, doc in files) == kept_of(err), err


@pytest.mark.parametrize("args, says", [
    (["--keep", "3"], "--keep and --keep-bytes bound --every's files: give --every SECONDS too"),
    (["--every", "0.5"], "--every needs a number of seconds from 1 to 10000000, not '0.5'"),
    (["--every", "2", "--keep-bytes", "12Q"], "--keep-bytes needs a size in bytes"),
    (["--every", "2", "--keep-bytes", "100 "], "--keep-bytes needs a size in bytes"),
    (["--every", "2", "-o", "FILE"], "-o must name one, and"),
])
def test_bad_every_options_say_what_is_wrong(tmp_path, args, says):
    (tmp_path / "FILE").write_text("")
    out = subprocess.run([SONDE, "record"] + args + ["--", "true"], cwd=str(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=60)
    assert out.returncode == 2 and says in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
