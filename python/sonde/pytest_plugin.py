"""pytest --sonde: a profile of each test, and the limit_memory marker.

    pytest --sonde                 # each test's call phase, every call counted
    pytest --sonde=mem             # what each test's lines allocate
    pytest --sonde-dir out/ --sonde-top 10

One file per test in --sonde-dir (default .sonde/), named from its node id:
a pstats .prof (sonde report, sonde view, pstats, snakeviz read it) or, for
mem, the JSON document `sonde mem -o` writes (sonde report, sonde view).
At the end, the slowest tests (their call phase, as pytest times it) with
each one's hottest functions: by self time, or by bytes allocated.

@pytest.mark.limit_memory("10 MB") fails a test whose call phase's
allocations reach a high-water mark above the limit (pytest-memray's
measure: the most memory its own allocations held at once), with or without
--sonde.  Units as pytest-memray's, base 1024: B, KB, MB, GB, TB (and KiB,
MiB, GiB, TiB, the same).

Registered for pip users by the pytest11 entry point sonde.pytest_plugin
(`-p no:sonde.pytest_plugin` turns it off); without installing, load it
with `-p sonde.pytest_plugin`.  The plugin changes no test's outcome but by
limit_memory: when profiling cannot start (another sonde profiler records,
the extension is missing) it says so in one line and the tests run
unprofiled; a test that starts a sonde profiler of its own gets it, and its
profile here stops there.
"""

import copy
import hashlib
import os
import re

import pytest

MODES = ("run", "record", "mem")
_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}
_SIZE = re.compile(r"^\s*(\+?\d*\.\d+|\+?\d+)\s*([KMGT]?I?B)\s*$", re.IGNORECASE)


def parse_size(text):
    """Bytes of "10 MB", "1.5GiB", "512KB" (base 1024, as pytest-memray)."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError("limit_memory: %r is not a size such as '10 MB' "
                         "(units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)" % (text,))
    return float(m.group(1)) * _UNITS[m.group(2).upper().replace("I", "")]


def format_size(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024


def pytest_addoption(parser):
    group = parser.getgroup("sonde", "sonde profiler")
    group.addoption(
        "--sonde", nargs="?", const="run", default=None, metavar="MODE",
        help="profile each test's call phase with sonde: run (the default: every call "
             "counted, as `sonde run`), mem (bytes each line allocates, as `sonde mem`), "
             "record (no in-process sampler exists yet: the same as run)")
    group.addoption("--sonde-dir", default=".sonde", metavar="DIR",
                    help="where each test's profile is written (default .sonde/)")
    group.addoption("--sonde-top", type=int, default=5, metavar="N",
                    help="the N slowest tests in the summary (default 5)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """A bare --sonde means --sonde=run: the argument after it (a test
    path, `pytest --sonde tests/`) is not its mode."""
    end = args.index("--") if "--" in args else len(args)
    if "--sonde" not in args[:end]:
        return
    for i in range(end):
        if args[i] == "--sonde":
            args[i] = "--sonde=run"
    old = early_config.known_args_namespace
    ns = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    if getattr(ns, "confcutdir", None) is None:
        ns.confcutdir = getattr(old, "confcutdir", None)
    early_config.known_args_namespace = ns


def pytest_configure(config):
    mode = config.getoption("sonde")
    if mode is not None and mode not in MODES:
        raise pytest.UsageError("--sonde=%s: the mode is one of %s" % (mode, ", ".join(MODES)))
    config.addinivalue_line(
        "markers", "limit_memory(size): fail the test when its call phase's allocations "
                   "reach a high-water mark above size ('10 MB'), as pytest-memray's")
    plugin = _Sonde(config)
    config.pluginmanager.register(plugin, "sonde-session")


def _safe_name(nodeid, used):
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("._") or "test"
    if len(name) > 120 or name in used:
        name = name[:120] + "-" + hashlib.sha1(nodeid.encode("utf-8")).hexdigest()[:10]
    used.add(name)
    return name


def _module_codes(item):
    """(code, qualname) of the test function and of every function and
    method its module defines (their nested functions too): what mem mode
    traces line by line."""
    from ._lines import code_tree
    seen, out = set(), []

    def add(func, qualname=None):
        func = getattr(func, "__func__", func)
        code = getattr(func, "__code__", None)
        if code is None or code in seen:
            return
        seen.add(code)
        name = qualname or getattr(func, "__qualname__", code.co_name)
        out.append((code, name))
        for inner, inner_name in code_tree(code, name + ".<locals>"):
            if inner not in seen:
                seen.add(inner)
                out.append((inner, inner_name))

    test = getattr(item, "function", None) or getattr(item, "obj", None)
    add(test)
    module = getattr(item, "module", None)
    filename = getattr(getattr(test, "__code__", None), "co_filename", None)
    if module is not None and filename:
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                code = getattr(getattr(member, "__func__", member), "__code__", None)
                if code is not None and code.co_filename == filename:
                    add(member)
    return out


class _Sonde:
    def __init__(self, config):
        self.config = config
        self.mode = config.getoption("sonde")
        self.top = config.getoption("sonde_top")
        directory = config.getoption("sonde_dir")
        self.dir = os.path.join(str(config.invocation_params.dir), directory)
        self.sonde = None
        self.cannot = None        # why profiling could not start (the first reason)
        self.unprofiled = 0       # tests that ran unprofiled for want of it
        self.notes = []           # other things the summary says once
        self.results = {}         # nodeid -> {"file": path, "hot": [...]}
        self.durations = {}       # nodeid -> call duration
        self.used = set()
        self.current = None       # the profilers running for the test now
        self.patched = []
        needed = self.mode is not None
        if needed:
            self._load()

    def _load(self):
        if self.sonde is not None or self.cannot:
            return self.sonde
        try:
            import sonde
            from sonde import _lines, _sonde  # noqa: F401 (the extension loads)
        except Exception as e:  # ImportError, the extension missing or for another Python
            self.cannot = "sonde's extension cannot be loaded: %s" % _one_line(e)
            return None
        self.sonde = sonde
        self._patch(sonde.Profile, "enable", lambda inst: inst is (self.current or {}).get("cpu"))
        self._patch(_lines.Traced, "enable", lambda inst: inst is (self.current or {}).get("mem"))
        return sonde

    def _patch(self, cls, name, ours):
        """A test's own sonde profiler wins over ours: ours stops first."""
        original = cls.__dict__[name]
        plugin = self

        def enable(inst, *args, **kwargs):
            if plugin.current is not None and not ours(inst):
                plugin._yield_to_test()
            return original(inst, *args, **kwargs)

        enable.__wrapped__ = original
        setattr(cls, name, enable)
        self.patched.append((cls, name, original))

    def pytest_unconfigure(self, config):
        for cls, name, original in reversed(self.patched):
            setattr(cls, name, original)
        self.patched = []

    def _yield_to_test(self):
        cur = self.current
        if cur is None:
            return
        cur["cut"] = True
        for key in ("cpu", "mem"):
            prof = cur.get(key)
            if prof is not None and not cur.get(key + "_off"):
                cur[key + "_off"] = True
                try:
                    prof.disable()
                except Exception:
                    pass

    def pytest_report_header(self, config):
        if self.mode is None:
            return None
        return "sonde: profiling each test (%s), files in %s" % (
            "run; record has no in-process sampler, so it counts calls as run does"
            if self.mode == "record" else self.mode, self.dir)

    # -- one test ---------------------------------------------------------

    def _start(self, item):
        """The profilers this test gets: {"cpu": Profile, "mem": MemoryProfiler,
        "limit": bytes}; None where none could start."""
        marker = item.get_closest_marker("limit_memory")
        limit = None
        if marker is not None:
            try:
                limit = parse_size(marker.args[0] if marker.args else marker.kwargs["memory_limit"])
            except (ValueError, KeyError, IndexError) as e:
                self.notes.append("%s: %s" % (item.nodeid, _one_line(e)))
        if self.mode is None and limit is None:
            return None
        sonde = self._load()
        if sonde is None:
            self.unprofiled += 1
            return None
        cur = {"limit": limit, "cut": False}
        try:
            if self.mode == "mem" or limit is not None:
                mem = sonde.MemoryProfiler(sample_bytes=0 if limit is not None else 512)
                for code, qualname in _module_codes(item):
                    mem.add_code(code, qualname)
                cur["mem"] = mem
            if self.mode in ("run", "record"):
                cur["cpu"] = sonde.Profile()
            self.current = cur
            if "mem" in cur:
                cur["mem"].enable()
            if "cpu" in cur:
                cur["cpu"].enable()
        except Exception as e:  # another sonde profiler records: this test runs unprofiled
            self.current = None
            for key in ("cpu", "mem"):
                try:
                    if key in cur:
                        cur[key].disable()
                except Exception:
                    pass
            if not self.cannot:
                self.cannot = _one_line(e)
            self.unprofiled += 1
            return None
        return cur

    def _stop(self, cur):
        self.current = None
        for key in ("cpu", "mem"):
            if key in cur and not cur.get(key + "_off"):
                cur[key].disable()

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item):
        cur = None
        try:
            cur = self._start(item)
        except Exception as e:
            self.notes.append("%s: %s" % (item.nodeid, _one_line(e)))
        try:
            yield
        finally:
            if cur is not None:
                try:
                    self._stop(cur)
                    self._finish(item, cur)
                except Exception as e:  # never the test's result
                    self.notes.append("%s: profile not written (%s)" % (item.nodeid, _one_line(e)))

    def _finish(self, item, cur):
        doc = None
        if "mem" in cur:
            doc = cur["mem"].results()
        if cur["limit"] is not None:
            if cur["cut"]:
                self.notes.append("%s: limit_memory not checked: the test started a sonde "
                                  "profiler of its own" % item.nodeid)
            else:
                peak = doc.get("heap_peak_bytes", 0)
                if peak > cur["limit"]:
                    item._sonde_over_limit = _limit_message(cur["limit"], peak, doc)
        if self.mode is None:
            return
        os.makedirs(self.dir, exist_ok=True)
        name = _safe_name(item.nodeid, self.used)
        if self.mode == "mem":
            path = os.path.join(self.dir, name + ".json")
            cur["mem"].dump_json(path)
            hot = _hot_bytes(doc)
        else:
            path = os.path.join(self.dir, name + ".prof")
            cur["cpu"].dump_stats(path)
            cur["cpu"].snapshot_stats()
            hot = _hot_time(cur["cpu"].stats, _test_key(item), self._skip_dirs())
        self.results[item.nodeid] = {"file": path, "hot": hot, "cut": cur["cut"]}

    def _skip_dirs(self):
        """Frames of pytest, pluggy and sonde itself, left out of "hottest"."""
        dirs = []
        for mod in ("_pytest", "pluggy", "pytest"):
            try:
                dirs.append(os.path.dirname(__import__(mod).__file__) + os.sep)
            except Exception:
                pass
        dirs.append(os.path.dirname(os.path.abspath(__file__)) + os.sep)
        return tuple(dirs)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when != "call":
            return
        message = getattr(item, "_sonde_over_limit", None)
        if message is None:
            return
        report = outcome.get_result()
        if report.passed:
            report.outcome = "failed"
            report.longrepr = message
        else:
            report.sections.append(("sonde limit_memory", message))

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.durations[report.nodeid] = report.duration

    # -- the session's end ------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        if self.mode is None and not (self.cannot and self.unprofiled) and not self.notes:
            return
        tr.section("sonde")
        if self.cannot and self.unprofiled:
            tr.write_line("sonde: profiling could not start (%s); %d test%s ran unprofiled"
                          % (self.cannot, self.unprofiled, "" if self.unprofiled == 1 else "s"))
        for note in self.notes:
            tr.write_line("sonde: " + note)
        if self.mode is None or not self.results:
            return
        slowest = sorted(self.results, key=lambda n: -self.durations.get(n, 0.0))[:max(self.top, 0)]
        what = "bytes allocated" if self.mode == "mem" else "self time"
        tr.write_line("slowest %d test%s (call phase), hottest functions by %s:"
                      % (len(slowest), "" if len(slowest) == 1 else "s", what))
        for nodeid in slowest:
            res = self.results[nodeid]
            tr.write_line("  %8.3fs  %s%s" % (self.durations.get(nodeid, 0.0), nodeid,
                                             "  (cut short: the test ran its own sonde profiler)"
                                             if res["cut"] else ""))
            for label, value in res["hot"]:
                tr.write_line("              %12s  %s" % (value, label))
        tr.write_line("%d profile%s in %s (sonde report FILE, sonde view FILE)"
                      % (len(self.results), "" if len(self.results) == 1 else "s", self.dir))


def _one_line(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0]) if text else type(e).__name__


def _label(filename, line, name):
    if filename == "~":
        return name
    return "%s (%s:%d)" % (name, os.path.basename(filename), line)


def _test_key(item):
    test = getattr(item, "function", None) or getattr(item, "obj", None)
    code = getattr(getattr(test, "__func__", test), "__code__", None)
    return code and (code.co_filename, code.co_firstlineno, code.co_name)


def _hot_time(stats, test_key, skip, n=3):
    """The n functions of most self time among those the test function
    called, directly or not (without it: all but pytest's, pluggy's and
    sonde's own), as (label, seconds)."""
    keys = set()
    if test_key in stats:
        callees = {}
        for callee, (_cc, _nc, _tt, _ct, callers) in stats.items():
            for caller in callers:
                callees.setdefault(caller, []).append(callee)
        todo = [test_key]
        while todo:
            key = todo.pop()
            if key not in keys:
                keys.add(key)
                todo.extend(callees.get(key, ()))
    else:
        keys = {key for key in stats if not key[0].startswith(skip)
                and "_sonde" not in key[2] and "_lsprof" not in key[2]}
    rows = sorted(((stats[key][2], _label(*key)) for key in keys), key=lambda r: -r[0])
    return [(label, "%.6fs" % tt) for tt, label in rows[:n]]


def _innermost(doc):
    for alloc in doc.get("allocations", []):
        if alloc.get("stack"):
            yield alloc["bytes"], alloc["stack"][-1]


def _hot_bytes(doc, n=3):
    by_func = {}
    for size, frame in _innermost(doc):
        key = _label(frame["file"], 0, frame["name"]).replace(":0)", ")")
        by_func[key] = by_func.get(key, 0) + size
    rows = sorted(by_func.items(), key=lambda kv: -kv[1])[:n]
    return [(label, format_size(size)) for label, size in rows]


def _limit_message(limit, peak, doc, n=5):
    by_line = {}
    for size, frame in _innermost(doc):
        key = (frame["file"], frame["line"], frame["name"], frame.get("source", "").strip())
        by_line[key] = by_line.get(key, 0) + size
    lines = ["Test was limited to %s but its allocations reached %s (%d bytes) at their peak "
             "(sonde: the high-water mark of what the call phase allocated)"
             % (format_size(limit), format_size(peak), peak),
             "Biggest allocating lines (bytes allocated there during the test):"]
    for (filename, line, name, source), size in sorted(by_line.items(), key=lambda kv: -kv[1])[:n]:
        lines.append("    %10s  %s:%d in %s: %s" % (format_size(size), filename, line, name, source))
    return "\n".join(lines)
