"""sonde lines and sonde mem on a package's module run with -m, as kernprof
-m does: -f finds its functions by name, as tool.cli:NAME or as
__main__:NAME, with the interpreter's own line events and tracemalloc's
figures as the reference; a bare -f name prefers the program's own
function to the same name in the standard library, and a -f whose
functions never ran says so in one line."""

import json
import subprocess

import pytest

from conftest import need, run_sonde, version_params

CLI = """\
def work(n):
    total = 0
    kept = []
    for i in range(n):
        total += i * i
        if i % 100 == 0:
            kept.append(bytearray(100000))
    return total, kept


def unused():
    return 0


def main():
    total, kept = work(1000)
    print(total, len(kept))
    return kept


if __name__ == "__main__":
    KEPT = main()
"""
KEEP_LINE = 7  # kept.append(bytearray(100000))

# A bare run of the module as -m runs it, counting the line events of
# work's frames (sys.settrace) and what is still traced on KEEP_LINE at the
# end (tracemalloc), for {"hits": {line: events}, "kept": bytes, "out": stdout}.
REFERENCE = """
import io, json, os, runpy, sys, tracemalloc
sys.path.insert(0, os.getcwd())
target = os.path.join(os.getcwd(), "tool", "cli.py")
hits = {}
def local(frame, event, arg):
    if event == "line":
        hits[frame.f_lineno] = hits.get(frame.f_lineno, 0) + 1
    return local
def tracer(frame, event, arg):
    code = frame.f_code
    return local if code.co_name == "work" and code.co_filename == target else None
out, sys.stdout = sys.stdout, io.StringIO()
tracemalloc.start()
sys.settrace(tracer)
space = runpy.run_module("tool.cli", run_name="__main__", alter_sys=True)
sys.settrace(None)
kept = sum(s.size for s in tracemalloc.take_snapshot().statistics("lineno")
           if s.traceback[0].filename == target and s.traceback[0].lineno == KEEP_LINE)
printed, sys.stdout = sys.stdout.getvalue(), out
print(json.dumps({"hits": hits, "kept": kept, "out": printed}))
""".replace("KEEP_LINE", str(KEEP_LINE))

PATTERNS = ["work", "tool.cli:work", "__main__:work", "tool.cli.work"]


def package(tmp_path, python):
    """tool/cli.py in tmp_path, and the bare run's reference figures."""
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "__init__.py").write_text("")
    (tmp_path / "tool" / "cli.py").write_text(CLI)
    ref = subprocess.run([python, "-c", REFERENCE], cwd=str(tmp_path), stdout=subprocess.PIPE,
                         universal_newlines=True, check=True, timeout=300).stdout
    ref = json.loads(ref)
    ref["hits"] = {int(line): n for line, n in ref["hits"].items()}
    assert ref["hits"][5] == 1000 and ref["kept"] > 10 * 100000
    return ref


def functions(tmp_path, name):
    """{function name: {line: its entry}} of the document sonde wrote."""
    with open(str(tmp_path / name)) as f:
        return {fn["name"]: {line["line"]: line for line in fn["lines"]}
                for fn in json.load(f)["functions"]}


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("pattern", PATTERNS + [None])
def test_lines_counts_the_module_run_as_main(python, pattern, tmp_path):
    """Every way to name work, and no -f at all (every function of the
    module), gives work's line events as the interpreter reports them."""
    python = need(python)
    ref = package(tmp_path, python)
    chosen = ["-f", pattern] if pattern else []
    proc = run_sonde(["lines", "-o", "l.json"] + chosen + ["-m", "tool.cli"], tmp_path,
                     python=python)
    assert proc.returncode == 0 and proc.stdout == ref["out"], proc.stderr
    assert "sonde:" not in proc.stderr and "Function: work at line 1" in proc.stderr
    got = functions(tmp_path, "l.json")
    assert sorted(got) == (["work"] if pattern else ["main", "unused", "work"])
    assert {line: e["hits"] for line, e in got["work"].items() if e["hits"]} == ref["hits"]


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("pattern", PATTERNS[:3])
def test_mem_follows_the_module_run_as_main(python, pattern, tmp_path):
    """What work keeps, on the line that allocated it, as tracemalloc
    counts it in a bare run."""
    python = need(python)
    ref = package(tmp_path, python)
    proc = run_sonde(["mem", "--sample-bytes", "0", "-o", "m.json", "-f", pattern,
                      "-m", "tool.cli"], tmp_path, python=python)
    assert proc.returncode == 0 and proc.stdout == ref["out"], proc.stderr
    assert "sonde:" not in proc.stderr
    got = functions(tmp_path, "m.json")
    assert list(got) == ["work"]
    keep = got["work"][KEEP_LINE]
    assert abs(keep["net_bytes"] - ref["kept"]) <= 1024, (keep, ref["kept"])
    assert keep["alloc_bytes"] >= keep["net_bytes"]


@pytest.mark.parametrize("python", version_params())
def test_a_bare_name_prefers_the_programs_own_and_never_ran_is_said(python, tmp_path):
    """-f main is the module's main, not site's, dis's or tokenize's (loaded
    at start, never run); -f unused names a function that never ran: one
    line says so."""
    python = need(python)
    ref = package(tmp_path, python)
    proc = run_sonde(["lines", "-o", "l.json", "-f", "main", "-m", "tool.cli"], tmp_path,
                     python=python)
    assert proc.returncode == 0 and "sonde:" not in proc.stderr, proc.stderr
    with open(str(tmp_path / "l.json")) as f:
        (main,) = json.load(f)["functions"]
    assert (main["name"], main["file"]) == ("main", str(tmp_path / "tool" / "cli.py"))
    assert [line["hits"] for line in main["lines"]] == [0, 1, 1, 1]
    for tool, why in (("lines", "which never ran"),
                      ("mem", "on whose lines nothing ran or was allocated")):
        proc = run_sonde([tool, "-f", "unused", "-m", "tool.cli"], tmp_path, python=python)
        assert proc.returncode == 0 and proc.stdout == ref["out"], proc.stderr
        said = [line for line in proc.stderr.splitlines() if line.startswith("sonde")]
        assert said == ["sonde: warning: -f unused matched unused (cli.py), %s" % why]
