"""%sonde / %%sonde (issue 25, notebooks): a real IPython shell in a fresh
process running the package from build/python, and a real Jupyter kernel
executing a notebook (nbclient).  Every number is checked against an
independent reference measured beside it: cProfile's call counts, the
interpreter's own line events (sys.settrace), tracemalloc's bytes."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import PKG

# The workload the shell defines: recursion, builtins and methods, a loop.
DEFS = textwrap.dedent("""\
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def g(i):
        return sorted([i, i // 2, i % 3])

    def f(n):
        t = 0
        for i in range(n):
            if i % 2:
                t += len(g(i))
            t += fib(i % 7)
        return t
    """)

MEM_CELL = "buf = bytearray(8_000_000)\nsmall = [str(i) for i in range(100)]\n"

BAD = [
    ("%sonde", "which subcommand?"),
    ("%sonde bogus f(1)", "unknown subcommand 'bogus'"),
    ("%sonde run", "which statement?"),
    ("%sonde run -s bogus f(1)", "-s takes one of"),
    ("%sonde run -l x f(1)", "-l takes a number of rows"),
    ("%sonde run f(", "not valid Python"),
    ("%sonde lines f(1)", "which function? name it with -f"),
    ("%sonde lines -f nothing_here f(1)", "-f nothing_here names nothing here"),
    ("%sonde lines -f len f(1)", "not a Python function"),
    ("%sonde mem -q f(1)", "option -q not recognized"),
    ("%%sonde run f(1)\npass", "nothing may follow"),
    ("%sonde timeit -n 0 pass", "-n takes a number of loops"),
]

# Runs in a fresh interpreter: IPython's shell, `%load_ext sonde`, each
# magic with its output captured, and the references measured in the same
# process.  Prints one JSON document.
DRIVER = textwrap.dedent("""\
    import contextlib, cProfile, io, json, pstats, sys, tracemalloc
    from IPython.core.interactiveshell import InteractiveShell
    defs, mem_cell, bad = json.loads(sys.argv[1])
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "sonde")
    assert shell.run_cell(defs).success
    ns = shell.user_ns

    def cell(source):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = shell.run_cell(source)
        e = result.error_in_exec or result.error_before_exec
        return {"out": out.getvalue(), "err": err.getvalue(),
                "error": type(e).__name__ if e else None, "message": str(e) if e else None}

    doc = {"run": cell("%sonde run -l 0 f(10)"), "lines": cell("%sonde lines -f f f(10)"),
           "mem": cell("%%sonde mem\\n" + mem_cell), "mem_line": cell("%sonde mem bytearray(8_000_000)"),
           "bad": [cell(line) for line, _ in bad]}

    # cProfile's counts of the same statement in the same namespace.
    ref = cProfile.Profile()
    ref.runctx("f(10)", ns, ns)
    doc["cprofile"] = {pstats.func_std_string(k): [v[0], v[1]] for k, v in pstats.Stats(ref).stats.items()}

    # The interpreter's own line events in f, per line.
    hits = {}
    def tracer(frame, event, arg):
        if frame.f_code is ns["f"].__code__:
            def local(frame, event, arg):
                if event == "line":
                    hits[frame.f_lineno] = hits.get(frame.f_lineno, 0) + 1
                return local
            return local
        return None
    sys.settrace(tracer)
    ns["f"](10)
    sys.settrace(None)
    doc["settrace"] = hits
    doc["f_first_line"] = ns["f"].__code__.co_firstlineno

    # tracemalloc's bytes of the cell's first line.
    tracemalloc.start()
    kept = {}  # alive until the snapshot, as the shell's namespace keeps buf
    exec(compile(mem_cell, "mem_cell.py", "exec"), kept)
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    doc["tracemalloc"] = sum(s.size for s in snap.statistics("lineno")
                             if s.traceback[0].filename == "mem_cell.py" and s.traceback[0].lineno == 1)
    print(json.dumps(doc))
    """)


@pytest.fixture(scope="module")
def shell_doc():
    pytest.importorskip("IPython", reason="IPython is not installed (tests/requirements.txt installs it)")
    env = dict(os.environ, PYTHONPATH=PKG)
    p = subprocess.run([sys.executable, "-c", DRIVER, json.dumps([DEFS, MEM_CELL, BAD])],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


ROW = re.compile(r"^\s*(\d+)(?:/(\d+))?\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(.+)$")


def table_rows(out):
    """label -> [ncalls, primitive calls] of a pstats-style table."""
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            total = int(m.group(1))
            rows[m.group(3)] = [total, int(m.group(2)) if m.group(2) else total]
    return rows


def test_run_counts_equal_cprofile(shell_doc):
    run = shell_doc["run"]
    assert run["error"] is None, run
    rows = table_rows(run["out"])
    ref = shell_doc["cprofile"]
    compared = [label for label in rows if "(<module>)" not in label]
    for label in compared:
        assert label in ref, (label, sorted(ref))
        # cProfile's (primitive, total) against the table's total/primitive
        assert rows[label] == [ref[label][1], ref[label][0]], (label, rows[label], ref[label])
    names = {re.sub(r"^.*:\d+", "", label) for label in compared}
    assert {"(f)", "(g)", "(fib)", "{built-in method builtins.sorted}",
            "{built-in method builtins.len}"} <= names, names
    fib = next(label for label in rows if label.endswith("(fib)"))
    assert rows[fib][0] > rows[fib][1]  # recursion: total/primitive
    # Not a notebook: the page's path is printed, and it was written.
    page = re.search(r"^page: (.+\.html)$", run["out"], re.M)
    assert page and os.path.getsize(page.group(1)) > 1000


def test_lines_hits_equal_line_events(shell_doc):
    lines = shell_doc["lines"]
    assert lines["error"] is None, lines
    first = shell_doc["f_first_line"]
    hits = {}
    in_table = False
    for line in lines["out"].splitlines():
        if line.startswith("Function: f at line %d" % first):
            in_table = True
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+\S", line)
        if in_table and m and not line.rstrip().endswith("def f(n):"):
            hits[int(m.group(1))] = int(m.group(2))
    expected = {int(k): v for k, v in shell_doc["settrace"].items()}
    assert hits == expected
    assert len(expected) >= 6


def mib(text):
    value, unit = text.split()
    return float(value) * {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}[unit]


def test_mem_cell_line_within_10_percent_of_tracemalloc(shell_doc):
    mem = shell_doc["mem"]
    assert mem["error"] is None, mem
    row = next(line for line in mem["out"].splitlines()
               if line.rstrip().endswith("buf = bytearray(8_000_000)"))
    # Line #, Mem usage, Increment, Occurrences, Allocated, Net
    m = re.match(r"^\s*1\s+\S+ MiB\s+\S+ MiB\s+-\s+(\S+ \S+)\s+(\S+ \S+)\s", row)
    assert m, row
    ref = shell_doc["tracemalloc"]
    assert ref >= 8_000_000
    assert abs(mib(m.group(1)) - ref) <= 0.1 * ref, (row, ref)
    assert abs(mib(m.group(2)) - ref) <= 0.1 * ref, (row, ref)  # buf is still alive
    assert re.search(r"^peak memory: [\d.]+ MiB, increment: -?[\d.]+ MiB", mem["out"], re.M)
    # A statement: its one line, the bytes it allocated.
    stmt = shell_doc["mem_line"]
    row = next(line for line in stmt["out"].splitlines()
               if line.rstrip().endswith("bytearray(8_000_000)"))
    m = re.match(r"^\s*1\s+\S+ MiB\s+\S+ MiB\s+-\s+(\S+ \S+)\s", row)
    assert m and abs(mib(m.group(1)) - ref) <= 0.1 * ref, (row, ref)


@pytest.mark.parametrize("k", range(len(BAD)), ids=[line.split("\n")[0] for line, _ in BAD])
def test_usage_errors_are_one_line(shell_doc, k):
    result = shell_doc["bad"][k]
    assert result["error"] == "UsageError", result
    assert BAD[k][1] in result["message"] and "\n" not in result["message"].strip(), result
    assert "Traceback" not in result["out"] + result["err"], result


# ------------------------------------------------------------ a Jupyter kernel

def execute_notebook(sources, monkeypatch, pythonpath):
    """A notebook of these cells, executed by a real Jupyter kernel (the
    python3 kernel of ipykernel, this interpreter) that imports sonde from
    pythonpath; every cell may raise."""
    nbformat = pytest.importorskip("nbformat", reason="tests/requirements.txt installs nbformat")
    nbclient = pytest.importorskip("nbclient", reason="tests/requirements.txt installs nbclient")
    pytest.importorskip("ipykernel", reason="tests/requirements.txt installs ipykernel")
    monkeypatch.setenv("PYTHONPATH", pythonpath)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True)
    try:
        manager = client.setup_kernel()
        manager.__enter__()
    except Exception as e:  # outside sonde: no kernel (ports, ZMQ, the kernel spec)
        pytest.skip("the Jupyter kernel could not start: %s: %s" % (type(e).__name__, e))
    try:
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    finally:
        manager.__exit__(None, None, None)
    return nb


def test_notebook_kernel_runs_sonde_cell(monkeypatch):
    nb = execute_notebook(["%%sonde\nf(10)", "%load_ext sonde", DEFS, "%%sonde\nf(10)\nf(3)"],
                          monkeypatch, PKG)

    # Without `%load_ext sonde`: IPython's one line, no traceback.
    (err,) = [o for o in nb.cells[0].outputs]
    assert err.get("name") == "stderr" and err.text.strip() == "UsageError: Cell magic `%%sonde` not found."

    outputs = nb.cells[3].outputs
    text = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stdout")
    rows = table_rows(text)
    calls = {re.sub(r"^.*:\d+", "", label): n for label, n in rows.items()}
    # The reference: cProfile over the same cell, here.
    import cProfile
    import pstats
    ns = {}
    exec(DEFS, ns)
    ref = cProfile.Profile()
    ref.runctx("f(10)\nf(3)", ns, ns)
    ref_calls = {pstats.func_std_string(k).rpartition(":")[2] if k[0] != "~" else
                 pstats.func_std_string(k): [v[1], v[0]] for k, v in pstats.Stats(ref).stats.items()}
    for name in ("(f)", "(g)", "(fib)", "{built-in method builtins.sorted}"):
        key = next(k for k in ref_calls if k.endswith(name))
        assert calls[name] == ref_calls[key], (name, calls, ref_calls)
    pages = [o for o in outputs if o.output_type == "display_data" and "text/html" in o.data]
    assert len(pages) == 1
    html = pages[0].data["text/html"]
    assert html.startswith("<iframe srcdoc=\"&lt;!DOCTYPE html&gt;") and "Content-Security-Policy" in html
    assert not [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"], outputs


def test_notebook_kernel_without_the_extension(monkeypatch, tmp_path):
    # The package without its C extension (not built for the kernel's
    # Python): `%load_ext sonde` says so in one line, no traceback.
    import shutil
    shutil.copytree(os.path.join(PKG, "sonde"), str(tmp_path / "sonde"),
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    nb = execute_notebook(["%load_ext sonde"], monkeypatch, str(tmp_path))
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert [o.output_type for o in nb.cells[0].outputs] == ["stream"], nb.cells[0].outputs
    assert "Traceback" not in text and len(text.strip().splitlines()) == 1, text
    assert text.startswith("UsageError: sonde: its C extension is not built for this kernel's "
                           "Python %d.%d" % sys.version_info[:2]), text
