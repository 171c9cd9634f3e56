"""sonde lines and sonde.LineProfiler: hits equal the interpreter's own
line events on every interpreter; times land on the right lines; the
command line selects, prints and writes as documented."""

import dis
import io
import json
import os
import re
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
    assert got["sonde_iterations"] == got["reference_iterations"]
    assert got["sonde"]["loops:11"] == 30 + 3 * 50  # every iteration, threads' too
    # A comprehension's line: one hit a run, its items as iterations, on
    # every version (run in a code object of its own up to 3.11, inlined
    # from 3.12).  everything() runs comprehension(10) once.
    assert got["sonde"]["comprehension:21"] == 1
    assert got["sonde_iterations"]["comprehension:21"] == 10


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

began = time.perf_counter()
slow()
print("slow took %d ns" % ((time.perf_counter() - began) * 1e9))
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
    # A callee's time counts on the line that called it: 4 x 50 ms at
    # least, and the rest of the function's time, what its other lines took,
    # at most what the call took (by the program's own clock) beyond them.
    # (1 ms apart at most: sonde's clock is the CPU's counter, converted.)
    took = int(re.search(r"slow took (\d+) ns", proc.stdout).group(1))
    assert 4 * 0.05e9 - 1e6 <= by_line[8]["time_ns"] <= slow["total_ns"] <= took + 1e6
    assert slow["total_ns"] - by_line[8]["time_ns"] <= took - 4 * 0.05e9 + 1e6


def test_report_prints_a_lines_file_again(tmp_path):
    (tmp_path / "k.py").write_text(KERNPROF_SCRIPT.replace("0.05", "0.001"))
    lines = run_sonde(["lines", "--bytecode", "-o", "k.json", "k.py"], tmp_path)
    report = run_sonde(["report", "k.json"], tmp_path)
    assert lines.returncode == report.returncode == 0, report.stderr
    assert report.stdout == lines.stderr and "LOAD_" in report.stdout


COMPREHENSION_SCRIPT = """
@profile
def work(n):
    total = 0
    for i in range(n):
        xs = [j * j for j in range(4)]
        total += sum(x for x in xs if x)
    return total

work(3000)
"""


def test_comprehension_hits_equal_kernprofs(tmp_path):
    """A line that runs a comprehension counts the hits kernprof counts
    (one a run, not one an item: issue 24 saw 4 times kernprof's), and the
    items apart, as iterations; Per Hit is the line's time over its hits."""
    (tmp_path / "c.py").write_text(COMPREHENSION_SCRIPT)
    kern = subprocess.run([sys.executable, "-m", "kernprof", "-l", "-o", "c.lprof", "c.py"],
                          cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert kern.returncode == 0, kern.stderr
    import line_profiler

    stats = line_profiler.LineStats.from_files(str(tmp_path / "c.lprof"))
    (entries,) = stats.timings.values()
    want = {line: hits for line, hits, _ in entries}
    proc = run_sonde(["lines", "-o", "c.json", "c.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (work,) = json.load(open(str(tmp_path / "c.json")))["functions"]
    by_line = {l["line"]: l for l in work["lines"]}
    assert {n: l["hits"] for n, l in by_line.items() if l["hits"]} == want
    assert want[6] == want[7] == 3000
    assert by_line[6]["iterations"] == 4 * 3000  # inlined (3.12+) or not, the same
    row = next(r for r in proc.stderr.splitlines() if r.rstrip().endswith("range(4)]"))
    assert re.match(r"^\s+6\s+3000\s+12000\s", row), proc.stderr


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
from line_events import LineCounter
counts = LineCounter(lambda frame: frame.f_lineno)
def local(frame, event, arg):
    if event == "line":
        counts.line(frame)
    return local
def tracer(frame, event, arg):
    if frame.f_code.co_filename != "s.py" or frame.f_code.co_name == "<module>":
        return None
    counts.call(frame)
    return local
code = compile(open("s.py").read(), "s.py", "exec")
sys.settrace(tracer)
try:
    exec(code, {"__name__": "__main__"})
except SystemExit:
    pass
sys.settrace(None)
print(json.dumps([counts.hits, counts.iterations]))
"""


def settrace_counts(python, cwd):
    """({line: hits}, {line: iterations}) of s.py's functions in cwd, from
    the interpreter's own line events (SETTRACE)."""
    ref = subprocess.run([python, "-c", SETTRACE], cwd=str(cwd), stdout=subprocess.PIPE,
                         universal_newlines=True, check=True,
                         env=dict(os.environ, PYTHONPATH=HERE)).stdout
    return tuple({int(k): v for k, v in d.items()} for d in json.loads(ref))


# A tool that runs s.py under its own trace function, as coverage run,
# trace and pdb do: it names the file in sys.argv[0], compiles and execs it,
# and counts every line event of s.py's functions (line_events.LineCounter)
# in the main thread and in a thread it starts with threading.settrace.  It
# prints those counts, and whether sys.gettrace answered its function and,
# after sys.settrace(None), None.
TOOL_WITH_ITS_OWN_TRACER = SETTRACE.replace("""code = compile(""", """
import threading
sys.argv[:] = ["s.py"]
code = compile(""").replace("""sys.settrace(None)
""", """answered = sys.gettrace() is tracer
sys.settrace(None)
threading.settrace(tracer)
thread = threading.Thread(target=exec, args=(code, {"__name__": "__main__"}))
thread.start()
thread.join()
threading.settrace(None)
print(answered, sys.gettrace() is None)
""")


@pytest.mark.parametrize("python", version_params())
def test_a_program_with_its_own_trace_function(python, tmp_path):
    """A program that sets its own trace function (a tool running another
    file: coverage run, trace, pdb; the program in a thread too): up to
    3.11 the interpreter has one trace slot per thread, which the program
    took from sonde's hook -- `-f main` then "never ran" and no line was
    counted.  sonde takes the slot back and passes every event on: the
    program's function sees every line event it sees in a bare run, sonde
    counts every line once per run (twice here: the main thread and the
    thread), and sys.gettrace answers what it answers in a bare run.  The
    file the tool runs by exec (named by sys.argv[0]) has its functions
    chosen by -f as the program's own."""
    python = need(python)
    (tmp_path / "s.py").write_text(NESTED)
    (tmp_path / "tool.py").write_text(TOOL_WITH_ITS_OWN_TRACER)
    (tmp_path / "line_events.py").write_text(open(os.path.join(HERE, "line_events.py")).read())
    bare = subprocess.run([python, "tool.py"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    assert bare.splitlines()[0] == "True True", bare
    hits, iterations = ({int(k): v for k, v in d.items()}
                        for d in json.loads(bare.splitlines()[1]))
    proc = run_sonde(["lines", "-f", "main", "-o", "s.json", "tool.py"], tmp_path, python=python)
    assert proc.returncode == 0 and "never ran" not in proc.stderr, proc.stderr
    assert proc.stdout == bare  # the program's own function saw what it sees bare
    (main,) = [f for f in json.load(open(str(tmp_path / "s.json")))["functions"]
               if os.path.basename(f["file"]) == "s.py"]
    got = {l["line"]: l["hits"] for l in main["lines"] if l["hits"]}
    got_iterations = {l["line"]: l["iterations"] for l in main["lines"] if l["iterations"]}
    assert got == hits and got_iterations == iterations
    assert [got[n] for n in (5, 6, 7, 8, 11)] == [2, 2, 2, 2, 2]  # main thread and thread


PDB_STEPS = "n\nn\ns\nn\nn\nn\nc\n"  # to main's call, into it, three lines, go on


@pytest.mark.parametrize("python", version_params())
def test_pdb_steps_as_bare_and_the_lines_count(python, tmp_path):
    """`sonde lines -m pdb s.py`: pdb's trace function steps through the
    program's lines as in a bare run (the same transcript), and sonde
    counts main's lines as the interpreter's own line events do."""
    python = need(python)
    (tmp_path / "s.py").write_text(NESTED)
    hits, _ = settrace_counts(python, tmp_path)
    bare = subprocess.run([python, "-m", "pdb", "s.py"], cwd=str(tmp_path), input=PDB_STEPS,
                          stdout=subprocess.PIPE, universal_newlines=True).stdout
    proc = run_sonde(["lines", "-f", "main", "-o", "s.json", "-m", "pdb", "s.py"], tmp_path,
                     python=python, input=PDB_STEPS)
    assert proc.returncode == 0 and "never ran" not in proc.stderr, proc.stderr
    assert "s.py(6)main()" in bare and proc.stdout == bare
    (main,) = [f for f in json.load(open(str(tmp_path / "s.json")))["functions"]
               if os.path.basename(f["file"]) == "s.py"]
    assert {l["line"]: l["hits"] for l in main["lines"] if l["hits"]} == hits


@pytest.mark.parametrize("python", version_params())
def test_comprehensions_and_lambdas_count_hits_and_iterations(python, tmp_path):
    """sonde lines counts a line's hits as line_profiler does (the times it
    began in its function) and the passes of the comprehensions and
    generator expressions it runs as its iterations, each exactly as the
    interpreter's own line events say (line_events.LineCounter tells them
    apart), on every interpreter: up to 3.11 comprehensions are code
    objects of their own, from 3.12 list comprehensions are inlined, and
    each line that runs one still counts one hit a run."""
    python = need(python)
    (tmp_path / "s.py").write_text(NESTED)
    hits, iterations = settrace_counts(python, tmp_path)
    proc = run_sonde(["lines", "-o", "s.json", "s.py"], tmp_path, python=python)
    assert proc.returncode == 0, proc.stderr
    (main,) = json.load(open(str(tmp_path / "s.json")))["functions"]
    got = {l["line"]: l["hits"] for l in main["lines"] if l["hits"]}
    got_iterations = {l["line"]: l["iterations"] for l in main["lines"] if l["iterations"]}
    assert got == hits and got_iterations == iterations
    # each of these lines began once (a generator expression's items are
    # resumptions, each starting anew: neither hits nor iterations); the
    # comprehension on two lines alternates between them, and its passes
    # that stay on a line are iterations
    assert [got[n] for n in (5, 6, 7, 8, 11)] == [1, 1, 1, 1, 1]
    assert iterations[9] >= 4
