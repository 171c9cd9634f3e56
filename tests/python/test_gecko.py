"""-f gecko: sampled profiles in the Firefox Profiler's Gecko profile
format, and Firefox Profiler files (sonde's, Python 3.15's processed ones)
read back by report and view (issue 26).

References, none of them sonde's reader: the test's own walk of the
file's tables (stack -> prefix chain -> frame -> location string, parsed
with the Firefox Profiler's own regular expression for code locations);
sonde's collapsed output of the same recording; the keys and schema
fields the Profiler's importer reads (src/types/gecko-profile.ts and
src/profile-logic/process-profile.ts of firefox-devtools/profiler); and a
file written by Python 3.15's own sampler, walked the same way."""

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from conftest import HERE, SID, SONDE, start_ready, stop_ready

# Two threads, each in a function of its own.
FUNCTIONS = """
import threading

def alpha(n):
    t = 0
    for i in range(n):
        t += i
    return t

def beta(n):
    t = 0
    for i in range(n):
        t -= i
    return t
"""

# Both threads run until killed; "ready" once both do.
WORK = FUNCTIONS + """
def worker(going):
    going.wait()
    while True:
        beta(100000)

def main():
    going = threading.Barrier(2)
    threading.Thread(target=worker, args=(going,), name="gecko-worker", daemon=True).start()
    going.wait()
    print("ready", flush=True)
    while True:
        alpha(100000)

main()
"""

# The same functions for a while, then done: for a sampler that runs a
# program to its end (3.15's profiling.sampling run).
WORK_ONCE = FUNCTIONS + """
def worker():
    for _ in range(30):
        beta(100000)

def main():
    th = threading.Thread(target=worker, name="gecko-worker")
    th.start()
    for _ in range(30):
        alpha(100000)
    th.join()

main()
"""

# The Firefox Profiler's regular expressions for a frame's location
# (process-profile.ts: _extractCppFunction, _extractJsFunction).
CPP = [re.compile(r"^(.*) \(in ([^)]*)\) (\+ [0-9]+)$"),
       re.compile(r"^(.*) \(in ([^)]*)\) (\(.*:.*\))$"),
       re.compile(r"^(.*) \(in ([^)]*)\)$")]
JS = [re.compile(r"^(.*) \((.+?):([0-9]+)(?::([0-9]+))?\)(?:\[(\d+)\])?$"),
      re.compile(r"^()(.+?):([0-9]+)(?::([0-9]+))?(?:\[(\d+)\])?$")]

# What the Profiler's Gecko importer reads (gecko-profile.ts's GeckoProfile,
# GeckoThread; processGeckoProfile and _processThread), at the version sonde
# writes (no upgrader runs on it, so every one is needed as it is).
TOP_KEYS = {"meta", "libs", "threads", "processes", "pausedRanges", "sources"}
META_KEYS = {"version", "interval", "startTime", "processType", "categories", "markerSchema",
             "stackwalk", "debug", "product", "platform", "oscpu", "abi", "presymbolicated"}
THREAD_KEYS = {"name", "processType", "processName", "tid", "pid", "registerTime",
               "unregisterTime", "markers", "samples", "frameTable", "stackTable",
               "stringTable"}
SCHEMAS = {
    "frameTable": {"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3,
                   "line": 4, "column": 5, "category": 6, "subcategory": 7},
    "stackTable": {"prefix": 0, "frame": 1},
    "markers": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5},
}
SOURCES_SCHEMA = {"id": 0, "filename": 1, "startLine": 2, "startColumn": 3, "sourceMapURL": 4}
# The Profiler's GECKO_PROFILE_VERSION (src/app-logic/constants.ts) when
# this was written: it refuses newer files, and version 34 gave the
# sources table the schema above.
PROFILER_VERSION = 36


def run(*args, **kw):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=kw.pop("timeout", 300), **kw)


def function_of(location):
    """(name, file) of a location string, as the Profiler reads it: a
    label has no file."""
    for rx in CPP:
        m = rx.match(location)
        if m:
            return m.group(1), m.group(2)
    for rx in JS:
        m = rx.match(location)
        if m:
            return m.group(1) or "(root scope) " + m.group(2), m.group(2)
    return location, "~"


def rows(table):
    schema = table["schema"]
    return [{k: (row[i] if i < len(row) else None) for k, i in schema.items()}
            for row in table["data"]]


def gecko_stacks(doc, periods=True, counted=False):
    """{stack: weight} of a Gecko file, its threads together, as collapsed
    stacks count them: a stack is its frames root first, each (name, file,
    line) with the line sampled (the function's when the frame has none);
    a sample weighs 1, or its threadCPUDelta in ns where the file has it,
    counted in sampling periods per stack (as collapsed stacks count
    record's cpu mode), rounded half up."""
    sums, cpu = Counter(), False
    for th in doc["threads"]:
        strings, frames, stacks = th["stringTable"], rows(th["frameTable"]), rows(th["stackTable"])
        cpu = cpu or ("threadCPUDelta" in th["samples"]["schema"] and not counted)
        for s in rows(th["samples"]):
            path, k = [], s["stack"]
            while k is not None:
                frame = frames[stacks[k]["frame"]]
                location = strings[frame["location"]]
                name, file = function_of(location)
                first = re.search(r":(\d+)\)$", location)
                line = frame["line"] or (int(first.group(1)) if first and file != "~" else 0)
                path.append((name, file, line))
                assert stacks[k]["prefix"] is None or stacks[k]["prefix"] < k
                k = stacks[k]["prefix"]
            sums[tuple(reversed(path))] += s["threadCPUDelta"] if cpu else 1
    if cpu and periods:
        rate = 1000.0 / doc["meta"]["interval"]
        sums = Counter({k: int(v * 1e-9 / (1 / rate) + 0.5) for k, v in sums.items()})
    return Counter({k: v for k, v in sums.items() if v > 0})


def collapsed_stacks(text):
    """The same of collapsed stacks: "NAME (FILE:LINE);... COUNT"."""
    sums = Counter()
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        path = []
        for frame in stack.split(";"):
            m = re.match(r"^(.*) \((.*):(-?\d+)\)$", frame)
            path.append((m.group(1), m.group(2), int(m.group(3))))
        sums[tuple(path)] += int(count)
    return sums


def by_function(stacks):
    """{(name, file): (weight on the stack, weight running)} and the total."""
    inclusive, self_ = Counter(), Counter()
    for path, w in stacks.items():
        self_[path[-1][:2]] += w
        for f in {frame[:2] for frame in path}:
            inclusive[f] += w
    return inclusive, self_, sum(stacks.values())


def check_importer_keys(doc):
    assert TOP_KEYS <= set(doc), set(doc)
    meta = doc["meta"]
    assert META_KEYS <= set(meta), set(meta)
    assert isinstance(meta["version"], int) and meta["version"] <= PROFILER_VERSION
    assert meta["version"] >= 34  # the sources table's schema below is version 34's
    assert doc["sources"]["schema"] == SOURCES_SCHEMA
    assert meta["interval"] > 0 and meta["presymbolicated"] is True
    for c in meta["categories"]:
        assert {"name", "color", "subcategories"} <= set(c) and c["subcategories"]
    assert doc["processes"] == [] and doc["pausedRanges"] == []
    for th in doc["threads"]:
        assert THREAD_KEYS <= set(th), set(th)
        for key, schema in SCHEMAS.items():
            assert th[key]["schema"] == schema
        samples = th["samples"]["schema"]
        # the importer requires eventDelay (or responsiveness)
        assert samples["stack"] == 0 and samples["time"] == 1 and samples["eventDelay"] == 2
        strings, nframes = th["stringTable"], len(th["frameTable"]["data"])
        assert all(isinstance(s, str) for s in strings)
        for f in rows(th["frameTable"]):
            assert 0 <= f["location"] < len(strings)
            assert 0 <= f["category"] < len(meta["categories"]) and f["subcategory"] == 0
        for k, s in enumerate(rows(th["stackTable"])):
            assert 0 <= s["frame"] < nframes and (s["prefix"] is None or 0 <= s["prefix"] < k)
        times = [s["time"] for s in rows(th["samples"])]
        assert times == sorted(times), "samples out of time order"
        assert all(0 <= s["stack"] < len(th["stackTable"]["data"]) for s in rows(th["samples"]))
        for m in rows(th["markers"]):
            assert 0 <= m["name"] < len(strings) and m["startTime"] <= m["endTime"]


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """One recording of WORK in sonde's JSON, with its collapsed stacks
    and Gecko file (both converted from it), and record -f gecko's own."""
    d = tmp_path_factory.mktemp("gecko")
    # Attached in wall mode once both threads run (WORK runs until killed):
    # both are in every sample, however busy the machine.
    work = start_ready(sys.executable, d, WORK)
    try:
        rec = run(SONDE, "record", "--mode", "wall", "-r", "200", "-d", "0.5", "-f", "json",
                  "-o", "w.json", "-p", str(work.pid), cwd=str(d))
        direct = run(SONDE, "record", "--mode", "wall", "-r", "200", "-d", "0.5", "-f", "gecko",
                     "-o", "r.gecko.json", "-p", str(work.pid), cwd=str(d))
    finally:
        stop_ready(work)
    assert rec.returncode == 0, rec.stderr
    assert direct.returncode == 0, direct.stderr
    for fmt, out in (("collapsed", "w.collapsed"), ("gecko", "w.gecko.json")):
        conv = run(SONDE, "report", "w.json", "-f", fmt, "-o", out, cwd=str(d))
        assert conv.returncode == 0, conv.stderr
    return d


def test_gecko_counts_equal_collapsed_of_the_same_recording(recording):
    with open(str(recording / "w.gecko.json")) as f:
        doc = json.load(f)
    stacks_g = gecko_stacks(doc)
    stacks_c = collapsed_stacks((recording / "w.collapsed").read_text())
    assert stacks_g == stacks_c
    inc_g, self_g, total_g = by_function(stacks_g)
    inc_c, self_c, total_c = by_function(stacks_c)
    assert total_g == total_c and total_g > 0
    assert inc_g == inc_c and self_g == self_c
    mine = {f: n for f, n in inc_g.items() if f[1].endswith("prog.py")}
    assert {name for name, _ in mine} >= {"alpha", "beta", "worker", "main"}, mine


@pytest.mark.parametrize("name", ["w.gecko.json", "r.gecko.json"])
def test_gecko_file_has_what_the_profiler_imports(recording, name):
    with open(str(recording / name)) as f:
        doc = json.load(f)
    check_importer_keys(doc)
    threads = {th["name"] for th in doc["threads"]}
    assert {"MainThread", "gecko-worker"} <= threads, threads
    for th in doc["threads"]:
        assert th["samples"]["data"], th["name"]
        assert th["tid"] > 0 and th["pid"] > 0


def test_firefox_profilers_own_processing(recording):
    """The Firefox Profiler's own processGeckoProfile (gecko_process.js runs
    its TypeScript sources under node) takes the file, and its processed
    profile has the threads, samples in time order and per function the
    samples this test's walk of the file counts.  Needs a checkout of the
    Profiler named by SONDE_FIREFOX_PROFILER, node and the typescript
    module (Debian's node-typescript)."""
    root = os.environ.get("SONDE_FIREFOX_PROFILER", "")
    node = shutil.which("node")
    tsmod = next((m for m in ("/usr/share/nodejs/typescript", "/usr/lib/node_modules/typescript")
                  if os.path.isdir(m)), None)
    if not (os.path.isdir(os.path.join(root, "src", "profile-logic")) and node and tsmod):
        pytest.skip("needs SONDE_FIREFOX_PROFILER (a checkout of firefox-devtools/profiler), "
                    "node and node-typescript")
    out = run(node, os.path.join(HERE, "gecko_process.js"), root, tsmod,
              str(recording / "w.gecko.json"))
    assert out.returncode == 0, out.stderr
    processed = json.loads(out.stdout)
    with open(str(recording / "w.gecko.json")) as f:
        doc = json.load(f)
    inclusive, self_ = Counter(), Counter()
    for th in processed["threads"]:
        assert th["sorted"], th["name"]
        inclusive.update(th["inc"])
        self_.update(th["self"])
    assert {th["name"] for th in processed["threads"]} == {th["name"] for th in doc["threads"]}
    inc_g, self_g, total = by_function(gecko_stacks(doc, counted=True))
    assert sum(th["samples"] for th in processed["threads"]) == total
    assert inclusive == Counter({"%s @ %s" % k: n for k, n in inc_g.items()})
    assert self_ == Counter({"%s @ %s" % k: n for k, n in self_g.items()})


def table_rows(text):
    """The table's lines (ties among equal rows may come in another order)."""
    return sorted(line for line in text.splitlines() if line.strip())


def test_report_of_the_gecko_file_is_the_report_of_the_original(recording):
    a = run(SONDE, "report", "w.json", "-l", "500", cwd=str(recording))
    b = run(SONDE, "report", "w.gecko.json", "-l", "500", cwd=str(recording))
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert table_rows(a.stdout) == table_rows(b.stdout)
    # and once more through the Gecko writer: the same samples again
    again = run(SONDE, "report", "w.gecko.json", "-f", "gecko", "-o", "-", cwd=str(recording))
    assert again.returncode == 0, again.stderr
    first = json.loads((recording / "w.gecko.json").read_text())
    assert samples_of(json.loads(again.stdout)) == samples_of(first)


def samples_of(doc):
    """Each thread's samples: time and stack (location and line of each
    frame, root first), whatever the tables' order."""
    out = []
    for th in doc["threads"]:
        frames, stacks = rows(th["frameTable"]), rows(th["stackTable"])
        samples = []
        for s in rows(th["samples"]):
            path, k = [], s["stack"]
            while k is not None:
                f = frames[stacks[k]["frame"]]
                path.append((th["stringTable"][f["location"]], f["line"]))
                k = stacks[k]["prefix"]
            samples.append((s["time"], tuple(reversed(path))))
        out.append((th["name"], th["tid"], samples))
    return out


def test_view_of_a_gecko_file(recording):
    v = run(SONDE, "view", "w.gecko.json", "-o", "page.html", cwd=str(recording))
    assert v.returncode == 0, v.stderr
    page = (recording / "page.html").read_text()
    for name in ("alpha", "beta", "gecko-worker"):
        assert name in page


def gecko_doc(threads, meta=None):
    m = {"version": 34, "interval": 1.0, "startTime": 0, "categories": []}
    m.update(meta or {})
    return {"meta": m, "libs": [], "threads": threads}


def thread(strings, frames, stacks, samples, cpu=False, name="T"):
    schema = {"stack": 0, "time": 1, "eventDelay": 2}
    if cpu:
        schema["threadCPUDelta"] = 3
    return {"name": name, "tid": 7, "pid": 7, "stringTable": strings,
            "frameTable": {"schema": {"location": 0, "line": 1}, "data": frames},
            "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": stacks},
            "samples": {"schema": schema, "data": samples}}


def test_gc_markers_and_cpu_weights_round_trip(tmp_path):
    """A file with <GC> frames at known times, its samples weighed in CPU
    ns: sonde reads it and writes it again with the GC runs as markers and
    the weights as threadCPUDelta, and its table weighs them."""
    strings = ["main (/a.py:1)", "work (/a.py:5)", "<GC>"]
    frames = [[0, 2], [1, 6], [2, None]]
    stacks = [[None, 0], [0, 1], [1, 2], [0, 2]]
    times = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    stack_at = [1, 2, 2, 1, 3, 3, 1]   # GC from 2 to 4, and from 5 to 7
    cpu = [1000000, 500000, 500000, 1000000, 250000, 250000, 1000000]
    doc = gecko_doc([thread(strings, frames, stacks,
                            [[s, t, None, c] for s, t, c in zip(stack_at, times, cpu)], cpu=True)],
                    {"sampleUnits": {"time": "ms", "eventDelay": "ms", "threadCPUDelta": "ns"}})
    (tmp_path / "in.json").write_text(json.dumps(doc))
    out = run(SONDE, "report", "in.json", "-f", "gecko", "-o", "out.json", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    back = json.loads((tmp_path / "out.json").read_text())
    check_importer_keys(back)
    th = back["threads"][0]
    marks = [(th["stringTable"][m["name"]], m["startTime"], m["endTime"])
             for m in rows(th["markers"])]
    assert marks == [("<GC>", 2.0, 4.0), ("<GC>", 5.0, 7.0)]
    assert back["meta"]["sampleUnits"]["threadCPUDelta"] == "ns"
    assert [s["threadCPUDelta"] for s in rows(th["samples"])] == cpu
    assert [s["time"] for s in rows(th["samples"])] == times
    assert back["meta"]["interval"] == 1.0
    # through sonde's JSON, whose timeline keeps the weights too
    via = run(SONDE, "report", "in.json", "-f", "json", "-o", "via.json", cwd=str(tmp_path))
    assert via.returncode == 0, via.stderr
    via = run(SONDE, "report", "via.json", "-f", "gecko", "-o", "-", cwd=str(tmp_path))
    assert via.returncode == 0, via.stderr
    assert samples_of(json.loads(via.stdout)) == samples_of(back)
    assert [s["threadCPUDelta"] for s in rows(json.loads(via.stdout)["threads"][0]["samples"])] \
        == cpu
    inc, self_, total = by_function(gecko_stacks(back, periods=False))
    assert total == sum(cpu) and self_[("<GC>", "~")] == 1500000
    assert inc[("work", "/a.py")] == sum(cpu) - cpu[4] - cpu[5]  # all but main > <GC>
    # the table weighs each function's CPU time: work's 4 ms, in all
    rep = run(SONDE, "report", "in.json", cwd=str(tmp_path))
    assert rep.returncode == 0, rep.stderr
    work = [line for line in rep.stdout.splitlines() if line.endswith("(work)")]
    assert len(work) == 1 and re.search(r" 0\.004 +\S+ /a\.py:5\(work\)$", work[0]), rep.stdout


def test_samples_that_used_no_cpu_are_left_out(tmp_path):
    """A Firefox file's idle samples (threadCPUDelta 0, here every sample of
    one stack) weigh nothing: they are no samples of the profile (as record's
    cpu mode keeps none), so its JSON reads back and the table weighs only
    the CPU the others used."""
    strings = ["main (/a.py:1)", "work (/a.py:5)", "idle (/a.py:9)"]
    frames = [[0, 2], [1, 6], [2, 10]]
    stacks = [[None, 0], [0, 1], [0, 2]]
    rows_in = [[1, 1.0, None, 2000000], [2, 2.0, None, 0], [1, 3.0, None, 1000000],
               [2, 4.0, None, 0]]
    doc = gecko_doc([thread(strings, frames, stacks, rows_in, cpu=True)],
                    {"sampleUnits": {"time": "ms", "eventDelay": "ms", "threadCPUDelta": "ns"}})
    (tmp_path / "in.json").write_text(json.dumps(doc))
    out = run(SONDE, "report", "in.json", "-f", "json", "-o", "via.json", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    back = run(SONDE, "report", "via.json", "-f", "gecko", "-o", "-", cwd=str(tmp_path))
    assert back.returncode == 0, back.stderr
    th = json.loads(back.stdout)["threads"][0]
    assert [(s["time"], s["threadCPUDelta"]) for s in rows(th["samples"])] == \
        [(1.0, 2000000), (3.0, 1000000)]
    rep = run(SONDE, "report", "via.json", cwd=str(tmp_path))
    assert rep.returncode == 0, rep.stderr
    assert "(idle)" not in rep.stdout and re.search(r" 0\.003 +\S+ /a\.py:5\(work\)$",
                                                    rep.stdout, re.M), rep.stdout


def test_labels_that_look_like_code_stay_labels(tmp_path):
    """A label the Profiler would read as code or as a library's function
    is written so that it reads back as what it was."""
    tricky = ["process 12 (python3 x.py:3)", "0x7f00", "thread w:12", "f (in libc.so)",
              "plain <label>", "g (a:1:2)", "b.js:1:2[3]", "h (in libm.so) + 12",
              "k (in libz.so) (inflate.c:3)", "m (n (o:5))", "(p:1)", "q ( (r:7)", "s (t:x)"]
    strings = ["main (/a.py:1)"] + tricky
    frames = [[0, None]] + [[k + 1, None] for k in range(len(tricky))]
    stacks = [[None, 0]] + [[0, k + 1] for k in range(len(tricky))]
    samples = [[k + 1, float(k), None] for k in range(len(tricky))]
    (tmp_path / "in.json").write_text(json.dumps(gecko_doc([thread(strings, frames, stacks,
                                                                   samples)])))
    col = run(SONDE, "report", "in.json", "-f", "collapsed", cwd=str(tmp_path))
    assert col.returncode == 0, col.stderr
    # sonde names each function as the Profiler does (a library's function
    # by its name: sonde keeps the file named after the library, if any)
    leaves = [list(collapsed_stacks(line))[0][-1] for line in col.stdout.splitlines()]
    for text in tricky:
        name, file = function_of(text)
        native = any(rx.match(text) for rx in CPP) and not text.startswith("0x")
        assert any(leaf[0] == name and (native or leaf[1] == file) for leaf in leaves), \
            (text, name, file, leaves)
    out = run(SONDE, "report", "in.json", "-f", "gecko", "-o", "-", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    back = json.loads(out.stdout)
    # what the Profiler will show, and what sonde reads back, is what the
    # first file said: "0x7f00" is an address to both, "f (in libc.so)" a
    # library's function, the others labels
    got = {function_of(s) for s in back["threads"][0]["stringTable"]}
    want = {function_of(s) for s in strings}
    assert got == want
    (tmp_path / "back.json").write_text(out.stdout)
    col2 = run(SONDE, "report", "back.json", "-f", "collapsed", cwd=str(tmp_path))
    assert col2.returncode == 0
    assert sorted(col2.stdout.splitlines()) == sorted(col.stdout.splitlines())


def walk_processed(doc):
    """{function name: (samples on the stack, samples running)} of a file
    in the Profiler's processed format (Python 3.15's --gecko)."""
    strings = doc["shared"]["stringArray"]
    inclusive, self_, total = Counter(), Counter(), 0
    for th in doc["threads"]:
        st, fr, fn = th["stackTable"], th["frameTable"], th["funcTable"]
        for k, s in enumerate(th["samples"]["stack"]):
            if s is None:
                continue
            names = []
            while s is not None:
                names.append(strings[fn["name"][fr["func"][st["frame"][s]]]])
                s = st["prefix"][s]
            self_[names[0]] += 1
            for n in set(names):
                inclusive[n] += 1
            total += 1
    return inclusive, self_, total


def test_python315_gecko_file_read_by_report(tmp_path):
    py = os.path.join(SID, "python3.15")
    if not os.path.exists(py):
        pytest.skip("Python 3.15 (the Debian root) not on this machine")
    (tmp_path / "work.py").write_text(WORK_ONCE)
    rec = run(py, "-m", "profiling.sampling", "run", "-a", "--gecko", "-o", "py.json", "work.py",
              cwd=str(tmp_path))
    if rec.returncode != 0 and "ermission" in rec.stderr:
        pytest.skip("3.15's sampler may not read the process here: " + rec.stderr[-200:])
    assert rec.returncode == 0, rec.stderr
    with open(str(tmp_path / "py.json")) as f:
        doc = json.load(f)
    assert "preprocessedProfileVersion" in doc["meta"]  # 3.15 writes the processed format
    inclusive, self_, total = walk_processed(doc)
    rep = run(SONDE, "report", "py.json", "-l", "1000", cwd=str(tmp_path))
    assert rep.returncode == 0, rep.stderr
    assert re.search(r"^ *%d samples in " % total, rep.stdout, re.M), rep.stdout
    shown = {}
    for line in rep.stdout.splitlines():
        m = re.match(r"^ *(\d+)(?:/(\d+))? .* (\S+)$", line)
        if m:  # "file:line(name)", or a label
            name = re.search(r"(?:\(([^()]*)\))?$", m.group(3)).group(1) or m.group(3)
            on = int(m.group(1))
            shown[name] = (on, int(m.group(2)) if m.group(2) else on)
    for name in ("alpha", "beta", "worker", "main"):
        assert name in inclusive, sorted(inclusive)
        assert shown[name] == (inclusive[name], self_[name]), (name, shown.get(name))
    assert inclusive["alpha"] > 10 and inclusive["beta"] > 10


def bad_files():
    ok_strings, ok_frames = ["main (/a.py:1)"], [[0, 1]]
    yield "threads not a list", {"meta": {"interval": 1}, "threads": 3}
    yield "no interval", gecko_doc([], {"interval": "fast"})
    yield "thread not an object", gecko_doc([17])
    yield "prefix is itself", gecko_doc([thread(ok_strings, ok_frames, [[0, 0]], [[0, 1, None]])])
    yield "prefix cycle", gecko_doc([thread(ok_strings, ok_frames, [[1, 0], [0, 0]],
                                            [[1, 1, None]])])
    yield "prefix out of range", gecko_doc([thread(ok_strings, ok_frames, [[None, 0], [9, 0]],
                                                   [[1, 1, None]])])
    yield "frame out of range", gecko_doc([thread(ok_strings, ok_frames, [[None, 5]],
                                                  [[0, 1, None]])])
    yield "location out of range", gecko_doc([thread(ok_strings, [[4, 1]], [[None, 0]],
                                                     [[0, 1, None]])])
    yield "location not a string", gecko_doc([thread([3], ok_frames, [[None, 0]],
                                                     [[0, 1, None]])])
    yield "stack out of range", gecko_doc([thread(ok_strings, ok_frames, [[None, 0]],
                                                  [[3, 1, None]])])
    yield "stack of wrong type", gecko_doc([thread(ok_strings, ok_frames, [[None, 0]],
                                                   [["0", 1, None]])])
    yield "no time", gecko_doc([thread(ok_strings, ok_frames, [[None, 0]], [[0, None, None]])])
    yield "rows not lists", gecko_doc([thread(ok_strings, ok_frames, [7], [[0, 1, None]])])
    yield "negative CPU", gecko_doc(
        [thread(ok_strings, ok_frames, [[None, 0]], [[0, 1, None, -5]], cpu=True)],
        {"sampleUnits": {"threadCPUDelta": "ns"}})
    # the processed format's tables: a length its columns do not have
    yield "huge length", {"meta": {"interval": 1, "preprocessedProfileVersion": 57},
                          "shared": {"stringArray": ["a"]},
                          "threads": [{"stackTable": {"length": 10 ** 12, "frame": [0],
                                                      "prefix": [None]},
                                       "frameTable": {"length": 1, "func": [0]},
                                       "funcTable": {"length": 1, "name": [0]},
                                       "samples": {"length": 1, "stack": [0], "time": [0]}}]}
    # many threads sharing one large table: refused, not read once each
    big = 200000
    yield "shared tables", {"meta": {"interval": 1, "preprocessedProfileVersion": 57},
                            "shared": {"stringArray": ["a"],
                                       "stackTable": {"length": big, "frame": [0] * big,
                                                      "prefix": [None] * big},
                                       "frameTable": {"length": 1, "func": [0]},
                                       "funcTable": {"length": 1, "name": [0]}},
                            "threads": [{"samples": {"length": 0, "stack": [], "time": []}}]
                            * 2000}


@pytest.mark.parametrize("case", list(bad_files()), ids=lambda c: c[0])
def test_hostile_gecko_file_is_one_line(tmp_path, case):
    (tmp_path / "bad.json").write_text(json.dumps(case[1]))
    for args in (["report", "bad.json"], ["view", "bad.json", "-o", "p.html"]):
        r = run(SONDE, *args, cwd=str(tmp_path), timeout=120)
        assert r.returncode == 1, (case[0], r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("sonde: "), r.stderr
        assert "Traceback" not in r.stderr


def test_deep_stack_chain_is_read_in_one_pass(tmp_path):
    """A stack 300000 frames deep (each stack the prefix of the next) is
    read without recursion, and every frame counts the one sample."""
    n = 300000
    strings = ["f%d (/deep.py:%d)" % (k, k + 1) for k in range(n)]
    frames = [[k, k + 1] for k in range(n)]
    stacks = [[None, 0]] + [[k - 1, k] for k in range(1, n)]
    (tmp_path / "deep.json").write_text(json.dumps(gecko_doc([thread(strings, frames, stacks,
                                                                     [[n - 1, 1.0, None]])])))
    r = run(SONDE, "report", "deep.json", "-l", "3", cwd=str(tmp_path), timeout=600)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^ *1 samples in ", r.stdout, re.M), r.stdout
