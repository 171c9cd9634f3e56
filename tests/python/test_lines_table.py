"""The line table's units, for sonde lines, sonde report FILE.json and
LineProfiler.print_stats alike: by default each time in its own unit with
three significant digits (so a fast line's Per Hit never reads 0.0 beside a
slow line), or one unit throughout with -u s|ms|us|ns or kernprof's -u 1e-6;
every figure shown is checked against the JSON the same run wrote."""

import json
import re
import subprocess
import sys

from conftest import run_sonde, with_pkg_env

# A fast line run 20,000 times beside a slow one: one unit for both would
# show the fast line's time per hit as 0.0.
PROGRAM = """
import time

def work():
    total = 0
    for i in range(20000):
        total += i * i
    time.sleep(0.05)
    return total

work()
"""

NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+(?: (?:s|ms|us|ns))?)\s+(\S+(?: (?:s|ms|us|ns))?)"
                 r"\s+(\d+\.\d)\s")


def rows(table):
    """{line: (hits, time text, per hit text)} of the table's figure rows."""
    return {int(m.group(1)): (int(m.group(2)), m.group(3), m.group(4))
            for m in map(ROW.match, table.splitlines()) if m}


def three_digits(text, want_ns):
    """text is 'V UNIT' and V shows want_ns to three significant digits."""
    value, unit = text.split()
    digits = len(value.replace(".", "").lstrip("0"))
    assert digits == 3 and value != "0.00", text
    got = float(value) * NS[unit]
    assert abs(got - want_ns) <= 0.005 * want_ns * (1 + 1e-9), (text, want_ns)
    # the largest unit in which the value is at least 1
    assert 1 <= float(value) < 1000 or unit in ("s", "ns"), text


def by_line(path):
    (function,) = json.load(open(str(path)))["functions"]
    return {l["line"]: l for l in function["lines"] if l["hits"]}


def test_default_gives_each_time_its_own_unit(tmp_path):
    (tmp_path / "k.py").write_text(PROGRAM)
    proc = run_sonde(["lines", "-o", "k.json", "k.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    truth, shown = by_line(tmp_path / "k.json"), rows(proc.stderr)
    assert set(shown) == set(truth) and len(shown) >= 4
    for line, (hits, time, per_hit) in shown.items():
        assert hits == truth[line]["hits"]
        three_digits(time, truth[line]["time_ns"])
        three_digits(per_hit, truth[line]["time_ns"] / hits)
    # The slow line in ms, the fast ones per hit in ns: no 0.0 anywhere.
    assert shown[8][1].endswith(" ms") and shown[7][2].endswith(" ns"), shown
    report = run_sonde(["report", "k.json"], tmp_path)
    assert report.returncode == 0 and report.stdout == proc.stderr


def test_kernprof_units(tmp_path):
    """-u 1e-6 (kernprof's, seconds) and -u ms: one unit for every time."""
    (tmp_path / "k.py").write_text(PROGRAM)
    for unit, header, scale in (("1e-6", "Timer unit: 1e-06 s", 1e3),
                                ("ms", "Timer unit: 1 ms", 1e6)):
        proc = run_sonde(["lines", "-u", unit, "-o", "k.json", "k.py"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.startswith(header + "\n")
        truth, shown = by_line(tmp_path / "k.json"), rows(proc.stderr)
        assert set(shown) == set(truth)
        for line, (hits, time, per_hit) in shown.items():
            for text, ns in ((time, truth[line]["time_ns"]), (per_hit, truth[line]["time_ns"] / hits)):
                want = ns / scale
                # one decimal, or three significant digits below 0.05
                assert float(text) != 0, (unit, line, text)
                assert abs(float(text) - want) <= max(0.05, 0.005 * want) + 1e-9, \
                    (unit, line, text, want)


def test_print_stats_takes_line_profilers_output_unit(tmp_path):
    code = PROGRAM.replace("work()\n", "") + (
        "import io, json, sonde\n"
        "prof = sonde.LineProfiler()\n"
        "prof(work)()\n"
        "out = io.StringIO()\n"
        "prof.print_stats(out, output_unit=1e-6)\n"
        "default = io.StringIO()\n"
        "prof.print_stats(default)\n"
        "print(json.dumps([out.getvalue(), default.getvalue(), prof.results()]))\n")
    got = subprocess.run([sys.executable, "-c", code], env=with_pkg_env(), cwd=str(tmp_path),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    micro, default, results = json.loads(got)
    truth = {l["line"]: l for l in results[0]["lines"] if l["hits"]}
    assert micro.startswith("Timer unit: 1e-06 s\n")
    for line, (hits, time, _) in rows(micro).items():
        assert abs(float(time) - truth[line]["time_ns"] / 1e3) <= max(0.05, 0.005 * float(time)) + 1e-9
    for line, (hits, time, per_hit) in rows(default).items():
        three_digits(per_hit, truth[line]["time_ns"] / hits)


def test_bad_units(tmp_path):
    (tmp_path / "k.py").write_text(PROGRAM)
    for unit in ("0", "h", "1e-6s", "-1", "nan"):
        proc = run_sonde(["lines", "-u", unit, "k.py"], tmp_path)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "1e-6" in lines[0], proc.stderr
