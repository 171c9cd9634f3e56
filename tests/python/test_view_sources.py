"""sonde view embeds only the profiled program's own sources (issue 23,
item 3): a file a sampled frame names goes in the page only when its real
path lies under the profile's recorded working directory ("about": "cwd")
or its script's folder, is a .py regular file and within the size cap.
A profile naming /etc/passwd, a ../ path out of the folder or a symlink
inside it pointing out gets none of them in the page (which is shared and
served); a profile without a cwd embeds nothing; a real record of a
program embeds its own source."""

import json
import os
import sys

import pytest

from conftest import run_sonde, start_ready, stop_ready
from pages import browser, open_page, page_data, view  # noqa: F401

MARKER = "SONDE-SECRET-MARKER-%d"


def own_source():
    return "def main():\n    return 'SONDE-OWN-SOURCE-MARKER'\n\nmain()\n"


def crafted_profile(tmp_path, with_cwd=True):
    """A folder prog/ (the recorded cwd) with main.py, secrets outside it
    (outside/secret1.py, secret2.py), a symlink prog/link.py to secret2.py,
    and a sampled profile prog/crafted.json whose frames name main.py,
    /etc/passwd, ../outside/secret1.py (and the same by a path through
    prog/..), link.py; its secrets' unique markers."""
    prog, outside = tmp_path / "prog", tmp_path / "outside"
    prog.mkdir()
    outside.mkdir()
    (prog / "main.py").write_text(own_source())
    markers = []
    for i in (1, 2):
        markers.append(MARKER % i)
        (outside / ("secret%d.py" % i)).write_text("KEY = '%s'\n" % markers[-1])
    os.symlink(str(outside / "secret2.py"), str(prog / "link.py"))
    files = ["main.py", "/etc/passwd", "../outside/secret1.py",
             str(prog) + "/../outside/secret1.py", "link.py"]
    functions = [{"name": "f%d" % i, "qualname": "f%d" % i, "file": f, "line": 1,
                  "kind": "python"} for i, f in enumerate(files)]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, 0.01 * len(files), 0]]
    nodes += [[i, 1, 0, 0.01, 0.01, 1] for i in range(len(files))]
    about = {"argv": [sys.executable, "main.py"]}
    if with_cwd:
        about["cwd"] = str(prog)
    doc = {"sonde": 1, "mode": "run", "about": about, "unit": "seconds", "sample_rate": 100,
           "functions": functions,
           "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
           "nodes": nodes}
    (prog / "crafted.json").write_text(json.dumps(doc))
    return prog, files, markers


def heatmap_files(page):
    data = page_data(page)
    return {data["funcs"][f["func"]][1]: f for f in data["heatmap"]["files"]}


def passwd_line():
    with open("/etc/passwd") as f:
        return f.readline().strip()


def test_crafted_profile_embeds_nothing_from_outside(tmp_path):
    """/etc/passwd, a ../ path out of the cwd and a symlink out of it are
    left out, their text nowhere in the page; the program's own main.py
    is in."""
    prog, files, markers = crafted_profile(tmp_path)
    page = view(prog, "crafted.json")  # the viewer run from inside the program's folder
    html = page.read_text()
    for marker in markers:
        assert marker not in html
    assert passwd_line() not in html
    got = heatmap_files(page)
    assert got["main.py"]["source"][1] == "    return 'SONDE-OWN-SOURCE-MARKER'"
    assert got["/etc/passwd"]["left_out"] in ("not a .py file", "outside the program's folders")
    for name in files[2:]:
        assert "source" not in got[name]
        assert got[name]["left_out"] == "outside the program's folders", name


def test_profile_without_cwd_embeds_nothing(tmp_path, browser):  # noqa: F811
    """No cwd recorded (cProfile's .prof, another tool's pprof, an older
    file): no source at all, each file saying why, and the heatmap's note
    counts them."""
    prog, files, markers = crafted_profile(tmp_path, with_cwd=False)
    page = view(prog, "crafted.json")
    html = page.read_text()
    assert "SONDE-OWN-SOURCE-MARKER" not in html and passwd_line() not in html
    for marker in markers:
        assert marker not in html
    got = heatmap_files(page)
    assert sorted(got) == sorted(files)
    assert {f["left_out"] for f in got.values()} == {"no working directory recorded"}
    tab = open_page(browser, page, "view=heatmap")
    note = tab.evaluate("document.querySelector('#view p.note').textContent")
    tab.close()
    assert note == "5 files with samples are not shown: 5 no working directory recorded", note


def test_pprof_keeps_the_cwd(tmp_path):
    """The cwd goes through pprof (a comment) and back: the page of the
    pprof file embeds main.py and nothing from outside."""
    prog, files, markers = crafted_profile(tmp_path)
    proc = run_sonde(["report", "crafted.json", "-f", "pprof", "-o", "crafted.pb.gz"], prog)
    assert proc.returncode == 0, proc.stderr
    html = view(prog, "crafted.pb.gz").read_text()
    assert "SONDE-OWN-SOURCE-MARKER" in html
    for marker in markers:
        assert marker not in html


@pytest.mark.parametrize("attach", [False, True])
def test_record_embeds_its_own_source(tmp_path, attach):
    """A real sonde record of a program in a tmp folder (-- CMD, and -p of
    the running process): its cwd is recorded and the program's own source
    is in the page, line by line, its sampled lines with samples."""
    prog = tmp_path / "work"
    prog.mkdir()
    # Attached to, it spins until killed, "ready" once it does; launched, a
    # second.
    source = ("import sys, time\n\ndef spin():\n"
              "    end = time.time() + (1e9 if len(sys.argv) > 1 else 1.0)\n"
              "    while time.time() < end:\n        pass\n\n"
              "print('ready', flush=True) if len(sys.argv) > 1 else None\nspin()\n")
    if attach:
        child = start_ready(sys.executable, prog, source, "attached")
        try:
            proc = run_sonde(["record", "-r", "200", "-d", "0.5", "-f", "json", "-o",
                              "spin.json", "-p", str(child.pid)], tmp_path)
        finally:
            stop_ready(child)
        script, where = "prog.py", tmp_path
    else:
        (prog / "spin.py").write_text(source)
        proc = run_sonde(["record", "-r", "200", "-f", "json", "-o", "spin.json", "--",
                          sys.executable, "spin.py"], prog)
        script, where = "spin.py", prog
    assert proc.returncode == 0, proc.stderr
    about = json.loads((where / "spin.json").read_text())["about"]
    assert os.path.realpath(about["cwd"]) == os.path.realpath(str(prog))
    got = heatmap_files(view(where, "spin.json"))
    mine = [f for path, f in got.items() if path.endswith(script)]
    assert len(mine) == 1 and mine[0]["source"] == source.splitlines(), got
    assert any(line[0] in (5, 6) and line[2] > 0 for line in mine[0]["lines"])


def test_site_packages_sources_when_asked(tmp_path):
    """A library's command-line tool (python -m tool.cli, its code in a
    site-packages folder, run from an empty folder): its files are left out
    as "library" by default, and with view --site-packages its source is
    in the page, line by line; a link in site-packages to a file outside
    one stays out, and so does the interpreter's own library."""
    site = tmp_path / "env" / "lib" / "python3" / "site-packages"
    tool = site / "tool"
    tool.mkdir(parents=True)
    (tool / "__init__.py").write_text("")
    source = ("import time\n\ndef spin():\n    end = time.time() + 1.0\n"
              "    while time.time() < end:\n        pass\n\nspin()\n")
    (tool / "cli.py").write_text(source)
    outside = tmp_path / "secret.py"
    outside.write_text("KEY = '%s'\n" % (MARKER % 9))
    os.symlink(str(outside), str(tool / "link.py"))
    work = tmp_path / "work"
    work.mkdir()
    proc = run_sonde(["record", "-r", "200", "-f", "json", "-o", "cli.json", "--", "env",
                      "PYTHONPATH=%s" % site, sys.executable, "-m", "tool.cli"], work)
    assert proc.returncode == 0, proc.stderr
    # one more frame naming the link, as a crafted profile could
    doc = json.loads((work / "cli.json").read_text())
    named = {f["file"] for f in doc["functions"]}
    cli = next(f for f in named if f.endswith("/tool/cli.py"))
    stdlib = next((f for f in named if "/lib/python3" in f and "site-packages" not in f),
                  None)  # a frame of the interpreter's library, where one was sampled
    by_default = heatmap_files(view(work, "cli.json"))
    assert by_default[cli]["left_out"] == "library" and "source" not in by_default[cli]
    link = cli[:-len("cli.py")] + "link.py"
    for f in doc["functions"]:
        if f["file"] == cli:
            f["file"] = link
            break
    (work / "linked.json").write_text(json.dumps(doc))

    got = heatmap_files(view(work, "cli.json", "--site-packages"))
    assert got[cli]["source"] == source.splitlines(), got[cli]
    assert any(line[0] in (5, 6) and line[2] > 0 for line in got[cli]["lines"])
    if stdlib in got:
        assert got[stdlib]["left_out"] == "library"
    html = view(work, "linked.json", "--site-packages").read_text()
    assert MARKER % 9 not in html
    assert heatmap_files(work / "linked.html")[link]["left_out"] == "library"
