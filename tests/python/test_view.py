"""sonde view: pages loaded in a real browser (headless Chromium, from
file://) show the profile's functions and numbers, zoom on a click, search
as one types; names with markup stay text; nothing is requested; the
server answers on 127.0.0.1 only."""

import json
import os
import pstats
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import SONDE, run_sonde, start_ready, stop_ready
from pages import (CHROMIUM, browse, browser, need_browser, open_page, page_data,  # noqa: F401
                   profiles, real_profs, table, text_of, view)
from test_sampler import share_tolerance

REFERENCE = {"w.prof": "w.prof", "c.prof": "c.prof", "w.json": "wj.prof"}

QUIET = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--disable-default-apps", "--disable-extensions"]


def page_requests(page, fragment, tmp):
    """The URLs the page itself asked for while it ran, from the browser's
    network log (requests made for a file:// page carry its site in their
    network isolation key; the browser's own do not)."""
    log = tmp / ("net-%s.json" % os.path.basename(str(page)))
    subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--virtual-time-budget=3000", "--log-net-log=%s" % log] + QUIET +
                   ["--dump-dom", "file://%s#%s" % (os.path.abspath(str(page)), fragment)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=True)
    net = json.load(open(str(log)))
    start = net["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [e["params"]["url"] for e in net["events"] if e["type"] == start and
            e["params"].get("network_isolation_key", "").startswith("file://")]


@need_browser
def test_no_request_leaves_the_page(profiles, tmp_path):
    # The method sees a page's requests: a page that makes two.
    (tmp_path / "leaky.html").write_text(
        '<!DOCTYPE html><img src="http://127.0.0.1:9/a.png">'
        '<script>fetch("http://127.0.0.1:9/b")</script>')
    assert sorted(page_requests(tmp_path / "leaky.html", "", tmp_path)) == [
        "http://127.0.0.1:9/a.png", "http://127.0.0.1:9/b"]
    proc = run_sonde(["mem", "-o", "m.json", "work.py", "12"], profiles)
    assert proc.returncode == 0, proc.stderr
    for name, fragment in (("w.json", "view=flame&click=fib&type=fib"), ("w.prof", "view=table"),
                           ("c.prof", "view=sunburst"), ("m.json", "view=memory")):
        assert page_requests(view(profiles, name), fragment, tmp_path) == []


def test_page_is_self_contained(profiles):
    html = view(profiles, "w.json").read_text()
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:">' in html)
    for pattern in (r"\bsrc\s*=", r"\bhref\s*=", r"url\(", r"@import", r"https?://(?!www\.w3\.org/2000/svg)"):
        assert not re.search(pattern, html), pattern  # (the SVG namespace is a name, not a request)


@need_browser
@pytest.mark.parametrize("name", ["w.prof", "c.prof", "w.json"])
def test_table_shows_the_profiles_numbers(profiles, name):
    page = view(profiles, name)
    dom = browse(page, "view=table&select=fib")
    assert text_of(dom, "status").startswith("drawn: table in ")
    rows = {r[-1].split()[0]: r for r in table(dom, "stats")[1:]}
    ref = pstats.Stats(str(profiles / REFERENCE[name]))
    (key, (pcalls, ncalls, tottime, cumtime, _)), = [
        (k, v) for k, v in ref.stats.items() if k[2] == "fib"]
    assert rows["fib"][0] == "%d/%d" % (ncalls, pcalls)
    assert rows["fib"][1] == "%.6f" % tottime and rows["fib"][3] == "%.6f" % cumtime
    # the selected function's callers and callees
    callers = [r[-1] for r in table(dom, "callers")[1:]]
    callees = [r[-1] for r in table(dom, "callees")[1:]]
    assert "main" in callers and "fib" in callers and callees == ["fib"]


@need_browser
@pytest.mark.parametrize("name", ["w.json", "c.prof"])
def test_click_zooms_and_search_shows_the_share(profiles, name, tmp_path):
    page = view(profiles, name)
    dom = browse(page, "view=flame&click=spin&type=fib")
    crumbs = re.findall(r"<span>(.*?)</span>", text_of_block(dom, "crumbs"))
    assert crumbs[-1] == "spin" and crumbs[0] == "all"
    stats = pstats.Stats(str(profiles / REFERENCE[name])).stats
    total = max(v[3] for v in stats.values())
    fib = [v[3] for k, v in stats.items() if k[2] == "fib"][0]
    m = re.match(r"matching frames: (\d+), ([\d.]+)% of the total", text_of(dom, "found"))
    assert m and int(m.group(1)) >= 1
    assert abs(float(m.group(2)) - 100 * fib / total) < 0.1
    shot = tmp_path / "flame.png"
    browse(page, "view=icicle&search=fib", screenshot=str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def text_of_block(dom, element_id):
    m = re.search(r'<div id="%s">(.*?)</div>' % element_id, dom, re.S)
    return m.group(1) if m else ""


@need_browser
def test_sunburst_and_depth(profiles):
    page = view(profiles, "w.json")
    dom = browse(page, "view=sunburst&depth=3&click=main")  # main is 3 calls deep
    assert text_of(dom, "status").startswith("drawn: sunburst, ")
    assert re.findall(r"<span>(.*?)</span>", text_of_block(dom, "crumbs"))[-1] == "main"


def frames_drawn(dom):
    return int(re.match(r"drawn: \w+, (\d+) frames", text_of(dom, "status")).group(1))


# A profile whose shape is fixed, written by the test (sonde's JSON): each
# frame (name, parent's index in this list or -1, total, own) in seconds of
# a 1-second run.  The narrowest is 2% of the run, 25 pixels of a 1280-wide
# window, far above the half pixel under which a picture leaves a frame
# out; no total is within a point of the 5% cut-off the tests use.  (A
# timed run's narrow frames, builtins.len under <module>, were drawn in one
# run and left out in the next.)
FIXED = [("main", -1, 1.00, 0.04),
         ("load", 0, 0.30, 0.01), ("parse", 1, 0.25, 0.25), ("check", 1, 0.04, 0.04),
         ("work", 0, 0.60, 0.02), ("step", 4, 0.50, 0.05), ("inner", 5, 0.45, 0.30),
         ("leaf", 6, 0.15, 0.13), ("deep", 7, 0.02, 0.02), ("tidy", 4, 0.08, 0.08),
         ("log", 0, 0.06, 0.06)]


def fixed_depths():
    """Each frame of FIXED's depth below the root ("all" is 0)."""
    depths = []
    for _, parent, _, _ in FIXED:
        depths.append(1 if parent < 0 else depths[parent] + 1)
    return depths


@pytest.fixture(scope="module")
def fixed_page(tmp_path_factory):
    """The page of FIXED, written as sonde's JSON."""
    tmp = tmp_path_factory.mktemp("fixed")
    for i, (name, parent, total, own) in enumerate(FIXED):  # the figures add up
        kids = sum(t for _, p, t, _ in FIXED if p == i)
        assert abs(total - own - kids) < 1e-9, name
    functions = [{"name": name, "qualname": name, "file": "/srv/app/fixed.py", "line": 10 * i + 1,
                  "kind": "python"} for i, (name, _, _, _) in enumerate(FIXED)]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, FIXED[0][2], 0]] + [
        [i, 1 if parent < 0 else parent + 2, 1, total, own]
        for i, (_, parent, total, own) in enumerate(FIXED)]
    doc = {"sonde": 1, "mode": "run", "unit": "seconds", "functions": functions,
           "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
           "nodes": nodes, "stats": []}
    (tmp / "fixed.json").write_text(json.dumps(doc))
    return view(tmp, "fixed.json")


@need_browser
def test_depth_and_cutoff_leave_frames_out(fixed_page):
    """depth=N draws the root and N levels below it, cutoff=P the frames of
    at least P% of the total, both together the frames that pass both:
    counted from FIXED's own figures (every frame wide enough to draw)."""
    depths, total = fixed_depths(), FIXED[0][2]
    every = 1 + len(FIXED)  # the root ("all") and each frame
    assert frames_drawn(browse(fixed_page, "view=icicle")) == every
    shallow = 1 + sum(1 for d in depths if d <= 3)
    wide = 1 + sum(1 for _, _, t, _ in FIXED if t >= 0.05 * total)
    both = 1 + sum(1 for d, (_, _, t, _) in zip(depths, FIXED) if d <= 3 and t >= 0.05 * total)
    assert both < shallow < wide < every  # each leaves out frames of its own
    assert frames_drawn(browse(fixed_page, "view=icicle&depth=3")) == shallow
    assert frames_drawn(browse(fixed_page, "view=icicle&cutoff=5")) == wide
    assert frames_drawn(browse(fixed_page, "view=icicle&depth=3&cutoff=5")) == both


@need_browser
def test_sampled_profile_page(tmp_path):
    (tmp_path / "spin.py").write_text(
        "import time\n"
        "def spin():\n"
        "    end = time.time() + 1.0\n"
        "    while time.time() < end:\n"
        "        pass\n"
        "spin()\n")
    proc = run_sonde(["record", "-r", "200", "-f", "json", "-o", "r.json", "--", sys.executable,
                      "spin.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.load(open(str(tmp_path / "r.json")))["sample_rate"] == 200
    doc = json.load(open(str(tmp_path / "r.json")))
    dom = browse(view(tmp_path, "r.json"), "view=table")
    header = table(dom, "stats")[0]
    assert header[:4] == ["own", "own %", "total", "total %"]
    # spin's share of the samples is the recording's own (how much of the
    # second the start-up takes depends on how busy the machine is)
    funcs, nodes = doc["functions"], doc["nodes"]
    every = sum(n[3] for n in nodes[1:] if n[1] == 0)
    share = sum(n[3] for n in nodes[1:] if n[0] >= 0 and funcs[n[0]]["name"] == "spin") / every
    spin = [r for r in table(dom, "stats")[1:] if r[-1].startswith("spin ")][0]
    assert abs(float(spin[3].rstrip("%")) - 100 * share) <= 0.051, (spin, share)
    # Times to no finer a digit than the 5 ms period: "995 ms", not "995.000 ms".
    times = [r[k] for r in table(dom, "stats")[1:] for k in (0, 2)]
    assert times and all(re.match(r"-?\d+(\.\d{1,3})? s$|-?\d+ (ms|us)$", t) for t in times), times


@need_browser
def test_markup_in_a_file_name_stays_text(tmp_path):
    name = "x<img src=x onerror=alert(1)>.py"
    (tmp_path / name).write_text("def hello():\n    return sum(range(1000))\nhello()\n")
    proc = run_sonde(["run", "-f", "json", "-o", "x.json", name], tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = view(tmp_path, "x.json")
    assert "<img" not in page.read_text()
    dom = browse(page, "view=table")
    assert "<img" not in dom and "x&lt;img src=x onerror=alert(1)&gt;.py" in dom
    dom = browse(page, "view=flame&click=hello")
    assert "<img" not in dom and text_of(dom, "status").startswith("drawn: flame, ")


@need_browser
def test_lines_and_mem_pages(tmp_path):
    (tmp_path / "s.py").write_text(
        "def build(n):\n"
        "    text = '<script>alert(1)</script>'\n"
        "    data = [bytearray(1024) for _ in range(n)]\n"
        "    return text, data\n"
        "keep = build(3000)\n")
    for cmd in ("lines", "mem"):
        proc = run_sonde([cmd, "-o", "%s.json" % cmd, "s.py"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        dom = browse(view(tmp_path, "%s.json" % cmd))
        assert text_of(dom, "status").startswith("drawn: source in ")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom and "<script>alert" not in dom
        assert "build  (" in dom
    doc = json.load(open(str(tmp_path / "mem.json")))
    net = [l["net_bytes"] for f in doc["functions"] for l in f["lines"] if l["line"] == 3][0]
    assert "%.1f MiB" % (net / 2 ** 20) in dom  # the mem page's source view
    dom = browse(tmp_path / "mem.html", "view=memory")
    assert text_of(dom, "status").startswith("drawn: memory in ")
    assert dom.count("<polyline") == 2


@need_browser
def test_hundred_thousand_frames_stay_responsive(tmp_path):
    """A synthetic profile of 100,000 call paths over 2,000 functions."""
    functions = [{"name": "f%d" % i, "qualname": "f%d" % i, "file": "big.py", "line": i + 1,
                  "kind": "python"} for i in range(2000)]
    nodes, state = [[-1, 0, 0, 0, 0], [-1, 0, 0, 0, 0]], 12345
    for i in range(2, 100002):
        state = (state * 1103515245 + 12345) % 2 ** 31
        parent = 1 if i < 50 else 1 + state % (i - 1)
        nodes.append([state % 2000, parent, 1, 0, 0.001])
    for i in range(len(nodes) - 1, 1, -1):  # totals: own time plus the children's
        nodes[i][3] += nodes[i][4]
        nodes[nodes[i][1]][3] += nodes[i][3]
    doc = {"sonde": 1, "mode": "run", "unit": "seconds", "functions": functions,
           "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
           "nodes": nodes, "stats": []}
    (tmp_path / "big.json").write_text(json.dumps(doc))
    page = view(tmp_path, "big.json")
    start = time.monotonic()
    dom = browse(page, "view=flame&type=f1&click=f7")
    status = re.match(r"drawn: flame, (\d+) frames in (\d+) ms", text_of(dom, "status"))
    assert status and int(status.group(1)) > 100
    assert int(status.group(2)) < 1000  # one drawing after a click and a keystroke
    assert time.monotonic() - start < 30
    assert re.match(r"matching frames: \d+", text_of(dom, "found"))


def test_serve_on_loopback(profiles):
    proc = subprocess.Popen([SONDE, "view", "w.json", "-o", "s.html", "--serve", "--port", "0"],
                            cwd=str(profiles), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    try:
        line = proc.stdout.readline()
        m = re.match(r"serving (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C to stop\)", line)
        assert m, line
        body = urllib.request.urlopen(m.group(1), timeout=10).read()
        assert body == (profiles / "s.html").read_bytes()
        assert urllib.request.urlopen(m.group(1) + "s.html", timeout=10).read() == body
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(m.group(1) + "elsewhere", timeout=10)
        assert missing.value.code == 404
        listening = [l.split() for l in open("/proc/net/tcp").read().splitlines()[1:]]
        port = "%04X" % int(m.group(2))
        assert [l[1] for l in listening if l[1].endswith(":" + port) and l[3] == "0A"] == \
            ["0100007F:" + port]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("args, message", [
    (["view"], "which profile?"),
    (["view", "missing.prof"], "cannot read 'missing.prof'"),
    (["view", "junk.prof"], "is not a profile file sonde can read"),
    (["view", "w.json", "--port", "80"], "--port goes with --serve"),
    (["view", "w.json", "--bogus"], "unknown option '--bogus'"),
])
def test_bad_input(profiles, args, message):
    (profiles / "junk.prof").write_bytes(b"\x00garbage")
    proc = run_sonde(args, profiles)
    assert proc.returncode in (1, 2)
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2


def test_page_and_flamegraph_share_the_frames(profiles):
    """The page's frames are where `-f flamegraph` draws them, frame for
    frame (one layout, flame_layout.c, behind both)."""
    proc = run_sonde(["report", "w.json", "-f", "flamegraph", "-o", "w.svg"], profiles)
    assert proc.returncode == 0, proc.stderr
    import xml.etree.ElementTree as ET
    svg = ET.parse(str(profiles / "w.svg")).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    drawn = sorted((g.get("data-n"), float(g.get("data-x")), float(g.get("data-w")))
                   for g in svg.iter(ns + "g") if g.get("data-n"))
    html = view(profiles, "w.json").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                                html, re.S).group(1))
    tree = data["tree"]
    total = sum(n[2] for n in tree[1:] if n[1] == 0)
    page = sorted((data["funcs"][n[0]][0], 1200 * n[4] / total, 1200 * n[2] / total)
                  for n in tree[1:] if 1200 * n[2] / total >= 0.5)
    assert len(drawn) > 5 and len(drawn) == len(page)
    for (name, x, w), (name2, x2, w2) in zip(drawn, page):  # to the SVG's 3 decimals
        assert name == name2 and abs(x - x2) < 0.01 and abs(w - w2) < 0.01
    colours = {data["funcs"][n[0]][0]: data["funcs"][n[0]][3] for n in tree[1:]}
    for g in svg.iter(ns + "g"):
        if g.get("data-n"):
            rgb = tuple(int(v) for v in re.findall(r"\d+", g.find(ns + "rect").get("fill")))
            assert "#%02x%02x%02x" % rgb == colours[g.get("data-n")]


MAINS = {"cprofile-m.prof": "tool.py", "sonde-m.prof": "tool.py",
         "cprofile-imports.prof": "imports.py", "sonde-imports.prof": "imports.py",
         "cprofile-deep.prof": "main.py", "sonde-deep.prof": "main.py"}


@pytest.mark.parametrize("name", sorted(MAINS))
def test_prof_of_a_real_program_draws(real_profs, name):
    """The tree rebuilt from a .prof starts at the functions called more
    often than their caller edges say (builtins.exec), so the pictures hold
    the program: its main() as wide as pstats' cumtime for it."""
    stats = pstats.Stats(str(real_profs / name)).stats
    data = page_data(view(real_profs, name))
    tree, funcs = data["tree"], data["funcs"]
    assert len(tree) > 20
    total = max(v[3] for v in stats.values())  # builtins.exec's: the whole run
    assert abs(tree[0][2] - total) <= 0.01 * total
    (main_cum,) = [v[3] for k, v in stats.items() if k[2] == "main" and
                   k[0].endswith(MAINS[name])]
    mains = [n for n in tree[1:] if funcs[n[0]][0] == "main" and
             funcs[n[0]][1].endswith(MAINS[name])]
    # A .prof holds no call paths: the import machinery runs every module's
    # exec, and modules imported at about the same cost can swap places in
    # the rebuilt tree, which cannot tell them apart.  The programs' main()s
    # work far longer than any import (real_profs), so a swap moves them
    # little (measured beside a test-repeat load: worst 1.5% over 10 fresh
    # -m profiles, 0.5% for the importing script; with main()s of a few ms,
    # -20% in a test-repeat round).  The deep package's chain of imports: 2%.
    tolerance = 0.02 if "-deep" in name else 0.08
    assert mains and abs(sum(n[2] for n in mains) - main_cum) <= tolerance * main_cum


@need_browser
@pytest.mark.parametrize("name", ["cprofile-m.prof", "sonde-imports.prof"])
def test_prof_of_a_real_program_in_the_browser(real_profs, name):
    page = view(real_profs, name)
    for picture in ("flame", "icicle", "sunburst"):
        dom = browse(page, "view=%s&click=^main$" % picture)
        assert frames_drawn(dom) > 10, picture
        assert re.findall(r"<span>(.*?)</span>", text_of_block(dom, "crumbs"))[-1] == "main"


def test_many_uncalled_functions(tmp_path):
    """250,000 functions nobody calls (a fixed 200,000-entry stack
    overflowed): the page is written, the smallest left out."""
    import marshal
    stats = {("r.py", i, "f%d" % i): (1, 1, 0.001, 0.001 + i * 1e-9, {}) for i in range(250000)}
    with open(str(tmp_path / "roots.prof"), "wb") as f:
        marshal.dump(stats, f)
    proc = run_sonde(["view", "roots.prof"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = page_data(tmp_path / "roots.html")
    assert 100000 < len(data["tree"]) <= 200000
    # the root is the profile's total time, as pstats counts it (its tottimes)
    assert abs(data["tree"][0][2] - sum(v[2] for v in stats.values())) < 1e-6 * 250000
    proc = run_sonde(["diff", "roots.prof", "roots.prof", "-l", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr


@need_browser
def test_percall_divides_cumtime_by_primitive_calls(profiles):
    dom = browse(view(profiles, "w.prof"), "view=table")
    (fib,) = [r for r in table(dom, "stats")[1:] if r[-1].split()[0] == "fib"]
    (pcalls, ncalls, tottime, cumtime, _), = [
        v for k, v in pstats.Stats(str(profiles / "w.prof")).stats.items() if k[2] == "fib"]
    assert ncalls != pcalls
    assert fib[2] == "%.6f" % (tottime / ncalls) and fib[4] == "%.6f" % (cumtime / pcalls)


@need_browser
@pytest.mark.parametrize("fragment", ["zoom=%E0%A4%A", "view=%", "select=%ZZ&view=table"])
def test_malformed_fragment_still_draws(profiles, fragment):
    dom = browse(view(profiles, "w.json"), fragment)
    assert (text_of(dom, "status") or "").startswith("drawn: "), fragment


def test_serve_never_waits_on_one_client(tmp_path):
    """A client that asks for a large page and never reads it, and one that
    connects and says nothing, hold only their own connections."""
    import socket
    n = 60000
    funcs = [{"name": "function_%d" % i, "qualname": "function_%d" % i,
              "file": "/srv/app/module_%d.py" % i, "line": i + 1, "kind": "python"}
             for i in range(n)]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, 1.0, 0]] + [[i, 1, 1, 1.0 / n, 1.0 / n]
                                                     for i in range(n)]
    (tmp_path / "big.json").write_text(json.dumps(
        {"sonde": 1, "mode": "run", "unit": "seconds", "functions": funcs,
         "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
         "nodes": nodes, "stats": []}))
    proc = subprocess.Popen([SONDE, "view", "big.json", "--serve"], cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    try:
        m = re.match(r"serving (http://127\.0\.0\.1:(\d+)/)", proc.stdout.readline())
        assert m
        port, size = int(m.group(2)), (tmp_path / "big.html").stat().st_size
        assert size > 4 << 20  # more than the sockets' buffers hold
        stuck = socket.socket()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(("127.0.0.1", port))
        stuck.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
        idle = socket.create_connection(("127.0.0.1", port))
        # (the old server blocked in send() to the first client for ever)
        body = urllib.request.urlopen(m.group(1), timeout=60).read()
        assert len(body) == size
        stuck.close()
        idle.close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


@pytest.mark.parametrize("cmd", [["report"], ["view"], ["diff", "w.prof"]])
def test_fifo_is_refused_not_waited_on(profiles, tmp_path, cmd):
    fifo = tmp_path / "p.fifo"
    os.mkfifo(str(fifo))
    proc = run_sonde(cmd + [str(fifo)], profiles, timeout=60)
    assert proc.returncode == 1
    assert "is a pipe (FIFO), not a profile file" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# ---- the first screen, folding, the keyboard, the saved picture (Playwright) ----

SCREENS = [(1280, 800), (1920, 1080)]

# Three workers that run until killed, and the main thread waiting: the
# page's threads are recorded by attaching once all four are going, so each
# is in the profile however slowly a busy machine runs them.
THREADS = """
import threading

def crunch(n):
    total = 0
    for i in range(n):
        total += i * i
    return total

def worker(going):
    going.wait()
    while True:
        crunch(2000)

going = threading.Barrier(4)
for _ in range(3):
    threading.Thread(target=worker, args=(going,), daemon=True).start()
going.wait()
print("ready", flush=True)
threading.Event().wait()
"""


def json_nodes(path):
    """sonde's JSON: its functions and nodes ([func, parent, calls, total, self])."""
    doc = json.load(open(str(path)))
    return doc["functions"], doc["nodes"]


@pytest.fixture(scope="module")
def screen_pages(real_profs):
    """Pages of a deep profile (30 modules imported one by another, -m, as
    sympy's imports go), a shallow one, a sampled one of four threads
    (three busy workers, the main thread waiting)."""
    tmp = real_profs
    proc = run_sonde(["run", "-f", "json", "-o", "deep.json", "-m", "deep.main"], tmp)
    assert proc.returncode == 0, proc.stderr
    threads = start_ready(sys.executable, tmp, THREADS)
    try:
        # --mode wall: every thread is in every sample, the first one taken
        # as sonde attaches.
        proc = run_sonde(["record", "--mode", "wall", "-r", "500", "-d", "0.5", "-f", "json",
                          "-o", "threads.json", "-p", str(threads.pid)], tmp)
    finally:
        stop_ready(threads)
    assert proc.returncode == 0, proc.stderr
    proc = run_sonde(["run", "-f", "json", "-o", "shallow.json", "-c", "sorted(range(100000))"], tmp)
    assert proc.returncode == 0, proc.stderr
    return {name: view(tmp, name) for name in ("deep.json", "cprofile-deep.prof",
                                               "threads.json", "shallow.json")}


def frames_and_overflow(browser, page, fragment, size):
    tab = open_page(browser, page, fragment, size)
    frames = tab.evaluate("window.sondeView.frames()")
    widths = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    tab.close()
    return frames, widths


def on_screen(frame, size):
    return (frame["x"] >= 0 and frame["y"] >= 0 and frame["x"] + frame["w"] <= size[0] + 0.5
            and frame["y"] + frame["h"] <= size[1])


@pytest.mark.parametrize("name", ["deep.json", "cprofile-deep.prof", "threads.json",
                                  "shallow.json"])
def test_first_screen_holds_root_and_widest_frame(browser, screen_pages, name):
    """At 1280x800 and 1920x1080, in each picture, the root and the widest
    frame under it (the data's biggest total below the root) are drawn
    inside the window, and nothing is wider than the window."""
    page = screen_pages[name]
    data = page_data(page)
    tree = data["tree"]
    assert name != "deep.json" or max(depths(tree)) > 40
    widest = max(tree[1:], key=lambda n: n[2])
    if name == "threads.json":  # the header: how it was taken
        funcs, nodes = json_nodes(page.with_suffix(".json"))
        samples = round(sum(n[3] for n in nodes if n[1] == 0 and n is not nodes[0]) * 500)
        tab = open_page(browser, page)
        assert "sampled at 500 Hz, %d samples" % samples in tab.evaluate(
            "document.getElementById('about').textContent")
        tab.close()
    for size in SCREENS:
        for picture in ("flame", "icicle", "sunburst"):
            frames, (scroll_width, width) = frames_and_overflow(
                browser, page, "view=%s" % picture, size)
            assert scroll_width <= width, (picture, size)
            root = [f for f in frames if f["func"] == -1]
            assert root and on_screen(root[0], size), (picture, size)
            wide = [f for f in frames if f["func"] == widest[0] and
                    abs(f["total"] - widest[2]) <= 1e-9 * max(1, widest[2])]
            assert wide and on_screen(wide[0], size), (picture, size, data["funcs"][widest[0]])
            if picture == "sunburst":
                assert all(on_screen(f, size) for f in frames), size


def depths(tree):
    depth = [0] * len(tree)
    for i in range(1, len(tree)):
        depth[i] = depth[tree[i][1]] + 1
    return depth


@pytest.mark.parametrize("kind", ["lines", "mem"])
def test_lines_and_mem_pages_fit_the_window(browser, tmp_path, kind):
    (tmp_path / "s.py").write_text(
        "def build(n):\n"
        "    rows = [bytearray(1024) for _ in range(n)]\n"
        "    return ['x' * 300 for _ in rows]\n"
        "keep = build(2000)\n")
    proc = run_sonde([kind, "-o", "%s.json" % kind, "s.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = view(tmp_path, "%s.json" % kind)
    for size in SCREENS:
        tab = open_page(browser, page, "", size)
        assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), size
        box = tab.evaluate("(function (r) { return [r.top, r.bottom]; })("
                           "document.querySelector('.fn').getBoundingClientRect())")
        assert 0 <= box[0] and box[1] <= size[1], size  # the first function's heading
        about = tab.evaluate("document.getElementById('about').textContent")
        assert "%d functions" % len(json.load(open(str(tmp_path / ("%s.json" % kind))))["functions"]) in about
        tab.close()


def test_folded_import_total_is_the_unfolded_subtree(browser, screen_pages):
    """`from . import m0` in deep/main.py: folded, one frame "import m0"
    whose total is that of the import machinery's outermost frame
    under main's <module> in sonde's JSON; unfolded, the machinery is there."""
    page = screen_pages["deep.json"]
    funcs, nodes = json_nodes(page.with_suffix(".json"))
    main_module = [i for i, n in enumerate(nodes) if n[0] >= 0 and
                   funcs[n[0]]["name"] == "<module>" and funcs[n[0]]["file"].endswith("main.py")]
    load = max((n for n in nodes if n[1] in main_module and
                funcs[n[0]]["file"].startswith("<frozen importlib._bootstrap")),
               key=lambda n: n[3])
    outermost = funcs[load[0]]["name"]
    frames, _ = frames_and_overflow(browser, page, "view=icicle", (1280, 800))
    imports = [f for f in frames if f["name"] == "import m0"]
    assert len(imports) == 1 and abs(imports[0]["total"] - load[3]) <= 1e-9
    # beneath the import (the icicle grows down): no machinery; runpy's own
    # `__import__(parent, fromlist=['__path__'])` elsewhere loads nothing and
    # keeps its name, drawn only when wide enough
    imp = imports[0]
    beneath = [f for f in frames if f["y"] > imp["y"] and
               imp["x"] - 0.5 <= f["x"] and f["x"] + f["w"] <= imp["x"] + imp["w"] + 0.5]
    assert beneath and not [f for f in beneath
                            if f["name"] in ("_find_and_load", "_load_unlocked", outermost)]
    frames, _ = frames_and_overflow(browser, page, "view=icicle&fold=0", (1280, 800))
    loads = [f for f in frames if f["name"] == outermost and
             abs(f["total"] - load[3]) <= 1e-9]
    assert loads and not [f for f in frames if f["name"].startswith("import ")]


def test_keyboard_moves_the_selection(browser, profiles):
    """In the icicle, ArrowDown goes to the widest callee (the tree in the
    data), ArrowUp back, Enter zooms, Escape zooms out, "/" searches."""
    page = view(profiles, "w.json")
    tree, funcs = page_data(page)["tree"], page_data(page)["funcs"]
    chain, node = [], 0
    for _ in range(3):
        node = max((i for i in range(1, len(tree)) if tree[i][1] == node),
                   key=lambda i: tree[i][2])
        chain.append(funcs[tree[node][0]][0])
    tab = open_page(browser, page, "view=icicle&fold=0")
    selected = lambda: tab.evaluate("document.querySelector('#side h2').textContent")
    for name in chain:
        tab.keyboard.press("ArrowDown")
        assert selected() == name
    tab.keyboard.press("ArrowUp")
    assert selected() == chain[1]
    tab.keyboard.press("Enter")
    crumbs = lambda: tab.evaluate("[].map.call(document.querySelectorAll('#crumbs span'), "
                                  "function (s) { return s.textContent; })")
    assert crumbs() == ["all"] + chain[:2]
    tab.keyboard.press("Escape")
    assert crumbs() == ["all"] + chain[:1]
    tab.keyboard.press("/")
    assert tab.evaluate("document.activeElement.id") == "search"
    tab.close()


def saved_svg(tab, path):
    """The page's save SVG, downloaded to path, parsed (its root); the tab
    is closed."""
    import xml.etree.ElementTree as ET
    with tab.expect_download() as download:
        tab.click("#savesvg")
    download.value.save_as(str(path))
    tab.close()
    return ET.parse(str(path)).getroot()


@pytest.mark.parametrize("picture", ["flame", "sunburst"])
def test_saved_svg_parses(browser, fixed_page, tmp_path, picture):
    """The saved picture holds a shape for each frame drawn: on FIXED, every
    frame (none is narrow enough to be left out)."""
    tab = open_page(browser, fixed_page, "view=%s" % picture)
    frames = tab.evaluate("window.sondeView.frames()")
    svg = saved_svg(tab, tmp_path / "picture.svg")
    ns = "{http://www.w3.org/2000/svg}"
    shapes = [g[0] for g in svg.iter(ns + "g")]
    assert len(shapes) == len(frames) == 1 + len(FIXED)
    names = sorted(s.find(ns + "title").text.split("\n")[0] for s in shapes)
    assert names == sorted(f["name"] for f in frames)


# Names a program may give its functions that XML 1.0 forbids even as
# character references (ESC, BEL, the other C0 controls, U+FFFE): the
# saved SVG writes them out as \xNN / \uNNNN.
CONTROL_NAMES = ["esc\x1b[2Jname", "bell\x07name", "soh\x01vt\x0bff\x0cus\x1fname",
                 "nonchar\ufffename"]


def xml_shown(name):
    """name as the saved SVG must show it: forbidden characters escaped."""
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]",
                  lambda m: ("\\x%02x" if ord(m.group()) < 0x100 else "\\u%04x") % ord(m.group()),
                  name)


@pytest.mark.parametrize("picture", ["flame", "sunburst"])
def test_saved_svg_of_control_character_names_is_xml(browser, tmp_path, picture):
    """ESC or BEL in a name made the saved SVG invalid XML (no parser
    reads it); it parses, each name shown escaped."""
    share = 1.0 / len(CONTROL_NAMES)
    functions = [{"name": n, "qualname": n, "file": "/srv/app/ctl.py", "line": i + 1,
                  "kind": "python"} for i, n in enumerate(CONTROL_NAMES)]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, 1.0, 0]] + [[i, 1, 1, share, share]
                                                     for i in range(len(CONTROL_NAMES))]
    (tmp_path / "ctl.json").write_text(json.dumps(
        {"sonde": 1, "mode": "run", "unit": "seconds", "functions": functions,
         "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
         "nodes": nodes, "stats": []}))
    tab = open_page(browser, view(tmp_path, "ctl.json"), "view=%s" % picture)
    frames = tab.evaluate("window.sondeView.frames()")
    assert sorted(f["name"] for f in frames) == sorted(["all"] + CONTROL_NAMES)
    svg = saved_svg(tab, tmp_path / "ctl.svg")  # parses
    ns = "{http://www.w3.org/2000/svg}"
    titles = [g[0].find(ns + "title").text.split("\n")[0] for g in svg.iter(ns + "g")]
    assert sorted(titles) == sorted(["all"] + [xml_shown(n) for n in CONTROL_NAMES])


@pytest.mark.parametrize("name", ["w.json", "w.prof", "c.prof"])
def test_sandwich_figures_are_the_callers_and_callees(browser, profiles, name):
    """main's sandwich: the callers and callees next to it are as wide as
    the time pstats gives each caller edge (the page's own callers and
    callees tables show the same)."""
    ref = pstats.Stats(str(profiles / REFERENCE[name])).stats
    (key,) = [k for k in ref if k[2] == "main"]
    callers = {k[2]: v[3] for k, v in ref[key][4].items()}
    callees = {k[2]: v[4][key][3] for k, v in ref.items() if key in v[4]}
    tab = open_page(browser, view(profiles, name), "view=sandwich&select=^main$")
    frames = tab.evaluate("window.sondeView.sandwich()")
    side = {part: tab.evaluate("[].map.call(document.querySelectorAll('#%s tr'), function (r) {"
                               " return r.lastChild.textContent; }).slice(1)" % part)
            for part in ("callers", "callees")}
    tab.close()
    for part, expected in (("callers", callers), ("callees", callees)):
        drawn = {f["name"]: f["total"] for f in frames if f["part"] == part and f["level"] == 1}
        assert sorted(drawn) == sorted(expected) == sorted(side[part]), part
        for fn, seconds in expected.items():
            assert abs(drawn[fn] - seconds) <= 2e-6 + 1e-3 * seconds, (part, fn)


def test_only_my_code(browser, screen_pages, real_profs):
    """mine=1: every frame drawn is of the program's own files (deep/...),
    main's frame keeps the time sonde's JSON gives main, the root keeps it all."""
    page = screen_pages["deep.json"]
    funcs, nodes = json_nodes(page.with_suffix(".json"))
    mains = [n[3] for n in nodes if n[0] >= 0 and funcs[n[0]]["name"] == "main" and
             funcs[n[0]]["file"].endswith("main.py")]
    frames, _ = frames_and_overflow(browser, page, "view=icicle&mine=1", (1280, 800))
    data = page_data(page)
    files = {data["funcs"][f["func"]][1] for f in frames if f["func"] >= 0}
    assert files and all(f.startswith(str(real_profs / "deep")) for f in files), files
    (main,) = [f for f in frames if f["name"] == "main"]
    assert abs(main["total"] - sum(mains)) <= 1e-9
    (root,) = [f for f in frames if f["func"] == -1]
    assert abs(root["total"] - data["tree"][0][2]) <= 1e-9


def test_thread_selector_totals_are_each_threads(browser, screen_pages):
    """thread=K draws the Kth thread alone: its root is as wide as that
    thread's root in sonde's JSON; thread=0 (all merged) is their sum."""
    page = screen_pages["threads.json"]
    doc = json.load(open(str(page.with_suffix(".json"))))
    roots = [doc["nodes"][t["root"]][3] for t in doc["threads"]]
    assert len(roots) == 4 and all(r > 0 for r in roots[1:])
    for k in range(len(roots) + 1):
        tab = open_page(browser, page, "view=icicle&thread=%d" % k)
        (root,) = [f for f in tab.evaluate("window.sondeView.frames()") if f["func"] == -1]
        shown = tab.evaluate("document.getElementById('thread').selectedOptions[0].textContent")
        tab.close()
        expected = sum(roots) if k == 0 else roots[k - 1]
        assert abs(root["total"] - expected) <= 1e-9, (k, shown)
        assert k == 0 or shown == doc["threads"][k - 1]["name"]


# ---- the stack chart: a sampled profile's timeline (Playwright) ----

PHASES = """
import time

def spin(seconds):
    end = time.perf_counter() + seconds
    total = 0
    while time.perf_counter() < end:
        total += 1
    return total

def phase_a():
    return spin(0.4)

def phase_b():
    return spin(0.4)

def main():
    phase_a()
    phase_b()

main()
"""


def recorded_page(tmp_path_factory, name, source):
    """The page of program `source` (written as NAME.py) recorded at 500 Hz
    into sonde's JSON (NAME.json, beside it)."""
    tmp = tmp_path_factory.mktemp(name)
    (tmp / (name + ".py")).write_text(source)
    # Samples counted (--mode wall): the pages' checks compare them with the
    # program's own wall clock.
    proc = run_sonde(["record", "--mode", "wall", "-r", "500", "-f", "json", "-o",
                      name + ".json", "--", sys.executable, name + ".py"], tmp)
    assert proc.returncode == 0, proc.stderr
    return view(tmp, name + ".json")


@pytest.fixture(scope="module")
def phases_page(tmp_path_factory):
    """A program of two phases, A then B, recorded at 500 Hz into sonde's JSON."""
    return recorded_page(tmp_path_factory, "phases", PHASES)


def timeline_of(path):
    """sonde's JSON timeline: per thread [(t_ns since the start, stack of
    qualnames, outermost first)]."""
    doc = json.load(open(str(path)))
    funcs, nodes = doc["functions"], doc["nodes"]

    def stack(node):
        names = []
        while nodes[node][0] >= 0:
            names.append(funcs[nodes[node][0]]["qualname"])
            node = nodes[node][1]
        return names[::-1]
    out = []
    for th in doc["timeline"]["threads"]:
        t, samples = 0, []
        for dt, node in zip(th["t_ns"], th["nodes"]):
            t += dt
            samples.append((t, stack(node)))
        out.append(samples)
    return out


def chart(browser, page, fragment):
    tab = open_page(browser, page, "view=chart&" + fragment)
    return tab, tab.evaluate("window.sondeView.chart()")


def test_stack_chart_counts_each_threads_samples(browser, screen_pages):
    """Each thread's lane holds as many samples as its timeline in sonde's
    JSON; thread=K shows the Kth thread's lane alone."""
    page = screen_pages["threads.json"]
    counts = [len(samples) for samples in timeline_of(page.with_suffix(".json"))]
    assert len(counts) == 4 and all(n > 0 for n in counts[1:]), counts
    tab, drawn = chart(browser, page, "")
    tab.close()
    assert {lane["thread"]: lane["samples"] for lane in drawn["lanes"]} == {
        k: n for k, n in enumerate(counts) if n}
    for k in range(1, len(counts) + 1):
        tab, drawn = chart(browser, page, "thread=%d" % k)
        tab.close()
        assert [(lane["thread"], lane["samples"]) for lane in drawn["lanes"]] == (
            [(k - 1, counts[k - 1])] if counts[k - 1] else [])


def test_saved_stack_chart_svg_is_the_chart(browser, screen_pages, tmp_path):
    """save SVG on the stack chart writes the chart: one frame per box it
    drew (the count its status gives), each named as a box of the chart,
    and each thread's lane title."""
    page = screen_pages["threads.json"]
    tab, drawn = chart(browser, page, "")
    found = tab.evaluate("document.getElementById('found').textContent")
    svg = saved_svg(tab, tmp_path / "chart.svg")
    ns = "{http://www.w3.org/2000/svg}"
    frames = [g.find(ns + "rect") for g in svg.iter(ns + "g")]
    count = int(re.search(r"(\d+) frames drawn", found).group(1))
    assert len(frames) == count > 10, found
    names = {bx["name"] for lane in drawn["lanes"] for bx in lane["boxes"]}
    assert {f.find(ns + "title").text.split("\n")[0] for f in frames} <= names
    texts = [t.text for t in svg.iter(ns + "text")]
    for lane in drawn["lanes"]:
        assert any(t and t.endswith("\u00b7 %d samples" % lane["samples"]) for t in texts), lane


def test_stack_chart_shows_each_samples_stack(browser, phases_page):
    """Between a sample and its thread's next (when they are at most two
    periods apart: a longer gap is drawn empty), the chart's frames at each
    depth are that sample's stack (the functions of its node's path in
    sonde's JSON); hovering there names them, outermost first."""
    (samples,) = timeline_of(phases_page.with_suffix(".json"))
    period_us = 1e6 / 500
    assert len(samples) > 100
    tab, drawn = chart(browser, phases_page, "fold=0")
    (lane,) = drawn["lanes"]
    hovered = 0
    for (t, stack), (t_next, _) in zip(samples, samples[1:]):
        a, b = (t + 500) // 1000, (t_next + 500) // 1000  # microseconds, as the page holds them
        if b - a < 2 or b - a > 2 * period_us:
            continue
        mid = (a + b) / 2
        shown = sorted((bx for bx in lane["boxes"] if bx["t0"] <= mid < bx["t1"]),
                       key=lambda bx: bx["depth"])
        assert [bx["depth"] for bx in shown] == list(range(len(shown)))
        assert [bx["name"] for bx in shown] == stack, t
        x = drawn["left"] + (mid - drawn["t0"]) * drawn["scale"]
        # hovered where each of the stack's boxes reaches 2 px either side
        # (a box spans the samples of one stack: how far apart two samples
        # are, and so whether one gap is 4 px wide, is the machine's timing)
        inside = [bx["x"] + 2 <= x <= bx["x"] + bx["w"] - 2 for bx in shown]
        if hovered < 5 and all(inside):
            names = []
            for depth in range(len(stack)):
                tab.mouse.move(x, lane["top"] + depth * 17 + 8)
                names.append(tab.evaluate("document.getElementById('tip').textContent").split("\n")[0])
            assert names == stack, t
            hovered += 1
    tab.close()
    assert hovered == 5


def test_stack_chart_draws_phases_in_order(browser, phases_page):
    """phase_a runs before phase_b: every phase_a frame ends before the
    first phase_b frame begins, and each phase's frames hold every sample
    the recording took in it (counted in sonde's JSON: how many there are
    depends on how much CPU the machine gave the program)."""
    (samples,) = timeline_of(phases_page.with_suffix(".json"))
    tab, drawn = chart(browser, phases_page, "")
    tab.close()
    (lane,) = drawn["lanes"]
    a = [bx for bx in lane["boxes"] if bx["name"] == "phase_a"]
    b = [bx for bx in lane["boxes"] if bx["name"] == "phase_b"]
    assert a and b
    assert max(bx["x"] + bx["w"] for bx in a) <= min(bx["x"] for bx in b) + 1e-6
    for boxes, name in ((a, "phase_a"), (b, "phase_b")):
        assert sum(bx["samples"] for bx in boxes) == sum(name in stack for _, stack in samples)


def test_stack_chart_folds_an_import(browser, tmp_path):
    """fold imports (on) draws the machinery of `import slow` as one frame,
    `import slow`, holding every sample taken while slow's module body ran
    (its <module> on the sampled stack in sonde's JSON); #fold=0 draws the
    machinery's own frames and no import label."""
    (tmp_path / "slow.py").write_text(
        "import time\nend = time.perf_counter() + 0.3\nwhile time.perf_counter() < end:\n    pass\n")
    (tmp_path / "main.py").write_text("import slow\n")
    proc = run_sonde(["record", "-r", "500", "-f", "json", "-o", "imp.json", "--",
                      sys.executable, "main.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = view(tmp_path, "imp.json")
    doc = json.load(open(str(tmp_path / "imp.json")))
    funcs, nodes = doc["functions"], doc["nodes"]

    def in_slow(node):
        while nodes[node][0] >= 0:
            f = funcs[nodes[node][0]]
            if f["name"] == "<module>" and f["file"].endswith("slow.py"):
                return True
            node = nodes[node][1]
        return False
    expected = sum(in_slow(n) for th in doc["timeline"]["threads"] for n in th["nodes"])
    assert expected > 0  # (how many: the CPU time a busy machine gave slow.py's loop)
    tab, folded = chart(browser, page, "")
    tab.close()
    boxes = [bx for lane in folded["lanes"] for bx in lane["boxes"] if bx["name"] == "import slow"]
    assert sum(bx["samples"] for bx in boxes) == expected
    tab, plain = chart(browser, page, "fold=0")
    tab.close()
    names = {bx["name"] for lane in plain["lanes"] for bx in lane["boxes"]}
    assert "_find_and_load" in names and not any(n.startswith("import ") for n in names)


def test_timeline_survives_json_read_back(phases_page):
    """sonde report FILE.json -f json writes the timeline it read."""
    tmp = phases_page.parent
    proc = run_sonde(["report", "phases.json", "-f", "json", "-o", "again.json"], tmp)
    assert proc.returncode == 0, proc.stderr
    first = timeline_of(tmp / "phases.json")
    assert first[0] and timeline_of(tmp / "again.json") == first


def test_chrome_trace_from_the_json_timeline(phases_page):
    """sonde report FILE.json -f chrome replays the timeline the JSON kept:
    phase_a's slice ends before phase_b's begins."""
    tmp = phases_page.parent
    proc = run_sonde(["report", "phases.json", "-f", "chrome", "-o", "trace.json"], tmp)
    assert proc.returncode == 0, proc.stderr
    events = json.load(open(str(tmp / "trace.json")))["traceEvents"]
    first_b = min(e["ts"] for e in events if e["name"] == "phase_b" and e["ph"] == "B")
    last_a = max(e["ts"] for e in events if e["name"] == "phase_a" and e["ph"] == "E")
    assert last_a <= first_b


def test_long_timeline_page_is_bounded(tmp_path):
    """A recording of 1,000,000 samples whose stack changes at each makes a
    page of at most 8 MB: the first 200,000 runs of identical stacks, the
    header saying which part of the recording the chart covers."""
    funcs = [{"name": n, "qualname": n, "file": "app.py", "line": i + 1, "kind": "python"}
             for i, n in enumerate(["main", "even", "odd"])]
    nodes = [[-1, 0, 0, 0, 0], [-1, 0, 0, 0, 0], [0, 1, 1, 10000, 0], [1, 2, 1, 5000, 5000],
             [2, 2, 1, 5000, 5000]]
    n = 1000000
    doc = {"sonde": 1, "mode": "run", "unit": "seconds", "sample_rate": 100, "functions": funcs,
           "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
           "nodes": nodes,
           "timeline": {"capped": False, "threads": [{"t_ns": [10000000] * n,
                                                      "nodes": [3, 4] * (n // 2)}]},
           "stats": []}
    (tmp_path / "long.json").write_text(json.dumps(doc))
    page = view(tmp_path, "long.json")
    assert page.stat().st_size < 8 << 20
    tl = page_data(page)["timeline"]
    assert (tl["samples"], tl["runs"], tl["kept_samples"]) == (n, 200000, 200000)
    assert tl["cut_us"] == 200001 * 10000
    dom = browse(page, "view=chart")
    # At 100 Hz a time has no digit finer than the 10 ms period.
    assert "stack chart of the first 2000.01 s of 10000.01 s" in text_of(dom, "about")


# ---- the source heatmap (Playwright) ----

# The loops' share of the samples is checked against the truth a sampler of
# runnable threads must match: each loop's wall time by the program's own
# clock (a preempted thread is still runnable: its wait is its loop's).
# work() runs rounds of loop A (2k turns) then loop B (k turns), about
# 5-10 ms a round, so that the machine's load falls on both loops alike.
# Each turn reads the clock: the time since the last reading is the loop's,
# and a gap of over 200 us is a stretch off the CPU, its square summed into
# frozen (as test_sampler.py's SHARES_PROGRAM).  The rounds run for at least
# 1 s of loop time and on, up to 40 s, until 1/samples + frozen is small
# enough (it falls as 1/time; at a load average of 10 on 2 CPUs 12 s were
# not enough), with room for what the program cannot see: the stretches
# sonde took no sample, which loop_spread adds; loops.txt gets A's and B's times, frozen over their time squared,
# and the shortest round.
HEAT = '''import statistics, time

MARKUP = "</script><b>bold</b> & <!-- not markup"

def steady(spent, frozen, rate):
    t = sum(spent)
    return t >= 1 and 1 / (0.9 * rate * t) + frozen / t ** 2 <= 0.0015

def work(k, rate=500):
    spent, frozen, shortest, start = [0.0, 0.0], [0.0], 1.0, time.perf_counter()
    while time.perf_counter() - start < 40 and not steady(spent, frozen[0], rate):
        now = t0 = time.perf_counter()
        for i in range(2 * k):  # loop A: twice B's turns
            t = time.perf_counter(); spent[0] += t - now; frozen[0] += (t - now) ** 2 if t - now > 0.0002 else 0.0; now = t
        now = time.perf_counter()
        for i in range(k):  # loop B
            t = time.perf_counter(); spent[1] += t - now; frozen[0] += (t - now) ** 2 if t - now > 0.0002 else 0.0; now = t
        shortest = min(shortest, now - t0)
    open("loops.txt", "w").write("%r %r %r %r" % (spent[0], spent[1], frozen[0] / sum(spent) ** 2, shortest))

work(15000)
statistics.pvariance(range(20000))
'''
LOOP_A, LOOP_B = [tuple(i + d for d in (0, 1)) for i, l in enumerate(HEAT.splitlines(), 1)
                  if "# loop " in l]  # each loop's two lines


def loop_spread(path, loops_txt):
    """Loop A's share of the wall time of work()'s loops (in points) and
    the spread of a sampled share about it beyond p(1-p) times 1/samples,
    for share_tolerance: the program's own `frozen` (a stretch off the CPU
    falls on one loop whole, and sonde may miss its ticks), plus the
    stretches sonde itself took no sample (its timeline's steps over 1.5
    ticks), each one draw of its length squared over the loops' time
    squared; while the program runs, a round's turns split 2:1 between
    the loops, so a stretch longer than the shortest round (freezes
    aside, counted in frozen) misses each loop's time in proportion but
    for a part at most that round."""
    a_wall, b_wall, frozen, round_ = [float(x) for x in loops_txt.read_text().split()]
    doc = json.load(open(str(path)))
    assert not doc["timeline"]["capped"]
    tick, wall = 1e9 / doc["sample_rate"], a_wall + b_wall
    unsampled = sum(min(dt / 1e9, round_) ** 2 for th in doc["timeline"]["threads"]
                    for dt in th["t_ns"][1:] if dt > 1.5 * tick)
    return 100 * a_wall / wall, frozen + unsampled / wall ** 2


@pytest.fixture(scope="module")
def heat_page(tmp_path_factory):
    return recorded_page(tmp_path_factory, "heat", HEAT)


def line_samples(path, suffix):
    """Per line of the file ending in suffix: (self, total) samples from
    sonde's JSON tree (a line counted once a sample however often it is on
    the stack)."""
    doc = json.load(open(str(path)))
    funcs, nodes, rate = doc["functions"], doc["nodes"], doc["sample_rate"]
    out = {}
    for i, n in enumerate(nodes):
        if i == 0 or n[0] < 0 or len(n) < 6 or not funcs[n[0]]["file"].endswith(suffix):
            continue
        key, up, again = (funcs[n[0]]["file"], n[5]), n[1], False
        while nodes[up][0] >= 0:
            again = again or (funcs[nodes[up][0]]["file"], nodes[up][5] if len(nodes[up]) > 5 else 0) == key
            up = nodes[up][1]
        self_, total = out.get(n[5], (0, 0))
        out[n[5]] = (self_ + round(n[4] * rate), total + (0 if again else round(n[3] * rate)))
    return {line: st for line, st in out.items() if st[1]}


def heat_tables(tab):
    return tab.evaluate("""Array.from(document.querySelectorAll('table.heat')).map(function (t) {
        return [t.previousSibling.textContent, Array.from(t.querySelectorAll('tr[data-line]')).map(
            function (r) { return [+r.dataset.line, +r.cells[2].textContent, parseFloat(r.cells[3].textContent),
                                   +r.cells[4].textContent, r.cells[6].textContent]; })]; })""")


def test_heatmap_shares_are_the_samples(browser, heat_page):
    """Each line of heat.py shows the samples sonde's JSON tree puts there
    (self: innermost; total: on the stack), its share of all samples, and
    the two loops' samples split as the loops' wall times (loop_spread);
    the interpreter's library (statistics.py) is left out."""
    expected = line_samples(heat_page.with_suffix(".json"), "heat.py")
    doc = json.load(open(str(heat_page.with_suffix(".json"))))
    every = sum(round(n[4] * doc["sample_rate"]) for n in doc["nodes"][1:])
    tab = open_page(browser, heat_page, "view=heatmap")
    tables = heat_tables(tab)
    tab.close()
    assert [os.path.basename(t[0].split("  ")[0]) for t in tables] == ["heat.py"], [t[0] for t in tables]
    rows = {r[0]: r for r in tables[0][1]}
    assert {line: (r[1], r[3]) for line, r in rows.items()} == expected
    for line, r in rows.items():
        assert abs(r[2] - 100 * r[1] / every) <= 0.051, line
    # the loops' samples share their wall times: A's share of the two
    # loops' samples is its share of their time by the program's own clock,
    # within share_tolerance (3 sigma of the spread loop_spread gives, which
    # share_tolerance bounds: at most 9.9 points, 9.3 at 2:1, so a 10-point
    # bias fails)
    turns = [sum(expected.get(line, (0, 0))[0] for line in loop) for loop in (LOOP_A, LOOP_B)]
    truth, spread = loop_spread(heat_page.with_suffix(".json"), heat_page.parent / "loops.txt")
    got, tol = 100 * turns[0] / sum(turns), share_tolerance(truth, sum(turns), spread)
    assert abs(got - truth) <= tol, (got, truth, tol, turns, spread, expected)
    data = page_data(heat_page)
    lib = [f for f in data["heatmap"]["files"] if data["funcs"][f["func"]][1].endswith("statistics.py")]
    assert lib and all(f["left_out"] == "library" and "source" not in f for f in lib)


def test_heatmap_source_stays_text(browser, heat_page, tmp_path):
    """Markup in the source is shown as text and makes no element; the
    heatmap makes no request."""
    tab = open_page(browser, heat_page, "view=heatmap")
    texts = tab.evaluate("Array.from(document.querySelectorAll('table.heat td.src')).map(function (c) { return c.textContent; })")
    bold = tab.evaluate("document.querySelectorAll('#view b, #view script').length")
    tab.close()
    assert HEAT.splitlines() == texts[:len(HEAT.splitlines())]
    assert bold == 0
    assert page_requests(heat_page, "view=heatmap", tmp_path) == []
