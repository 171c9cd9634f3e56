"""sonde diff: the table of what changed, matched by function across runs
(addresses left out), and its page (the newer profile's flame graph with
each frame's time in the older one), checked against pstats' figures and
in headless Chromium."""

import marshal
import re
import subprocess
import sys

import pstats
import pytest

from conftest import run_sonde
from pages import (browse, browser, need_browser, open_page, page_data, profiles,  # noqa: F401
                   real_profs, table, text_of)



MAIN, FIB, SPIN = ("/srv/app/work.py", 13, "main"), ("/srv/app/work.py", 4, "fib"), \
    ("/srv/app/work.py", 7, "spin")


def write_prof(path, fib, spin, main=0.001):
    """A .prof (pstats' marshal form) of work.py whose figures are fixed:
    main (own time `main`) calls spin once and fib once, fib calling itself
    14 times; fib's and spin's own times are `fib` and `spin` seconds.  (Two
    timed runs differ in spin's time as much as in fib's on a busy
    machine: which change is the biggest was an accident of the runs.)"""
    cum = main + fib + spin
    stats = {MAIN: (1, 1, main, cum, {}),
             FIB: (1, 15, fib, fib, {MAIN: (1, 1, fib / 15, fib),
                                     FIB: (14, 2, fib * 14 / 15, fib * 14 / 15)}),
             SPIN: (1, 1, spin, spin, {MAIN: (1, 1, spin, spin)})}
    with open(str(path), "wb") as f:
        marshal.dump(stats, f)
    return stats


@need_browser
def test_diff(tmp_path):
    before = write_prof(tmp_path / "before.prof", fib=0.002, spin=0.003)
    after = write_prof(tmp_path / "after.prof", fib=0.020, spin=0.0035)
    change = {k: after[k][2] - before[k][2] for k in before}
    assert max(change, key=lambda k: abs(change[k])) == FIB  # by 18 ms; spin by 0.5 ms
    proc = run_sonde(["diff", "before.prof", "after.prof", "-l", "5"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [l for l in proc.stdout.splitlines() if l.endswith(")")]
    assert len(rows) == 3 and rows[0].endswith("(fib)") and float(rows[0].split()[2]) > 0
    assert abs(float(rows[0].split()[0]) - before[FIB][2]) < 1e-6
    assert abs(float(rows[0].split()[2]) - change[FIB]) < 1e-6
    page = tmp_path / "after.diff.html"
    assert "sonde: wrote after.diff.html" in proc.stderr
    dom = browse(page, "view=changes")
    assert table(dom, "changes")[1][-1].endswith("(fib)")
    assert text_of(browse(page, "view=flame&click=fib"), "status").startswith("drawn: flame, ")


def call_paths(data):
    """Each node of a page's tree as its path of functions from the root
    (names without the addresses cProfile puts in some: see below)."""
    paths = {0: ()}
    for i, (func, parent) in enumerate((row[0], row[1]) for row in data["tree"]):
        if i:
            name, file, line = data["funcs"][func][:3]
            paths[i] = paths[parent] + ((re.sub(r" at 0x[0-9a-f]+", "", name), file, line),)
    return paths


def test_diff_page_of_real_profs(real_profs):
    """Two cProfile runs of one program: each call path of AFTER's tree
    carries the time BEFORE's own page gives the same path, or 0 where
    BEFORE has no such path (the trees are rebuilt from callers, so which
    paths both have depends on the runs' times, not what each carries)."""
    proc = run_sonde(["diff", "cprofile-imports.prof", "again.prof", "-o", "d.html"], real_profs)
    assert proc.returncode == 0, proc.stderr
    data = page_data(real_profs / "d.html")
    assert len(data["tree"]) > 20 and len(data["base"]) == len(data["tree"])
    proc = run_sonde(["view", "cprofile-imports.prof", "-o", "before.html"], real_profs)
    assert proc.returncode == 0, proc.stderr
    before = page_data(real_profs / "before.html")
    at = {path: before["tree"][i][2] for i, path in call_paths(before).items()}
    paths = call_paths(data)
    assert [data["base"][i] for i in range(len(paths))] == \
        [at.get(paths[i], 0) for i in range(len(paths))]
    assert sum(1 for b in data["base"][1:] if b > 0) > 20
    # a profile against itself: every path found, with its own time
    proc = run_sonde(["diff", "again.prof", "again.prof", "-o", "same.html"], real_profs)
    assert proc.returncode == 0, proc.stderr
    same = page_data(real_profs / "same.html")
    assert same["base"] == [row[2] for row in same["tree"]]


@need_browser
def test_diff_shows_shrinking_in_its_unit(tmp_path):
    """fib's own time falls by 12.5 ms (fixed figures: a timed run's
    change could fall under a millisecond): the change reads in ms."""
    big = write_prof(tmp_path / "big.prof", fib=0.0150, spin=0.003)
    small = write_prof(tmp_path / "small.prof", fib=0.0025, spin=0.003)
    proc = run_sonde(["diff", "big.prof", "small.prof", "-o", "shrink.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = table(browse(tmp_path / "shrink.html", "view=changes"), "changes")[1:]
    (fib,) = [r for r in rows if r[-1].endswith("(fib)")]
    assert fib[2] == "%.3f ms" % (1e3 * (small[FIB][2] - big[FIB][2])), fib  # -12.500 ms


def test_diff_matches_functions_whatever_their_address(tmp_path):
    """cProfile names a method bound to a type by its address, which
    changes from run to run: compared names leave it out."""
    (tmp_path / "new.py").write_text(
        "class C:\n    pass\n"
        "def make(n):\n    return [object.__new__(C) for _ in range(n)]\nmake(3000)\n")
    for out in ("a.prof", "b.prof"):
        subprocess.run([sys.executable, "-m", "cProfile", "-o", out, "new.py"],
                       cwd=str(tmp_path), check=True)
    keys = [k[2] for out in ("a.prof", "b.prof")
            for k in pstats.Stats(str(tmp_path / out)).stats if "__new__" in k[2]]
    assert len(keys) == 2 and all(" at 0x" in k for k in keys)
    proc = run_sonde(["diff", "a.prof", "b.prof", "-l", "0"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [l for l in proc.stdout.splitlines() if "__new__" in l]
    assert len(rows) == 1 and "<built-in method __new__ of type object>" in rows[0]
    assert " new " not in rows[0] and " gone " not in rows[0]


def test_diff_matches_cprofiles_relative_script_with_sondes_absolute(tmp_path):
    """cProfile names the script as it was given (prog.py, tools/prog.py),
    sonde run by its absolute path: `sonde diff cprofile.prof sonde.prof`
    compares each of the script's functions with itself, none gone and
    none new (each was both, under two names)."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "prog.py").write_text(
        "def slow():\n    return sum(i * i for i in range(20000))\n"
        "def fast():\n    return sum(range(100))\n"
        "for _ in range(3):\n    slow()\n    fast()\n")
    subprocess.run([sys.executable, "-m", "cProfile", "-o", "before.prof", "tools/prog.py"],
                   cwd=str(tmp_path), check=True)
    assert {k[0] for k in pstats.Stats(str(tmp_path / "before.prof")).stats
            if k[2] == "slow"} == {"tools/prog.py"}
    proc = run_sonde(["run", "-o", "after.prof", "tools/prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = run_sonde(["diff", "before.prof", "after.prof", "-l", "0"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [l for l in proc.stdout.splitlines() if "prog.py:" in l]
    names = sorted(r.split("(")[-1] for r in rows)
    assert names == ["<genexpr>)", "<module>)", "fast)", "slow)"], proc.stdout
    path = str(tmp_path / "tools" / "prog.py")
    assert all(path + ":" in r and " new " not in r and " gone " not in r for r in rows), rows


@pytest.mark.parametrize("args, message", [
    (["diff", "w.prof"], "give two profiles"),
    (["diff", "w.prof", "w.prof", "w.json"], "two profiles: BEFORE and AFTER"),
    (["diff", "w.prof", "missing.prof"], "cannot read 'missing.prof'"),
    (["diff", "w.prof", "w.prof", "-l", "-1"], "-l needs a whole number of 0 or more"),
])
def test_bad_input(profiles, args, message):
    proc = run_sonde(args, profiles)
    assert proc.returncode in (1, 2)
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_diff_page_opens_on_the_biggest_change(browser, profiles):
    """The header names the function whose own time changed most (from
    pstats of both runs), and the page fits 1280x800 with its root shown."""
    for n, out in ((15, "small.prof"), (20, "big.prof")):
        proc = run_sonde(["run", "-o", out, "work.py", str(n)], profiles)
        assert proc.returncode == 0, proc.stderr
    proc = run_sonde(["diff", "small.prof", "big.prof", "-o", "sb.html"], profiles)
    assert proc.returncode == 0, proc.stderr
    before, after = (pstats.Stats(str(profiles / p)).stats for p in ("small.prof", "big.prof"))
    change = {k: after.get(k, (0, 0, 0))[2] - before.get(k, (0, 0, 0))[2]
              for k in set(before) | set(after)}
    top = max(change, key=lambda k: abs(change[k]))
    tab = open_page(browser, profiles / "sb.html", "view=flame")
    about = tab.evaluate("document.getElementById('about').textContent")
    assert "biggest change: %s:%d(%s) %s" % (top[0].replace("\\", "/").split("/")[-1], top[1], top[2],
                                            "+" if change[top] >= 0 else "-") in about
    assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    root = [f for f in tab.evaluate("window.sondeView.frames()") if f["func"] == -1][0]
    assert 0 <= root["y"] and root["y"] + root["h"] <= 800
    tab.close()
