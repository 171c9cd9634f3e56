"""sonde lines and sonde.LineProfiler: hits equal the interpreter's own
line events on every interpreter; times land on the right lines; the
command line selects, prints and writes as documented."""

import dis
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import HERE, PKG, need, run_sonde, version_params, with_pkg_env


@pytest.mark.parametrize("python", version_params())
def test_hits_equal_line_events(python):
    python = need(python)
    out = subprocess.run([python, os.path.join(HERE, "lines_driver.py")], env=with_pkg_env(),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    got = json.loads(out)
    assert got["sonde"] == got["reference"]
    assert got["sonde"]["loops:11"] == 30 + 3 * 50  # every iteration, threads' too


@pytest.mark.parametrize("python", version_params())
def test_instruction_hits_equal_opcode_events(python):
    python = need(python)
    out = subprocess.run([python, os.path.join(HERE, "lines_driver.py"), "bytecode"],
                         env=with_pkg_env(), stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    got = json.loads(out)
    assert got["sonde"] == got["reference"] and len(got["sonde"]) > 50


BYTECODE_SCRIPT = """
def f(a, b):
    return max(a, b) + len([a, b]) + a * 2

for i in range(3):
    f(i, 2)
"""


def test_bytecode_arguments_as_dis_prints_them(tmp_path):
    """Each instruction's argument as dis.dis prints it (its number and,
    in parentheses, what it means): `CALL 2`, not `CALL` (issue 24)."""
    (tmp_path / "bc.py").write_text(BYTECODE_SCRIPT)
    proc = run_sonde(["lines", "--bytecode", "-o", "bc.json", "bc.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (f,) = json.load(open(str(tmp_path / "bc.json")))["functions"]
    code = compile(BYTECODE_SCRIPT, str(tmp_path / "bc.py"), "exec").co_consts[0]
    printed = io.StringIO()
    dis.dis(code, file=printed, **({"show_offsets": True} if sys.version_info >= (3, 13) else {}))
    # dis's lines, each from its offset on, spaces collapsed: "22 CALL 2".
    said = set()
    for row in printed.getvalue().splitlines():
        words = row.replace(">>", "").split()
        for k, word in enumerate(words[:-1]):
            if word.isdigit() and words[k + 1].isupper():
                said.add(" ".join(words[k:]))
                break
    mine = ["%d %s %s" % (i["offset"], i["opname"], i["arg"]) for i in f["instructions"]]
    assert mine and all(m.strip() in said for m in mine), (mine, sorted(said))
    assert any(i["opname"].startswith("CALL") and i["arg"].strip() for i in f["instructions"])


KERNPROF_SCRIPT = """
import time

@profile
def slow():
    total = 0
    for _ in range(4):
        time.sleep(0.05)
    total += 1
    return total

def untouched():
    return 2

slow()
untouched()
"""


def test_profile_decorator_and_times(tmp_path):
    (tmp_path / "k.py").write_text(KERNPROF_SCRIPT)
    proc = run_sonde(["lines", "-u", "ms", "-o", "k.json", "k.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Function: slow at line 4" in proc.stderr and "untouched" not in proc.stderr
    assert "Timer unit: 1 ms" in proc.stderr
    doc = json.load(open(str(tmp_path / "k.json")))
    (slow,) = doc["functions"]
    by_line = {l["line"]: l for l in slow["lines"]}
    assert by_line[8]["hits"] == 4 and by_line[8]["source"].strip() == "time.sleep(0.05)"
    # A callee's time counts on the line that called it: 4 x 50 ms.
    assert 0.19e9 <= by_line[8]["time_ns"] <= 0.5e9
    assert by_line[8]["time_ns"] > 0.9 * slow["total_ns"]


def test_report_prints_a_lines_file_again(tmp_path):
    (tmp_path / "k.py").write_text(KERNPROF_SCRIPT.replace("0.05", "0.001"))
    lines = run_sonde(["lines", "--bytecode", "-o", "k.json", "k.py"], tmp_path)
    report = run_sonde(["report", "k.json"], tmp_path)
    assert lines.returncode == report.returncode == 0, report.stderr
    assert report.stdout == lines.stderr and "LOAD_" in report.stdout


def test_default_is_every_function_of_the_script(tmp_path):
    (tmp_path / "s.py").write_text("import sys\ndef a():\n    return 1\nclass C:\n"
                                   "    def m(self):\n        return a()\nC().m()\nsys.exit(3)\n")
    proc = run_sonde(["lines", "s.py"], tmp_path)
    assert proc.returncode == 3
    assert "Function: a at line 2" in proc.stderr and "Function: C.m at line 5" in proc.stderr


def test_function_patterns(tmp_path):
    (tmp_path / "mod.py").write_text("def helper(x):\n    return x * 2\n")
    (tmp_path / "s.py").write_text("import mod\ndef main():\n    return mod.helper(2)\nmain()\n")
    proc = run_sonde(["lines", "-f", "mod:helper", "-f", "nothing_like_this", "s.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Function: helper at line 1" in proc.stderr and "Function: main" not in proc.stderr
    assert "sonde: warning: -f nothing_like_this matched no function" in proc.stderr


def test_line_profiler_api():
    sys.path[:0] = [PKG, HERE]
    import io
    import lines_workloads as w
    import sonde

    prof = sonde.LineProfiler()
    wrapped = prof(w.loops)
    assert wrapped(10) == w.loops(10)
    out = io.StringIO()
    prof.print_stats(out)
    assert "Function: loops" in out.getvalue() and "Line Contents" in out.getvalue()


def test_lines_bad_input(tmp_path):
    for args, code in ((["lines"], 2), (["lines", "nope.py"], 2), (["lines", "-u", "h", "x.py"], 2),
                       (["lines", "--bogus"], 2)):
        proc = run_sonde(args, tmp_path)
        assert proc.returncode == code and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


NESTED = """
import collections

def main():
    words = ["alpha", "beta", "gamma", "delta"] * 50
    total = sum(len(w) for w in words if w)
    by_len = sorted(words, key=lambda w: (len(w), w))
    counts = collections.Counter(w[0] for w in by_len)
    table = {w: [c for c in w
                 if c in "aeiou"] for w in set(words)}
    return total, counts, table

main()
"""

SETTRACE = """
import json, sys
counts = {}
def local(frame, event, arg):
    if event == "line":
        counts[frame.f_lineno] = counts.get(frame.f_lineno, 0) + 1
    return local
def tracer(frame, event, arg):
    return local if frame.f_code.co_filename == "s.py" and frame.f_code.co_name != "<module>" else None
code = compile(open("s.py").read(), "s.py", "exec")
sys.settrace(tracer)
try:
    exec(code, {"__name__": "__main__"})
except SystemExit:
    pass
sys.settrace(None)
print(json.dumps(counts))
"""


@pytest.mark.parametrize("python", version_params())
def test_comprehensions_and_lambdas_count_every_line_event(python, tmp_path):
    """sonde lines counts the line events of a function's generator
    expressions, comprehensions and lambdas on its lines, as sys.settrace
    sees them, on every interpreter (up to 3.11 they are code objects of
    their own; from 3.12 list comprehensions are inlined)."""
    python = need(python)
    (tmp_path / "s.py").write_text(NESTED)
    ref = subprocess.run([python, "-c", SETTRACE], cwd=str(tmp_path), stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    want = {int(k): v for k, v in json.loads(ref).items()}
    proc = run_sonde(["lines", "-o", "s.json", "s.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    (main,) = json.load(open(str(tmp_path / "s.json")))["functions"]
    got = {l["line"]: l["hits"] for l in main["lines"] if l["hits"]}
    assert got == want and got[7] > 200 and got[10] > 4
