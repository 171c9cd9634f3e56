"""The launcher: runs a program under sonde's tracer inside its own process.

Started by `sonde run`, `sonde lines` and `sonde mem` as `python -c BOOT PKG TOOL STATS
OUT FORMAT OPTIONS MODE TARGET ARGS...` (BOOT has already taken PKG off
sys.argv).  It makes the program see what a bare run shows -- sys.argv,
sys.path[0], a fresh __main__ module, its own tracebacks and exit code --
and, whatever way the program ends (return, sys.exit(), an exception or
Ctrl-C), writes what its tool gathered:

- run: every call; the stats go to STATS (for the command line's report)
  and OUT in FORMAT.  Nothing is written when the program could not start
  (a syntax error, an unknown module): the command line takes an empty
  STATS file to mean that.
- lines: per-line hits and time of the functions chosen (OPTIONS: JSON
  with "functions", the -f patterns, and "unit"); the table goes to
  stderr, the JSON to OUT.
- mem: per-line memory of the functions chosen (OPTIONS: "functions",
  "sample_bytes", "interval_ms", "line_events", "plot"); the table goes to stderr, the
  JSON to OUT, the timeline picture to "plot".
"""

import os
import signal
import sys
import threading
import types

from ._sonde import Profiler

_OWN_FILES = {os.path.realpath(__file__)}


def _fail(message):
    sys.stderr.write("sonde: %s\n" % message)
    sys.exit(1)


def _script(path, args):
    """Code, namespace and source for `python SCRIPT ARGS`."""
    shown = os.path.abspath(path) if sys.version_info >= (3, 9) else path
    try:
        with open(path, "rb") as f:
            source = f.read()
        code = compile(source, shown, "exec", dont_inherit=True)
    except SyntaxError as e:
        _fail("cannot run %s: %s: %s (line %s)" % (path, type(e).__name__, e.msg, e.lineno))
    except (OSError, ValueError) as e:
        _fail("cannot run %s: %s" % (path, e))
    sys.argv[:] = [path] + args
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    return code, _fresh_main(shown).__dict__, source.decode("utf-8", "replace")


def _code(text, args):
    """Code, namespace and source for `python -c CODE ARGS`."""
    try:
        code = compile(text, "<string>", "exec", dont_inherit=True)
    except SyntaxError as e:
        _fail("cannot run the code given with -c: %s: %s" % (type(e).__name__, e.msg))
    sys.argv[:] = ["-c"] + args
    sys.path[0] = ""
    return code, _fresh_main(None).__dict__, text


def _module(name, args):
    """Code and namespace for `python -m MODULE ARGS` (runpy does the rest)."""
    import importlib.util
    import runpy

    sys.argv[:] = [name] + args
    sys.path[0] = os.getcwd()
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as e:
        spec = None
        why = str(e)
    else:
        why = "No module named %r" % name
    if spec is None:
        _fail("cannot run module %s: %s" % (name, why))
    code = compile("runpy._run_module_as_main(name, alter_argv=True)", "<sonde>", "exec")
    return code, {"runpy": runpy, "name": name}, ""


def _fresh_main(filename):
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=__builtins__, __spec__=None, __cached__=None,
                         __package__=None, __loader__=None)
    if filename is not None:
        main.__file__ = filename
    sys.modules["__main__"] = main
    return main


def _print_uncaught(e):
    """The traceback a bare run prints, without the launcher's frames."""
    tb = e.__traceback__
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) in _OWN_FILES:
        tb = tb.tb_next
    e.__traceback__ = tb  # the interpreter prints the exception's own traceback
    sys.excepthook(type(e), e, tb)


def _exit_status(code):
    """What the interpreter does with sys.exit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write("%s\n" % (code,))
    return 1


def _join_threads():
    """Wait for non-daemon threads, as the interpreter does at exit, so
    their calls are recorded to the end (the caller pauses this thread's
    recording first: the waiting itself is not the program's)."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon and t.is_alive():
            t.join()


class _RunTool:
    """sonde run: every call, into the stats file and -o."""

    def __init__(self, stats_path, out_path, out_format, options, code, source):
        self.stats_path, self.out_path, self.out_format = stats_path, out_path, out_format
        self.prof = Profiler()
        # The profiler's own C methods, which it does not record: a Python
        # method here would show up in the program's profile.
        self.start, self.pause_thread, self.stop = (self.prof.enable, self.prof.pause_thread,
                                                    self.prof.disable)

    def write(self):
        self.prof.write(self.stats_path, "pstats")
        if self.out_path:
            self.prof.write(self.out_path, self.out_format)


class _LinesTool:
    """sonde lines: per-line hits and time of the chosen functions."""

    with_module = False  # the script's top level is not a function to time

    def __init__(self, stats_path, out_path, out_format, options, code, source):
        # Imported here, not at the top: `sonde run` must not import for the
        # program what it would import itself.
        import builtins
        import json
        from ._lines import ImportWatcher, select
        self.options = json.loads(options)
        self.out_path = out_path
        patterns = self.options.get("functions", [])
        self.prof = self.profiler()
        self.unmatched = select(self.prof, code, source, patterns, self.with_module)
        self.watcher = ImportWatcher(self.prof, patterns, self.unmatched) if patterns else None
        if self.watcher:
            sys.meta_path.insert(0, self.watcher)
        # kernprof's builtin: @profile marks a function to profile.
        builtins.profile = self.prof.add_function

    def profiler(self):
        from ._lines import LineProfiler
        return LineProfiler(bytecode=self.options.get("bytecode", False))

    def start(self):
        self.prof.enable()

    def pause_thread(self):
        pass

    def stop(self):
        self.prof.disable()
        if self.watcher in sys.meta_path:
            sys.meta_path.remove(self.watcher)

    def write(self):
        for pattern in sorted(self.watcher.unmatched if self.watcher else self.unmatched):
            sys.stderr.write("sonde: warning: -f %s matched no function\n" % pattern)
        self.write_results()

    def write_results(self):
        import json
        from ._lines import format_table, write_text
        results = self.prof.results()
        write_text(sys.stderr, format_table(results, self.options.get("unit")))
        if self.out_path:
            with open(self.out_path, "w") as f:
                json.dump({"sonde": 1, "mode": "lines", "functions": results}, f, indent=1)
                f.write("\n")


class _MemTool(_LinesTool):
    """sonde mem: what each line of the chosen functions allocates and
    keeps, and RSS over time."""

    with_module = True

    def __init__(self, *args):
        # The C allocator shim was preloaded for this process only: the
        # program's own children start without it.
        shim = os.environ.pop("SONDE_PRELOAD", None)
        if shim and "LD_PRELOAD" in os.environ:
            rest = [lib for lib in os.environ["LD_PRELOAD"].split() if lib != shim]
            if rest:
                os.environ["LD_PRELOAD"] = " ".join(rest)
            else:
                del os.environ["LD_PRELOAD"]
        super().__init__(*args)

    def profiler(self):
        from ._mem import MemoryProfiler
        return MemoryProfiler(sample_bytes=self.options.get("sample_bytes", 512),
                              interval_ms=self.options.get("interval_ms", 10),
                              line_events=self.options.get("line_events", False))

    def write_results(self):
        from ._lines import write_text
        from ._mem import format_table, write_json, write_plot
        document = self.prof.results()
        write_text(sys.stderr, format_table(document))
        if self.out_path:
            write_json(document, self.out_path)
        if self.options.get("plot"):
            write_plot(document, self.options["plot"])


TOOLS = {"run": _RunTool, "lines": _LinesTool, "mem": _MemTool}


def main():
    tool_name, stats_path, out_path, out_format, options, mode, target = sys.argv[1:8]
    args = sys.argv[8:]
    starter = {"script": _script, "code": _code, "module": _module}[mode]
    code, namespace, source = starter(target, args)
    launcher_pid = os.getpid()
    tool = TOOLS[tool_name](stats_path, out_path, out_format, options, code, source)

    status = 0
    interrupted = False
    tool.start()
    try:
        try:
            exec(code, namespace)
        finally:
            tool.pause_thread()
            _join_threads()
    except SystemExit as e:
        status = e.code
    except KeyboardInterrupt as e:
        interrupted = True
        _print_uncaught(e)
    except BaseException as e:
        status = 1
        _print_uncaught(e)
    finally:
        tool.stop()

    if os.getpid() != launcher_pid:
        # A child the program forked, ending normally: the profile is the
        # parent's to write, and this process's exit is its own.
        sys.exit(_exit_status(status) if not isinstance(status, int) else status)
    try:
        tool.write()
    except OSError as e:
        sys.stderr.write("sonde: cannot write the profile: %s\n" % e)
        status = status or 1
    except MemoryError:
        sys.stderr.write("sonde: out of memory while writing the profile\n")
        status = status or 1
    sys.stdout.flush()
    sys.stderr.flush()
    if interrupted:
        # Die by SIGINT, as a bare interpreter does on an unhandled Ctrl-C.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(_exit_status(status) if not isinstance(status, int) else status)
