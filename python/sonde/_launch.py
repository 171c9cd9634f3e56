"""The launcher: runs a program under sonde's tracer inside its own process.

`sonde run`, `sonde lines` and `sonde mem` start the program as a bare run
would (`python SCRIPT ARGS`, `-m MODULE ARGS`, `-c CODE ARGS`) with their
private folder DIR first on PYTHONPATH; the boot there (sitecustomize, in
src/cli/launcher.c) checks the interpreter, reads TOOL FORMAT OPTIONS MODE
TARGET from DIR/launch and calls arm(), and the program's first call runs
main() instead.  The program sees what a bare run shows -- sys.argv,
sys.orig_argv, /proc/self/cmdline, sys.path, the interpreter's __main__, the modules a bare interpreter has imported and no other
but sonde's own, its own tracebacks and exit code -- and, whatever way the
program ends (return, sys.exit(), an exception, Ctrl-C, os._exit, SIGTERM
or SIGHUP), writes what its tool gathered into DIR, the command line's
private folder:

- DIR/said: lines for the command line to print (why the program could
  not start, warnings);
- DIR/started: made just before the program's first line runs;
- DIR/interpreter: sys.executable, a NUL byte and sys.version, for the
  profile's "about" (what was profiled);
- run: DIR/stats, every call in pstats' format (for the report), and with
  -o, DIR/out in FORMAT (the command line copies it to -o); -f tensorboard
  -o DIR with --torch-steps' cycles apart (OPTIONS "cycles_apart"): DIR/out
  holds the first cycle, DIR/out.1, DIR/out.2 ... the others;
- --subprocesses (OPTIONS "children"): every process the program starts
  that runs Python writes its own DIR/children/PID.out (run: JSON, as the
  parent's DIR/out then is, and no stats; lines, mem: the document and
  PID.start, when it started recording in Unix ns, as the program's
  DIR/start), PID.argv (its command line, NUL-separated) and PID.said;
  lines and mem write the program's file in DIR/main_file, which a Python
  the program starts chooses functions in; the command line sums them;
- lines, mem: DIR/out, the JSON document (OPTIONS: JSON with "functions",
  the -f patterns, and the tool's settings); the command line prints its
  table, copies it to -o and draws --plot from it.  lines with "lprof"
  (-o FILE.lprof) also leaves DIR/lprof, line_profiler's file, which the
  command line copies to -o instead.

The profile is written before anything is printed, and each file appears
whole (renamed into place) or not at all.  Everything the launcher needs
once the program has run is bound before it starts: the program may
replace, delete or close any of it (os.getpid, sys.excepthook,
sys.stderr, sys.modules["json"], descriptor 2...).

SIGTERM and SIGHUP (what `kill`, `timeout`, `docker stop`, systemd and a
closed terminal send) end a bare run at once, with no Python code run: where
the program has left them to their default action, the launcher catches
them, writes the profile, then ends the process by the same signal, so that
its parent sees what a bare run shows (`signal.getsignal` shows the
launcher's handler; a handler the program sets replaces it, and its own way
out then writes the profile; an ignored signal stays ignored).  SIGINT needs
nothing: its KeyboardInterrupt unwinds through the launcher.
"""

import _signal  # imported by every interpreter at start-up: nothing new for the program
import _thread
import os
import sys

from ._sonde import Profiler, _signals_after_fork, _signals_retry, _signals_seen

# Bound before the program runs (see above).
_getpid = os.getpid
_os_exit = os._exit
_os_open, _os_write, _os_close, _os_replace = os.open, os.write, os.close, os.replace
_os_read = os.read
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
_APPEND, _TRUNC = os.O_APPEND, os.O_TRUNC
_display = sys.__excepthook__  # the interpreter's own printer of a traceback
_set_handler, _get_handler = _signal.signal, _signal.getsignal
_sigmask, _SIG_BLOCK, _SIG_SETMASK = _signal.pthread_sigmask, _signal.SIG_BLOCK, _signal.SIG_SETMASK
_thread_id = _thread.get_ident
_raise_signal = _signal.raise_signal
_SIG_DFL = _signal.SIG_DFL
_ENDING_SIGNALS = (_signal.SIGTERM, _signal.SIGHUP)  # their default action ends the process
_modules = sys.modules
_MISSING = object()


class _Folder:
    """The command line's private folder, DIR; or, for a child followed
    (run --subprocesses), its files in DIR/children, each name after the
    child's pid and a dot (DIR/children/PID.stats)."""

    def __init__(self, path, prefix="", root=None):
        self.path, self.prefix, self.root = path, prefix, root or path

    def file(self, name):
        return self.path + "/" + self.prefix + name

    def child(self, pid):
        """The files of the child pid (run --subprocesses)."""
        return _Folder(self.root + "/children", "%d." % pid, self.root)

    def _put(self, name, data, flags):
        fd = _os_open(self.file(name), _FILE_FLAGS | flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[_os_write(fd, view):]
        finally:
            _os_close(fd)

    def say(self, line):
        """A line for the command line to print on its standard error."""
        self._put("said", (line + "\n").encode("utf-8", "backslashreplace"), _APPEND)

    def touch(self, name):
        self._put(name, b"", _TRUNC)

    def publish(self, part, name):
        _os_replace(self.file(part), self.file(name))

    def write(self, name, data):
        self._put(name + ".part", data, _TRUNC)
        self.publish(name + ".part", name)


def _fail(folder, message):
    folder.say("sonde: " + message)
    raise SystemExit(1)


def _script(folder, path, frame):
    """Code, namespace and source for `python SCRIPT ARGS`: what the
    interpreter compiled and the __main__ it made."""
    try:
        with open(path, "rb") as f:
            source = f.read().decode("utf-8", "replace")
    except OSError:  # gone since: the lines tool has no source to show
        source = ""
    return frame.f_code, frame.f_globals, source


def _code(folder, text, frame):
    """Code, namespace and source for `python -c CODE ARGS`."""
    return frame.f_code, frame.f_globals, text


def _module(folder, name, frame):
    """Code and namespace for `python -m MODULE ARGS` (runpy does the rest;
    a bare `python -m` imports it too)."""
    import importlib.util
    import runpy

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as e:
        spec = None
        why = str(e)
    else:
        why = "No module named %r" % name
    if spec is None:
        _fail(folder, "cannot run module %s: %s" % (name, why))
    code = compile("runpy._run_module_as_main(name, alter_argv=True)", "<sonde>", "exec")
    return code, {"runpy": runpy, "name": name}, ""


def _join_threads():
    """Wait for non-daemon threads, as the interpreter does at exit, so
    their calls are recorded to the end (the caller pauses this thread's
    recording first: the waiting itself is not the program's).  A program
    that never imported threading started none that the interpreter would
    wait for."""
    threading = _modules.get("threading")
    try:
        me = threading.current_thread()
        others = [t for t in threading.enumerate()
                  if t is not me and not t.daemon and t.is_alive()]
    except Exception:  # threading replaced or broken by the program
        return
    for t in others:
        t.join()


def _own_frames(tb, skip):
    """tb without its first frames that run the launcher's own code."""
    while tb is not None and (tb.tb_frame.f_globals is globals()
                              or tb.tb_frame.f_code is skip):
        tb = tb.tb_next
    return tb


def _write_stderr(text):
    """What the interpreter's PySys_WriteStderr does: sys.stderr, else the
    C-level standard error."""
    stream = getattr(sys, "stderr", None)
    try:
        stream.write(text)
        return
    except Exception:
        pass
    try:
        _os_write(2, text.encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def _print_uncaught(e, skip):
    """What the interpreter prints for an uncaught exception (through the
    program's sys.excepthook, with the interpreter's own answers when that
    hook is missing or fails), without the launcher's frames.  Returns the
    SystemExit the hook raised, if any: the interpreter then exits with it."""
    tb = _own_frames(e.__traceback__, skip)
    e.__traceback__ = tb
    hook = getattr(sys, "excepthook", _MISSING)
    if hook is _MISSING:
        _write_stderr("sys.excepthook is missing\n")
        _display(type(e), e, tb)
        return None
    try:
        hook(type(e), e, tb)
    except SystemExit as hook_exit:
        return hook_exit
    except BaseException as hook_error:
        hook_tb = hook_error.__traceback__ = _own_frames(hook_error.__traceback__, skip)
        _write_stderr("Error in sys.excepthook:\n")
        _display(type(hook_error), hook_error, hook_tb)
        _write_stderr("\nOriginal exception was:\n")
        _display(type(e), e, tb)
    return None


def _printed(*exc_info):
    """sys.excepthook once the launcher has printed the exception itself."""


class _RunTool:
    """sonde run: every call, into DIR/stats and DIR/out."""

    def __init__(self, folder, out_format, options, code, source, namespace, module=None):
        self.folder, self.out_format = folder, out_format
        self.prof = Profiler()
        # The profiler's own C methods, which it does not record: a Python
        # method here would show up in the program's profile.
        self.start, self.pause_thread, self.halt = (self.prof.enable, self.prof.pause_thread,
                                                    self.prof.disable)
        # --torch: operators once the program imports torch (_torch.py).
        self.options = {}
        if options != "{}":
            import json  # only then: a bare `sonde run` imports nothing for the program
            self.options = json.loads(options)
        self.torch_wanted = self.options.get("torch", False)
        self.torch = None
        # --subprocesses: a child the program forks records its own calls
        # (os.register_at_fork's after_in_child; a C method, which the
        # tracer does not see called) and writes them as its own files.
        self.children = self.options.get("children", False)
        self.forked = self.prof._forked
        # --torch: a forked child records no operators (torch's profiler
        # does not live on in a fork); this runs first, into the calls the
        # child's recording then forgets.
        self.forked_first = self.torch_forked if self.torch_wanted else None
        if self.torch_wanted:
            from . import _torch
            self.watcher = _torch.TorchImportHook(self.torch_imported)
            sys.meta_path.insert(0, self.watcher)

    def torch_imported(self, torch):
        """Starts recording operators as the program's `import torch`
        ends (this call shows in the profile, under that import)."""
        from . import _torch
        try:
            self.torch = _torch.Session(self.prof, torch, self.options.get("shapes", False),
                                        self.options.get("max_events", 0),
                                        self.options.get("memory", False),
                                        self.options.get("steps"))
            self.torch.start()
        except _torch.TorchError as e:
            self.torch = None
            self.folder.say("sonde: --torch: %s" % e)

    def torch_forked(self):
        self.torch = None
        self.torch_wanted = False
        self.watcher._leave()

    def stop(self):
        self.prof.disable()
        if not self.torch_wanted:
            return
        self.watcher._leave()
        if self.torch is not None:
            try:
                said = self.torch.stop()
            except Exception as e:  # torch's own parts: say so, keep the calls
                said = ["sonde: --torch: reading torch's recording failed (%s: %s): the "
                        "profile has the Python calls only" % (type(e).__name__, e)]
            for line in said:
                self.folder.say(line)
        else:
            if "torch" not in _modules:
                self.folder.say("sonde: --torch: the program never imported torch: no "
                                "operators to record")
            if self.options.get("max_events"):  # -f chrome: an empty timeline
                self.prof._torch_place([], [], [], [], False, self.options["max_events"])

    def save(self):
        if self.out_format and not (self.torch and self.torch.nothing_recorded()
                                    and self.options.get("max_events")):  # (an empty trace)
            # -f tensorboard -o DIR: a file a cycle of --torch-steps (out,
            # out.1, ...), as torch's handler writes one a cycle
            cycles = (self.torch.step_cycles() if self.torch and self.out_format == "tensorboard"
                      and self.options.get("cycles_apart") else [])
            for k, steps in enumerate(cycles if len(cycles) > 1 else [None]):
                name = "out.%d" % k if k else "out"
                self.prof.write(self.folder.file(name + ".part"), self.out_format,
                                all_calls=bool(self.options.get("all_calls")), steps=steps)
                self.folder.publish(name + ".part", name)
        if self.children:
            return  # --subprocesses: the command line sums the JSON parts alone
        self.prof.write(self.folder.file("stats.part"), "pstats")
        self.folder.publish("stats.part", "stats")


class _LinesTool:
    """sonde lines: per-line hits and time of the chosen functions."""

    with_module = False  # the script's top level is not a function to time
    signs_of_running = ("hits",)  # what a line that ran shows in the document
    not_running = "which never ran"

    def __init__(self, folder, out_format, options, code, source, namespace, module=None):
        # Imported here, not at the top: `sonde run` must not import for the
        # program what it would import itself.  -f still finds the functions
        # of the modules imported here first (select_imported).
        import builtins
        import json
        import time
        from . import _lines, _main_module
        self._time_ns = time.time_ns
        self._loads, self._compiled_code = json.loads, _lines.compiled_code
        self._matches = _lines.names_matching
        self.folder, self.namespace = folder, namespace
        self.options = json.loads(options)
        self.patterns = patterns = self.options.get("functions", [])
        self.prof = self.profiler()
        # -m: the functions are the module's, known as __main__ or by name.
        main = _main_module.find(module) if module else None
        if main is not None:
            code, source = main.code, main.source
        self.unmatched = _lines.select(self.prof, code, source, patterns, self.with_module,
                                       ("__main__", main.name) if main else ("__main__",))
        # A pattern with no module that names the program's own functions
        # (-f main) chooses those, not the same names in the standard library.
        main_own = [p for p in patterns if ":" not in p and p not in self.unmatched]
        _lines.select_imported(self.prof, patterns, self.unmatched, _modules, main_own)
        self.watcher = (_lines.LaterImportsFinder(self.prof, patterns, self.unmatched, main_own)
                        if patterns else None)
        if self.watcher:
            sys.meta_path.insert(0, self.watcher)
        if main is not None:
            main.serve()  # first on sys.meta_path: runpy gets the code chosen from
        # kernprof's builtin: @profile marks a function to profile.
        builtins.profile = self.prof.add_function
        # --subprocesses: a child the program forks counts from zero (a C
        # method, unseen by the tracer) and writes its own part; a Python
        # the program starts chooses the program's functions as it runs
        # the program's file (a multiprocessing worker's __mp_main__).
        self.children = self.options.get("children", False)
        self.is_child = folder.path != folder.root
        self.started_ns = 0  # when recording started (Unix ns): each part says so
        if self.children:
            self._follow_main_file(code, source, patterns, main)
        if patterns and not self.is_child:
            self._follow_file_run_by_exec(code, patterns)

    def _follow_main_file(self, code, source, patterns, main):
        """The program's main file, said in the folder by the program
        (DIR/main_file), and in a child, an audit hook that chooses its
        functions when the child runs that file's code (multiprocessing's
        spawn and forkserver run it as __mp_main__, by runpy: no import
        the watcher sees)."""
        path = getattr(code, "co_filename", "")
        if not self.is_child:  # the file, and -m's module name (a line each)
            if path and not path.startswith("<"):
                self.folder.write("main_file", (os.path.abspath(path) + "\n" + (
                    main.name if main else "")).encode("utf-8", "surrogateescape"))
            return
        try:
            with open(self.folder.root + "/main_file", "rb") as f:
                wanted, _, module = f.read().decode("utf-8", "surrogateescape").partition("\n")
        except OSError:
            return  # the program runs no file: its children have none to run again
        if path and os.path.abspath(path) == wanted:
            return  # the child runs the program's file as its own: chosen above
        # (-m's module: multiprocessing runs it again by name, as __mp_main__)
        self._choose_when_exec(lambda: wanted, patterns,
                               ("__main__", "__mp_main__", module or "__main__"), set())

    def _follow_file_run_by_exec(self, code, patterns):
        """A program that another runs (-m pdb FILE, -m coverage run FILE,
        -m cProfile FILE, -m trace): that one compiles the file sys.argv[0]
        then names and execs it, with no import the watcher sees.  Its
        functions are chosen then, as the program's own (__main__)."""
        path = getattr(code, "co_filename", "<")
        done = {os.path.abspath(path)} if path[:1] != "<" else set()
        self._choose_when_exec(lambda: os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0]
                               else None, patterns, ("__main__",), done, self.unmatched)

    def _choose_when_exec(self, wanted, patterns, names, done, unmatched=None):
        """An audit hook: the first code exec'd from the file wanted() names
        (an absolute path, or None) has the functions patterns match chosen,
        as the module names; the patterns that matched leave unmatched."""
        from . import _lines
        prof, with_module = self.prof, self.with_module

        def hook(event, args):
            if event != "exec" or not args:
                return
            path = getattr(args[0], "co_filename", "<")
            if path[:1] == "<":
                return
            path, chosen = os.path.abspath(path), wanted()
            if path != chosen or path in done:
                return
            done.add(path)
            try:
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                text = ""
            still = _lines.select(prof, args[0], text, patterns, with_module, names)
            if unmatched is not None:
                unmatched.intersection_update(still)

        sys.addaudithook(hook)

    def profiler(self):
        from ._lines import LineProfiler
        return LineProfiler(bytecode=self.options.get("bytecode", False))

    def forked(self):
        """A child the program forked (--subprocesses; the tracer runs no
        events for sonde's code): its counts start from zero, now."""
        self.prof._tracer._forked()
        self.started_ns = self._time_ns()

    def start(self):
        self.started_ns = self._time_ns()
        self.prof.enable()

    def pause_thread(self):
        pass

    def halt(self):
        pass

    def stop(self):
        self.prof.disable()
        try:
            sys.meta_path.remove(self.watcher)
        except (AttributeError, ValueError):  # no watcher, or the program took it off
            pass

    def save(self):
        if self.options.get("lprof"):  # -o FILE.lprof: dump_stats' file, before the document
            self.folder.write("lprof", self.prof.get_stats().to_bytes())
        document = self.prof.document()  # the JSON text, written in C
        if self.children:  # the parts' timelines are placed by it
            self.folder.write("start", str(self.started_ns).encode("ascii"))
        self.folder.write("out", document)
        if self.children and self.folder.path != self.folder.root:
            return  # a child's part: the program says what its patterns found
        unmatched = self.watcher.unmatched if self.watcher else self.unmatched
        functions = self._loads(document)["functions"]
        ran = [f["name"] for f in functions
               if any(line.get(k) for line in f["lines"] for k in self.signs_of_running)]
        for pattern in self.patterns:
            # A Python function the pattern found may have been replaced by
            # a compiled one (heapq's heappush by _heapq's) and never run.
            compiled = (None if self._matches(pattern, ran) else
                        self._compiled_code(pattern, _modules, self.namespace))
            if compiled is not None:
                self.folder.say("sonde: warning: -f %s is compiled code (%s), with no Python "
                                "lines to count" % (pattern, compiled))
            elif pattern in unmatched:
                self.folder.say("sonde: warning: -f %s matched no function" % pattern)
            elif not self._matches(pattern, ran) and not self.children:
                # (with --subprocesses, a function may run in a child only)
                chosen = ["%s (%s)" % (f["name"], f["file"].rpartition("/")[2])
                          for f in functions if self._matches(pattern, [f["name"]])]
                more = " and %d more" % (len(chosen) - 4) if len(chosen) > 4 else ""
                self.folder.say("sonde: warning: -f %s matched %s%s, %s" % (
                    pattern, ", ".join(chosen[:4]), more, self.not_running))


class _MemTool(_LinesTool):
    """sonde mem: what each line of the chosen functions allocates and
    keeps, and RSS over time."""

    with_module = True
    # Without --lines, hits are not counted: a line ran if something was
    # seen on it.
    signs_of_running = ("hits", "alloc_bytes", "freed_bytes", "rss_bytes")
    not_running = "on whose lines nothing ran or was allocated"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The C allocator shim was preloaded for this process only: the
        # program's own children start without it, unless they are
        # followed (--subprocesses).
        if self.children:
            return
        shim = os.environ.pop("SONDE_PRELOAD", None)
        if shim and "LD_PRELOAD" in os.environ:
            rest = [lib for lib in os.environ["LD_PRELOAD"].split() if lib != shim]
            if rest:
                os.environ["LD_PRELOAD"] = " ".join(rest)
            else:
                del os.environ["LD_PRELOAD"]

    def profiler(self):
        from ._mem import MemoryProfiler
        return MemoryProfiler(sample_bytes=self.options.get("sample_bytes", 512),
                              interval_ms=self.options.get("interval_ms", 10),
                              line_events=self.options.get("line_events", False))

    def start(self):
        # The program runs inside main(), called from its own first frame
        # (arm's hand-over): that frame and main()'s are not the program's
        # stack.
        self.prof._tracer._stack_floor(main.__code__)
        self.started_ns = self._time_ns()
        self.prof.enable()


TOOLS = {"run": _RunTool, "lines": _LinesTool, "mem": _MemTool}
STARTERS = {"script": _script, "code": _code, "module": _module}


class _Ending:
    """Stops the tool and writes what it gathered, once, in the process the
    launcher started (a child the program forked leaves the profile to its
    parent, unless run --subprocesses follows it: then it writes its own
    part, _adopt_child): when the program's code returns or raises, when it calls
    os._exit, or when SIGTERM or SIGHUP ends it (catch_signals)."""

    def __init__(self, tool, folder):
        self.tool, self.folder, self.pid, self.done = tool, folder, _getpid(), False
        self.children = getattr(tool, "children", False)  # run --subprocesses
        self.writing = False  # finish() is under way
        self.signalled = 0    # the signal the process is to end by, once written
        self.handler = self._signal_arrived  # one object: what _get_handler answers

    def catch_signals(self):
        """Catches the ending signals the program left to their default
        action; a child the program forks gets the default back at once
        (it ends as a bare child would, even inside C code).  The forking
        thread holds them back across the fork: one that came to the child
        before its default was back would be taken by the handler's C half
        and then dropped, the Python handler gone (a pool's worker
        terminated just after it was forked lived on, and its parent waited
        for ever); held back, it comes once the default is in place."""
        caught = [sig for sig in _ENDING_SIGNALS if _get_handler(sig) == _SIG_DFL]
        for sig in caught:
            _set_handler(sig, self.handler)
        # one that lands just before a blocking call is sent again until
        # the handler runs (src/ext/signals/retry.h)
        _signals_retry(caught)

        masks = {}  # the forking thread's own mask, by thread (its id is the child's too)

        def hold():
            masks[_thread_id()] = _sigmask(_SIG_BLOCK, caught)

        def release_in_parent():
            if _thread_id() in masks:
                _sigmask(_SIG_SETMASK, masks.pop(_thread_id()))

        def default_in_child():
            # a child followed keeps the handler: it writes its profile too
            if self.children:
                _signals_after_fork()
            for sig in () if self.children else caught:
                if _get_handler(sig) is self.handler:
                    _set_handler(sig, _SIG_DFL)
            release_in_parent()

        if caught:
            os.register_at_fork(before=hold, after_in_parent=release_in_parent,
                                after_in_child=default_in_child)

    def _signal_arrived(self, signum, frame):
        """The handler of catch_signals' signals: the profile is written
        (or the writing under way ends first), then the signal ends the
        process.  A second signal while writing changes nothing.  It shows
        in sonde run's profile as this function, called where the program
        was when the signal came."""
        self.tool.halt()  # run: recording stops here, before anything else is called
        _signals_seen()
        if self.signalled:
            return
        self.signalled = signum
        if not self.writing:
            self.finish()
            self._end_by_signal()

    def _end_by_signal(self):
        """Ends the process by the signal that came, as its default action
        would have, without flushing anything a bare run would not."""
        _set_handler(self.signalled, _SIG_DFL)
        _raise_signal(self.signalled)
        _os_exit(128 + self.signalled)  # only if the program blocked the signal

    def finish(self, exiting=False):
        """exiting: from os._exit, which ends the process at once (in a
        forked child there is then nothing to stop: its tracer goes with
        it, as a bare child's interpreter state does)."""
        if self.done or (exiting and _getpid() != self.pid and not self.children):
            return
        self.done = self.writing = True
        try:
            self._stop_and_save()
        finally:
            self.writing = False
        if self.signalled:  # it came while writing
            self._end_by_signal()

    def _adopt_child(self):
        """In a child the program forked (run --subprocesses): its own
        files, and its command line for the label of its part."""
        pid = _getpid()
        if pid == self.pid:
            return
        self.pid = pid
        self.folder = self.tool.folder = self.folder.child(pid)
        try:
            self.folder.write("argv", _own_command_line())
        except OSError:
            pass  # the part is named by its pid alone

    def _stop_and_save(self):
        try:
            self.tool.stop()
        except MemoryError:
            self.folder.say("sonde: out of memory while recording: the profile is incomplete")
        except Exception:
            # Recording has stopped; what failed is telling threading (up
            # to 3.11) to hook no more new threads, and the program made
            # threading unusable itself: nothing is lost.
            pass
        if self.children:
            self._adopt_child()  # (recording has stopped: unseen)
        if _getpid() != self.pid:
            return
        try:
            self.tool.save()
            return
        except (OSError, ValueError) as e:
            why = "cannot write the profile: %s" % e
        except MemoryError:
            why = "out of memory while writing the profile"
        try:
            self.folder.say("sonde: " + why)
            self.folder.touch("unsaved")
        except OSError:
            pass  # the folder is out of reach too: the command line says there is no profile


def arm(folder_path, fields, boot):
    """From the boot (sitecustomize, as the interpreter starts): makes the
    program's start hand over to main().  fields: TOOL FORMAT OPTIONS MODE
    TARGET.  A profile function waits for the first call of the program's
    code -- the <module> of the script or -c code the interpreter has
    compiled into its __main__, or runpy's _run_module_as_main for -m --
    and runs the program there instead (main()); what main() raises, or
    SystemExit when it returns, then ends that call, and the interpreter
    ends the process as it would have after the program.  Until then an
    error the interpreter reports (the script's SyntaxError) is said as a
    line."""
    folder = folder_path if isinstance(folder_path, _Folder) else _Folder(folder_path)
    tool_name, out_format, options, mode, target = fields
    main_globals = sys.modules["__main__"].__dict__

    def not_started(kind, value, tb):
        if isinstance(value, SyntaxError):
            what = target if mode == "script" else "the code given with -c"
            folder.say("sonde: cannot run %s: %s: %s (line %s)" % (
                what, type(value).__name__, value.msg, value.lineno))
        elif isinstance(value, ValueError):
            folder.say("sonde: cannot run %s: %s" % (target, value))
        else:
            sys.__excepthook__(kind, value, tb)

    def starting(frame, event, arg):
        code = frame.f_code
        if event != "call" or not (
                (mode != "module" and code.co_name == "<module>"
                 and frame.f_globals is main_globals)
                or (mode == "module" and code.co_name == "_run_module_as_main"
                    and frame.f_globals.get("__name__") == "runpy")):
            return
        sys.setprofile(None)
        sys.excepthook = sys.__excepthook__
        if _modules.get("sitecustomize") is boot:  # the interpreter has none of its own
            del _modules["sitecustomize"]
        sys.call_tracing(main, (folder, tool_name, out_format, options, mode, target, frame))
        raise SystemExit  # the program has run: the code it started with runs no more

    sys.excepthook = not_started
    sys.setprofile(starting)


def _own_command_line():
    """This process's command line, as the kernel keeps it."""
    fd = _os_open("/proc/self/cmdline", os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = b""
        while True:
            more = _os_read(fd, 65536)
            if not more:
                return data
            data += more
    finally:
        _os_close(fd)


def _own_start(cmdline):
    """(mode, target) of the interpreter's own command line (argv bytes,
    NUL-separated), as the launcher's `launch` file gives the program's:
    "code" and the -c text, "module" and the -m name, "script" and its path;
    (None, why) for what a child followed cannot be (stdin, interactive)."""
    words = [w.decode("utf-8", "surrogateescape") for w in cmdline.split(b"\0")[1:]]
    first = sys.argv[0] if sys.argv else ""
    if first in ("-c", "-m"):
        at = 0
        while at < len(words) and words[at] != first:
            at += 2 if words[at] in ("-W", "-X") else 1
        if at + 1 >= len(words):
            return None, "its %s could not be found in its command line" % first
        return ("code" if first == "-c" else "module"), words[at + 1]
    if first in ("", "-"):
        return None, "it reads its program from standard input"
    return "script", first


def arm_child(root, fields, boot):
    """From the boot, in a Python process the program started (run
    --subprocesses: root, the command line's folder, has children/): arm()
    for the process's own command line, its files in children/ named after
    its pid.  False when it cannot be followed (said in its PID.said)."""
    folder = _Folder(root).child(_getpid())
    try:
        cmdline = _own_command_line()
    except OSError as e:
        cmdline, mode, target = b"", None, "its command line cannot be read (%s)" % e
    else:
        mode, target = _own_start(cmdline)
    if mode is None:
        folder.say("sonde: --subprocesses: process %d is left out: %s" % (_getpid(), target))
        return False
    folder.write("argv", cmdline)
    rank = os.environ.get("RANK", "")  # a process of a torch.distributed job
    if rank.isdigit() and len(rank) < 10:
        folder.write("rank", rank.encode("ascii"))
    arm(folder, list(fields[:3]) + [mode, target], boot)
    return True


def main(folder, tool_name, out_format, options, mode, target, frame):
    code, namespace, source = STARTERS[mode](folder, target, frame)
    del frame
    tool = TOOLS[tool_name](folder, out_format, options, code, source, namespace,
                            module=target if mode == "module" else None)
    ending = _Ending(tool, folder)

    def _exit(status):
        """os._exit while the program runs: the profile is written first
        (the process ends at once, with no other chance to).  It shows in
        sonde run's profile as this function, called where os._exit was."""
        tool.halt()  # run: recording stops here, before anything else is called
        ending.finish(exiting=True)
        _os_exit(status)

    os._exit = _exit
    folder.write("interpreter", (sys.executable or "").encode("utf-8", "surrogateescape") +
                 b"\0" + sys.version.encode("utf-8", "backslashreplace"))
    folder.touch("started")
    outcome = None
    ending.catch_signals()
    if ending.children:
        if getattr(tool, "forked_first", None):
            os.register_at_fork(after_in_child=tool.forked_first)
        os.register_at_fork(after_in_child=tool.forked)
    tool.start()
    try:
        try:
            exec(code, namespace)
        finally:
            tool.pause_thread()
            _join_threads()
    except BaseException as e:
        outcome = e
    ending.finish()
    if outcome is None:
        return
    if not isinstance(outcome, SystemExit):
        # Printed here, without the launcher's frames; the interpreter then
        # ends the process as it would have for the program (exit status 1,
        # or death by SIGINT after a KeyboardInterrupt), flushing what is
        # left of standard output its own way.
        hook_exit = _print_uncaught(outcome, code if mode == "module" else None)
        if hook_exit is not None:
            outcome = hook_exit
        else:
            sys.excepthook = _printed
    raise outcome
