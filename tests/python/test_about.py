"""What a profile says of the run it was taken from ("about": the command
line, the interpreter, when, wall and CPU time, processes, the verdict):
equal to what the test launched and to what the profiled program itself
reports (its sys.argv, sys.executable, sys.version), its times within the
test's own measured bounds; kept in sonde's JSON (run, record, lines,
mem), pprof (read back by go tool pprof and by sonde) and speedscope;
shown by the page's header (command, interpreter, escaped, a long command
line cut with the whole in a tooltip) and by a diff page for both files;
a file written before it existed still loads."""

import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from conftest import need, run_sonde, version_params
from pages import browser, open_page, page_data, view  # noqa: F401

GO = shutil.which("go")

# A program of the usual shape (stdlib imports, some work) that says what
# it is: its own argv, executable and version, as the reference.
PROG = """\
import json
import sys
import zlib


def work(n):
    data = json.dumps([list(range(50)) for _ in range(n)]).encode()
    return len(zlib.compress(data))


work(400)
with open("self.json", "w") as f:
    json.dump({"argv": sys.argv, "executable": sys.executable, "version": sys.version}, f)
"""

ARGS = ["a b", "it's", "<b>bold</b> & co"]


def launched(args, cwd, python=None):
    """sonde args, with the wall-clock bounds the test measured around it."""
    before = time.time()
    began = time.monotonic()
    proc = run_sonde(args, cwd, python=python)
    elapsed = time.monotonic() - began
    after = time.time()
    assert proc.returncode == 0, proc.stderr
    return proc, before, after, elapsed


def seconds_of(start):
    """ISO 8601 UTC ("2026-11-26T17:22:08.123456Z") as seconds since the epoch."""
    when = datetime.datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ")
    return when.replace(tzinfo=datetime.timezone.utc).timestamp()


def check_run(about, me, python, before, after, elapsed):
    """about (a JSON "about") says what the test launched: python on
    prog.py (me: what the program said of itself), within the bounds."""
    assert about["argv"] == [python] + me["argv"]
    assert about["executable"] == me["executable"]
    assert about["python_version"] == me["version"]
    assert 0 < about["wall_s"] <= elapsed
    assert 0 < about["cpu_s"]
    assert before - 1e-6 <= seconds_of(about["start"]) <= after


@pytest.mark.parametrize("python", version_params())
def test_run_json_says_what_was_profiled(python, tmp_path):
    """sonde run -f json: argv, sys.executable and sys.version of the
    target, wall within the test's measured elapsed time, start between
    the test's timestamps, the verdict printed on stderr."""
    python = need(python)
    (tmp_path / "prog.py").write_text(PROG)
    proc, before, after, elapsed = launched(
        ["run", "-f", "json", "-o", "r.json", "prog.py"] + ARGS, tmp_path, python)
    me = json.loads((tmp_path / "self.json").read_text())
    assert me["argv"] == ["prog.py"] + ARGS
    about = json.loads((tmp_path / "r.json").read_text())["about"]
    check_run(about, me, python, before, after, elapsed)
    (verdict,) = [line for line in proc.stderr.splitlines() if line.startswith("verdict:")]
    assert about["verdict"] == verdict[len("verdict:"):].strip()


def test_run_module_and_code(tmp_path):
    """-m MODULE and -c CODE are in the command line as a bare run takes them."""
    (tmp_path / "in.json").write_text('{"a": [1, 2]}')
    for args, argv in ((["-m", "json.tool", "in.json"], ["-m", "json.tool", "in.json"]),
                       (["-c", "import sys; sorted(range(9))", "x"],
                        ["-c", "import sys; sorted(range(9))", "x"])):
        launched(["run", "-f", "json", "-o", "r.json"] + args, tmp_path)
        about = json.loads((tmp_path / "r.json").read_text())["about"]
        assert about["argv"] == [sys.executable] + argv


def test_pprof_and_speedscope_keep_it(tmp_path):
    """-f pprof: time_nanos, duration_nanos and comments, as go tool pprof
    -raw lists them and as sonde reads them back; -f speedscope: the
    command line is the file's name."""
    (tmp_path / "prog.py").write_text(PROG)
    proc, before, after, elapsed = launched(
        ["run", "-f", "pprof", "-o", "r.pb.gz", "prog.py"] + ARGS, tmp_path)
    me = json.loads((tmp_path / "self.json").read_text())
    me["version"] = me["version"].replace("\n", " ")  # a pprof comment is one line
    back = run_sonde(["report", "r.pb.gz", "-f", "json", "-o", "back.json"], tmp_path)
    assert back.returncode == 0, back.stderr
    about = json.loads((tmp_path / "back.json").read_text())["about"]
    check_run(about, me, sys.executable, before, after, elapsed)
    assert about["verdict"] and about["verdict"] in proc.stderr
    if GO:
        raw = subprocess.run([GO, "tool", "pprof", "-raw", "r.pb.gz"], cwd=str(tmp_path),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, env=dict(os.environ, PPROF_TMPDIR="/tmp"))
        assert raw.returncode == 0, raw.stderr
        comments = [line[len("Comment: "):] for line in raw.stdout.splitlines()
                    if line.startswith("Comment: ")]
        (command,) = [c for c in comments if c.startswith("command: ")]
        assert shlex.split(command[len("command: "):]) == [sys.executable] + me["argv"]
        assert "executable: " + me["executable"] in comments
        assert any(line.startswith("Time: ") for line in raw.stdout.splitlines())
        assert any(line.startswith("Duration: ") for line in raw.stdout.splitlines())
    launched(["run", "-f", "speedscope", "-o", "r.speedscope.json", "prog.py"] + ARGS, tmp_path)
    name = json.loads((tmp_path / "r.speedscope.json").read_text())["name"]
    assert shlex.split(name) == [sys.executable, "prog.py"] + ARGS


def test_record_says_what_was_sampled(tmp_path):
    """sonde record -- CMD: the command, the interpreter it ran (its path,
    its version), the span sampled within the test's bounds, 1 process."""
    (tmp_path / "prog.py").write_text(PROG.replace("work(400)", "work(4000)"))
    proc, before, after, elapsed = launched(
        ["record", "-r", "200", "-f", "json", "-o", "r.json", "--", sys.executable, "prog.py",
         "x y"], tmp_path)
    me = json.loads((tmp_path / "self.json").read_text())
    about = json.loads((tmp_path / "r.json").read_text())["about"]
    assert about["argv"] == [sys.executable, "prog.py", "x y"]
    assert os.path.realpath(about["executable"]) == os.path.realpath(me["executable"])
    assert me["version"].startswith(about["python_version"] + " ")
    assert about["processes"] == 1 and about["pid"] > 0
    assert 0 < about["wall_s"] <= elapsed and about["cpu_s"] > 0
    assert before - 1e-6 <= seconds_of(about["start"]) <= after


@pytest.mark.parametrize("kind", ["lines", "mem"])
def test_lines_and_mem_documents_say_it(tmp_path, kind):
    (tmp_path / "prog.py").write_text(PROG)
    proc, before, after, elapsed = launched(
        [kind, "-o", "d.json", "-f", "work", "prog.py"] + ARGS, tmp_path)
    me = json.loads((tmp_path / "self.json").read_text())
    doc = json.loads((tmp_path / "d.json").read_text())
    assert doc["mode"] == kind and doc["functions"]
    check_run(doc["about"], me, sys.executable, before, after, elapsed)


def test_old_json_without_about_still_loads(tmp_path):
    """A profile written before "about" existed: sonde view and report read
    it, and the header says what it knows without a command line."""
    (tmp_path / "prog.py").write_text(PROG)
    launched(["run", "-f", "json", "-o", "r.json", "prog.py"], tmp_path)
    doc = json.loads((tmp_path / "r.json").read_text())
    del doc["about"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    report = run_sonde(["report", "old.json", "-l", "0"], tmp_path)
    assert report.returncode == 0 and "work" in report.stdout + report.stderr, report.stderr
    data = page_data(view(tmp_path, "old.json"))
    assert data["about"]["run"] == {} and data["about"]["rate"] == 0


def header(tab):
    """The header's parts: {part: (text, tooltip)}, and its whole text."""
    parts = tab.evaluate("[].map.call(document.querySelectorAll('#about span'), function (s) {"
                         " return [s.dataset.part, s.textContent, s.title]; })")
    return {p[0]: (p[1], p[2]) for p in parts}, tab.evaluate(
        "document.getElementById('about').textContent")


def test_page_header_shows_command_and_interpreter(browser, tmp_path):
    """The page of run -f json: the command line (markup in it as text),
    the interpreter's version and path, the start, wall and CPU, the
    verdict; a long command line cut with an ellipsis, whole in the
    tooltip; the lines page the same."""
    (tmp_path / "prog.py").write_text(PROG)
    long_arg = "--option=" + "v" * 120
    launched(["run", "-f", "json", "-o", "r.json", "prog.py", "<b>bold</b>", long_arg], tmp_path)
    me = json.loads((tmp_path / "self.json").read_text())
    page = view(tmp_path, "r.json")
    assert "<b>bold" not in page.read_text()  # escaped in the data too
    tab = open_page(browser, page)
    parts, text = header(tab)
    assert tab.evaluate("document.querySelectorAll('#about b').length") == 0
    tab.close()
    line, tooltip = parts["command"]
    assert shlex.split(tooltip) == [sys.executable, "prog.py", "<b>bold</b>", long_arg]
    assert line.endswith("\u2026") and tooltip.startswith(line[:-1]) and len(line) < len(tooltip)
    interp, interp_tip = parts["interpreter"]
    path = me["executable"]  # a path over 40 characters is cut, whole in the tooltip
    shown = path if len(path) <= 40 else path[:39] + "\u2026"
    assert interp == "Python %s (%s)" % (me["version"].split()[0], shown)
    assert interp_tip == me["executable"] + "\n" + me["version"]
    assert parts["start"][0].startswith("started ") and parts["start"][0].endswith(" UTC")
    assert parts["times"][0].startswith("wall ") and ", CPU " in parts["times"][0]
    assert parts["verdict"][1] and "deterministic (every call)" in text
    launched(["lines", "-o", "l.json", "-f", "work", "prog.py", "x"], tmp_path)
    tab = open_page(browser, view(tmp_path, "l.json"))
    parts, text = header(tab)
    tab.close()
    assert parts["command"][0] == "%s prog.py x" % shlex.quote(sys.executable)
    assert parts["interpreter"][0].startswith("Python " + me["version"].split()[0])


def test_diff_header_names_both_runs(browser, tmp_path):
    """sonde diff's page: each file's command line and start."""
    (tmp_path / "prog.py").write_text(PROG)
    starts = []
    for name, n in (("a.json", "200"), ("b.json", "400")):
        launched(["run", "-f", "json", "-o", name, "prog.py", n], tmp_path)
        starts.append(json.loads((tmp_path / name).read_text())["about"]["start"])
    proc = run_sonde(["diff", "a.json", "b.json", "-o", "d.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    tab = open_page(browser, tmp_path / "d.html")
    parts, text = header(tab)
    tab.close()
    for side, n, start in (("before", "200", starts[0]), ("after", "400", starts[1])):
        shown, tooltip = parts[side]
        assert shlex.split(tooltip) == [sys.executable, "prog.py", n]
        assert shown.startswith(side + ": ")
        assert start[:19].replace("T", " ") in shown
