"""Every file sonde writes -- each command's -o and --plot, its pages, and
the Python API's dump_stats, write and dump_json -- goes through one writer
(src/core/outfile.c): one message when it cannot be written, and -o is
checked before any work starts."""

import json
import os
import subprocess
import sys

import pytest

from conftest import SONDE, run_sonde, with_pkg_env

PROGRAM = "def work(n):\n    return sum(range(n))\nwork(1000)\n"
FULL = "cannot write '/dev/full': No space left on device"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("output")
    (tmp / "w.py").write_text(PROGRAM)
    proc = run_sonde(["run", "-o", "w.prof", "w.py"], tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [
    ["run", "-o", "/dev/full", "w.py"],
    ["lines", "-o", "/dev/full", "w.py"],
    ["mem", "--no-native", "-o", "/dev/full", "w.py"],
    ["mem", "--no-native", "--plot", "/dev/full", "w.py"],
    ["report", "w.prof", "-f", "json", "-o", "/dev/full"],
    ["report", "w.prof", "-o", "/dev/full"],
    ["view", "w.prof", "-o", "/dev/full"],
    ["diff", "w.prof", "w.prof", "-o", "/dev/full"],
], ids=lambda args: " ".join(args[:3]))
def test_a_full_device_reads_the_same_everywhere(made, args):
    """A device that takes no byte: every command says so in the same line
    (the profiled program itself runs and ends as it would)."""
    proc = run_sonde(args, made)
    assert proc.returncode == 1
    assert "sonde: " + FULL in proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [
    ["report", "w.prof"],
    ["report", "w.prof", "-f", "collapsed"],
    ["report", "w.prof", "-o", "-"],
], ids=" ".join)
def test_a_full_standard_output_is_named_so(made, args):
    """`sonde report X > /dev/full`: one line naming the standard output,
    exit 1 (not a quiet success, not a name '-' the user never typed)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([SONDE] + args, cwd=str(made),
                              stdout=full, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 1
    assert proc.stderr == ("sonde: cannot write to the standard output: No space left on "
                           "device\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_the_python_api_writes_as_the_commands_do(tmp_path):
    """Profile.dump_stats and write, LineProfiler and MemoryProfiler's
    dump_json: OSError with the commands' message, nothing left behind."""
    code = """
import sonde
def work():
    return sum(range(100))
prof = sonde.Profile()
prof.runcall(work)
lines = sonde.LineProfiler(work)
mem = sonde.MemoryProfiler(work)
for what, write in (("dump_stats", prof.dump_stats),
                    ("write", lambda path: prof.write(path, "json")),
                    ("lines", lines.dump_json), ("mem", mem.dump_json)):
    for path in ("/dev/full", "gone/x.out"):
        try:
            write(path)
        except OSError as e:
            print(what, e)
lines.dump_json("l.json")
mem.dump_json("m.json")
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=with_pkg_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.splitlines()
    gone = "cannot write 'gone/x.out': No such file or directory"
    assert said == [w + " " + m for w in ("dump_stats", "write", "lines", "mem")
                    for m in (FULL, gone)]
    assert sorted(os.listdir(str(tmp_path))) == ["l.json", "m.json"]
    assert '"mode": "lines"' in (tmp_path / "l.json").read_text()


def test_record_checks_its_output_before_starting(tmp_path):
    """sonde record -o in a folder that is not there: said at once, and the
    command never starts (it used to run and be sampled to the end)."""
    proc = run_sonde(["record", "-o", "gone/p.svg", "--", sys.executable, "-c",
                      "open('ran', 'w').close()"], tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == "sonde: cannot write 'gone/p.svg': No such file or directory\n"
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("args", [
    ["report", "w.prof", "-f", "collapsed", "-o", "gone/x.txt"],
    ["view", "w.prof", "-o", "gone/x.html"],
    ["diff", "w.prof", "w.prof", "-o", "gone/x.html"],
    ["view", "missing.prof", "-o", "gone/x.html"],
])
def test_reading_commands_check_their_output_first(made, args):
    """The output is checked before the profile is read: the line names
    the output, even when the input is bad too."""
    proc = run_sonde(args, made)
    assert proc.returncode == 1
    assert proc.stderr == "sonde: cannot write '%s': No such file or directory\n" % args[-1]


def test_a_link_at_the_output_name_is_replaced_never_followed(made, tmp_path):
    """-o onto a link: the profile replaces the link itself.  A dangling
    link's target is never created (as root in a shared folder it could
    point anywhere), a link to a file leaves that file as it was, and a
    file written over keeps its permissions."""
    victim = tmp_path / "elsewhere" / "victim"
    victim.parent.mkdir()
    kept = tmp_path / "elsewhere" / "kept.txt"
    kept.write_text("untouched\n")
    (made / "dangling.prof").symlink_to(victim)
    (made / "linked.prof").symlink_to(kept)
    for name in ("dangling.prof", "linked.prof"):
        proc = run_sonde(["report", "w.prof", "-f", "json", "-o", name], made)
        assert proc.returncode == 0, proc.stderr
        assert not os.path.islink(str(made / name))
        assert "work" in [f["name"] for f in json.loads((made / name).read_text())["functions"]]
    assert not victim.exists()
    assert kept.read_text() == "untouched\n"
    own = made / "own.json"
    own.write_text("old\n")
    os.chmod(str(own), 0o640)
    proc = run_sonde(["report", "w.prof", "-f", "json", "-o", "own.json"], made)
    assert proc.returncode == 0, proc.stderr
    assert own.read_text() != "old\n" and (own.stat().st_mode & 0o777) == 0o640
    # Nothing of the writing is left beside them.
    assert not [f for f in os.listdir(str(made)) if ".sonde-" in f]
