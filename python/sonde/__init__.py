"""sonde: where does a Python program spend its time?

The in-process API, a drop-in for cProfile's::

    import sonde
    with sonde.Profile() as prof:
        work()
    prof.print_stats("tottime")
    prof.dump_stats("work.prof")          # pstats.Stats, snakeviz, gprof2dot

    @sonde.profile                        # prints the table after each call
    def work(): ...

Every thread is recorded, each with its own stacks; C functions are named
as cProfile names them, so .prof files from both tools compare key by key.

Per line: sonde.LineProfiler (hits and time, as line_profiler) and
sonde.MemoryProfiler (bytes allocated and kept, as memory_profiler)::

    mem = sonde.MemoryProfiler(work)
    with mem:
        work()
    mem.print_stats()

Benchmarks, calibrated over fresh processes (sonde timeit)::

    r = sonde.timeit("sorted(data)", setup="data = list(range(1000))[::-1]")
    r.mean, r.ci, r.values                # seconds per loop

PYTEST_DONT_REWRITE: the package carries pytest's plugin (its pytest11
entry point), and under `sonde run -m pytest` the launcher has imported
it before pytest starts; this marker keeps pytest from warning that it
cannot rewrite the asserts of a package that has none (a warning that
`-W error` makes fatal).
"""

import sys

try:
    from ._sonde import Profiler as _Engine, ProfilerActiveError
except ImportError as _engine_error:
    # The extension is missing (not built for this Python): `import sonde`
    # still works, so that a pytest run that loads sonde's plugin (its
    # pytest11 entry point) runs its tests, unprofiled; using the engine
    # raises the ImportError itself.
    class _Engine:
        def __init__(self, *args, _error=_engine_error, **kwargs):
            raise _error

    class ProfilerActiveError(ValueError, RuntimeError):
        """Another profiler records already."""

__all__ = ["LineProfiler", "MemoryProfiler", "Profile", "ProfilerActiveError", "profile", "run",
           "runctx", "timeit"]

# Importing sonde imports nothing else: `sonde run` loads this package into
# the program's process, which must find the modules a bare interpreter has
# and no more (a module sonde imported first would hide its import's cost,
# and its functions from `sonde lines -f`).  What the names below need is
# imported when they are first used.
def __getattr__(name):
    if name == "LineProfiler":
        from ._lines import LineProfiler as value
    elif name == "MemoryProfiler":
        from ._mem import MemoryProfiler as value
    elif name == "timeit":
        from ._timeit import timeit as value
    elif name == "memory_usage":
        from ._memory_usage import memory_usage as value
    elif name == "__version__":
        value = _version()
    else:
        raise AttributeError("module 'sonde' has no attribute %r" % name)
    globals()[name] = value
    return value


def _version():
    """pyproject.toml's version, as the extension was built with it (or as
    the installed package's metadata says, where the extension is missing)."""
    try:
        from ._sonde import VERSION
        return VERSION
    except ImportError:
        from importlib import metadata
        try:
            return metadata.version("sonde")
        except metadata.PackageNotFoundError:
            return "unknown"


def load_ipython_extension(ipython):
    """`%load_ext sonde`: the %sonde and %%sonde magics (run, lines, mem,
    timeit), %sonde_timeit and %%sonde_timeit."""
    from ._magic import load
    load(ipython)


def __dir__():
    return sorted(set(globals()) | {"LineProfiler", "MemoryProfiler", "timeit", "memory_usage"})


_getstats_made = []  # the three tuple types below, made once (protected by the GIL)


def _getstats_types():
    """getstats() entries, shaped like _lsprof's: a Python function's `code`
    has co_filename, co_firstlineno and co_name; a C function's is its label."""
    if not _getstats_made:
        import collections
        _getstats_made.extend((
            collections.namedtuple("CodeLabel", "co_filename co_firstlineno co_name"),
            collections.namedtuple("ProfilerEntry",
                                   "code callcount reccallcount totaltime inlinetime calls"),
            collections.namedtuple("ProfilerSubEntry",
                                   "code callcount reccallcount totaltime inlinetime")))
    return _getstats_made


class Profile(_Engine):
    """A deterministic profiler of every call (cProfile.Profile's interface).

    Profile(timer=None, timeunit=0.0, subcalls=True, builtins=True), as
    cProfile's.  enable() and disable() start and stop recording in every
    thread; create_stats() fills .stats for pstats.Stats(profile);
    dump_stats() writes a .prof file; write(path, format) writes pstats,
    collapsed or json; table() returns the text report print_stats() prints.

    timer: a clock of the program's, e.g. time.process_time for CPU time
    instead of wall time; it returns seconds, or with timeunit > 0 ints of
    timeunit seconds each.  As in cProfile it is called at every call and
    return recorded, which costs per event (measured, over sonde's own
    clock): time.perf_counter ~50 ns, a timer written in Python ~100 ns,
    time.process_time ~650 ns (the kernel reads CPU time).  If it raises or returns something that
    is not a number, recording stops there and disable() raises that error
    (cProfile prints it as unraisable at every event and counts 0).
    subcalls=False leaves the callers out of the stats, as cProfile does;
    builtins=False leaves C functions out.  Only one profiler records at a
    time: enable() while another does raises ProfilerActiveError, a
    ValueError (cProfile's) and a RuntimeError.
    """

    def __init__(self, timer=None, timeunit=0.0, subcalls=True, builtins=True, *,
                 torch=False, torch_shapes=False, torch_steps=None):
        # torch=True adds PyTorch operators and record_function regions
        # beneath the calls that ran them (imports torch); torch_shapes
        # names each operator with its input shapes too; torch_steps
        # (WAIT, ACTIVE[, REPEAT]) records the operators of those steps
        # only, as `run --torch-steps` does.
        if timer is not None and (torch or torch_shapes or torch_steps is not None):
            raise ValueError("torch=True places operators by sonde's own clock: "
                             "it takes no timer")
        schedule = None
        if torch_steps is not None:
            from ._torch import schedule_of
            schedule = schedule_of(torch_steps)
            torch = True
        super().__init__(timer, timeunit)
        self._subcalls = bool(subcalls)
        self._builtins = bool(builtins)
        self._torch = None
        if torch or torch_shapes:
            import torch as torch_module
            from ._sonde import DEFAULT_MAX_EVENTS
            from ._torch import Session, TorchError
            try:
                # a timeline too, for write(path, "chrome" or "tensorboard")
                self._torch = Session(self, torch_module, torch_shapes,
                                      max_events=DEFAULT_MAX_EVENTS, schedule=schedule)
            except TorchError as e:
                raise RuntimeError(str(e)) from None
            self.disable = self._disable_torch  # without torch, disable() stays the C method

    def enable(self, subcalls=None, builtins=None):
        """Start recording; subcalls and builtins, when given, replace the
        constructor's (as cProfile's enable())."""
        if self._torch is not None and not self._torch.running:
            from ._torch import TorchError
            try:
                self._torch.start()
            except TorchError as e:
                raise RuntimeError(str(e)) from None
        if subcalls is not None:
            self._subcalls = bool(subcalls)
        if builtins is not None:
            self._builtins = bool(builtins)
        super().enable(True, self._builtins)

    def torch_cycles(self):
        """With torch_steps: the steps recorded in each cycle of the
        schedule, as (first, last) step numbers, in order (write(path,
        "tensorboard", steps=(first, last)) writes one cycle's trace, as
        tensorboard_trace_handler writes a file a cycle); [] without."""
        return self._torch.step_cycles() if self._torch is not None else []

    def _disable_torch(self):
        """disable(), then the operators recorded meanwhile join the tree."""
        super().disable()
        for line in self._torch.stop():
            sys.stderr.write(line + "\n")

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc_info):
        self.disable()

    def create_stats(self):
        self.disable()
        self.snapshot_stats()

    def _stats(self):
        """pstats' dict; with subcalls=False, every callers dict empty."""
        import marshal
        stats = marshal.loads(self._pstats())
        if not self._subcalls:
            stats = {k: v[:4] + ({},) for k, v in stats.items()}
        return stats

    def snapshot_stats(self):
        self.stats = self._stats()

    def getstats(self):
        """cProfile's getstats(): one entry per function, with its callees."""
        label, entry, sub_entry = _getstats_types()

        def code_of(key):
            return key[2] if key[:2] == ("~", 0) else label(*key)

        stats = self._stats()
        calls = {}
        for callee, (_pc, _nc, _tt, _ct, callers) in stats.items():
            for caller, (nc, pc, tt, ct) in callers.items():
                calls.setdefault(caller, []).append(
                    sub_entry(code_of(callee), nc, nc - pc, ct, tt))
        return [entry(code_of(key), nc, nc - pc, ct, tt, calls.get(key))
                for key, (pc, nc, tt, ct, _callers) in stats.items()]

    def dump_stats(self, file):
        if self._subcalls:
            self.write(file, "pstats")
        else:
            import marshal
            with open(file, "wb") as f:
                marshal.dump(self._stats(), f)

    def print_stats(self, sort="cumtime", limit=0, file=None):
        if sort == -1 or sort in ("stdname", "nfl"):
            sort = "file"
        elif isinstance(sort, int):
            sort = {0: "ncalls", 1: "tottime", 2: "cumtime"}.get(sort, "cumtime")
        (file or sys.stdout).write(self.table(sort=sort, limit=limit))

    def runcall(self, func, /, *args, **kwargs):
        self.enable()
        try:
            return func(*args, **kwargs)
        finally:
            self.disable()

    def runctx(self, cmd, globals, locals):
        self.enable()
        try:
            exec(cmd, globals, locals)
        finally:
            self.disable()
        return self

    def run(self, cmd):
        import __main__
        return self.runctx(cmd, __main__.__dict__, __main__.__dict__)


def runctx(statement, globals, locals, filename=None, sort="cumtime"):
    """Like cProfile.runctx: profile a statement, then save or print."""
    prof = Profile()
    try:
        prof.runctx(statement, globals, locals)
    finally:
        if filename is not None:
            prof.dump_stats(filename)
        else:
            prof.print_stats(sort)


def run(statement, filename=None, sort="cumtime"):
    """Like cProfile.run: profile a statement in __main__'s namespace."""
    import __main__
    runctx(statement, __main__.__dict__, __main__.__dict__, filename, sort)


def profile(func=None, *, sort="cumtime", limit=30, file=None):
    """Decorator: profile each call of func and print the table afterwards.

    Use bare (@sonde.profile) or with options (@sonde.profile(sort="tottime")).
    A call made while another sonde profiler records is run unprofiled.
    """
    import functools

    if func is None:
        return functools.partial(profile, sort=sort, limit=limit, file=file)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        prof = Profile()
        try:
            prof.enable()
        except RuntimeError:
            return func(*args, **kwargs)
        try:
            return func(*args, **kwargs)
        finally:
            prof.disable()
            (file or sys.stderr).write(prof.table(sort=sort, limit=limit))

    return wrapper


def step():
    """Ends a training step of the PyTorch recording under way (`sonde run
    --torch`, Profile(torch=True)), for a loop that steps no torch
    optimizer; each optimizer.step() ends one without it.  The steps are
    ProfilerStep#0, #1, ... in the traces.  Does nothing otherwise."""
    from ._torch import step as end_step
    end_step()
