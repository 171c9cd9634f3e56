"""PyTorch operators in sonde's profile (`sonde run --torch`, Profile(torch=True)).

torch's own profiler machinery (RecordFunction and Kineto, through
torch.autograd's _enable_profiler / _disable_profiler, what
torch.profiler.profile calls) records every operator and record_function
region with its thread and its start and end; meanwhile sonde's tracer
logs its calls as spans.  When both stop, the engine (the profiler's
_torch_place, in src/ext/tracer/profiler.c, which hands them to
torch_ops_place in torch_ops.c) puts each operator beneath the call that was
running it, nested as torch nests them, so that names, counts and self
times are torch.profiler's key_averages() figures, each under its Python
caller.

Nothing here imports torch before the program does: the launcher waits
for the program's own `import torch` (TorchImportHook) before starting.
"""

import sys
import threading
import time

# What the profiler API needs (torch 2.x); checked before starting.
_NEEDS = ("autograd._enable_profiler", "autograd._disable_profiler",
          "autograd._prepare_profiler", "_C._profiler._ExperimentalConfig",
          "_C._profiler.ProfilerConfig")


_stepping = None  # the Session that sonde.step() ends a step of, while one runs


def step():
    """Ends a training step of the recording under way (sonde.step()); a
    no-op when none is."""
    session = _stepping
    if session is not None:
        session.step()


def schedule_of(steps):
    """Profile(torch_steps=(WAIT, ACTIVE[, REPEAT])) as a Session's
    schedule (wait, active, repeat), read as `run --torch-steps`
    [WAIT:]ACTIVE[:REPEAT] is: REPEAT 1 unless given, 0 for every cycle;
    ValueError, in one line, when it makes no sense."""
    try:
        given = [int(n) for n in steps if int(n) == n and not isinstance(n, bool)]
    except (TypeError, ValueError):
        given = []
    if (not isinstance(steps, (tuple, list)) or len(given) != len(steps) or
            len(given) not in (2, 3) or given[0] < 0 or given[1] < 1 or
            (len(given) == 3 and given[2] < 0)):
        raise ValueError("torch_steps takes (WAIT, ACTIVE) or (WAIT, ACTIVE, REPEAT), whole "
                         "numbers with ACTIVE 1 or more (as torch.profiler.schedule's wait, "
                         "active and repeat), not %r" % (steps,))
    return (given[0], given[1], given[2] if len(given) == 3 else 1)


class TorchError(Exception):
    """torch cannot be profiled here: the message says why, in one line."""


def _lookup(torch, dotted):
    value = torch
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


class Session:
    """One stretch of operator recording, joined to one sonde profiler."""

    def __init__(self, prof, torch, shapes=False, max_events=0, memory=False, schedule=None):
        self.prof, self.torch, self.shapes, self.memory = prof, torch, shapes, memory
        # --torch-steps: (wait, active, repeat) as torch.profiler.schedule's
        # (repeat 0: every cycle); None: every step.
        self.schedule = schedule
        self.max_events = max_events  # with -f chrome: the timeline's budget
        try:
            for dotted in _NEEDS:
                _lookup(torch, dotted)
        except AttributeError:
            raise TorchError("torch %s is not supported by --torch (it needs torch 2.x's "
                             "profiler API; tested with 2.11 and 2.13)"
                             % getattr(torch, "__version__", "?")) from None
        from torch._C._profiler import (ProfilerActivity, ProfilerConfig, ProfilerState,
                                        _ExperimentalConfig)
        self.activities = {ProfilerActivity.CPU}
        if _device_present(torch):  # the kernels, their time on the GPU, its memory
            self.activities.add(ProfilerActivity.CUDA)
        # state, record_shapes, profile_memory, with_stack, with_flops,
        # with_modules, experimental: torch.profiler's defaults.
        self.config = ProfilerConfig(ProfilerState.KINETO, shapes, memory, False, False, False,
                                     _ExperimentalConfig())
        self.running = self.enabled = False
        self.framing = True  # record_function regions become frames (_watch_steps)
        self.said = []  # lines for the user from the windows closed

    def start(self):
        autograd = self.torch.autograd
        if self.torch._C._autograd._profiler_enabled():
            raise TorchError("the program is already running torch.profiler: sonde's "
                             "--torch cannot record operators alongside it")
        self._enable()
        self.running = True
        self.prof._torch_begin()
        self.regions = {}  # name -> regions sonde opened as frames
        self.handed = None  # the operators recorded when the program took torch's profiler
        self._patch_regions()
        self._patch_enable()
        self._watch_steps()

    def _enable(self):
        autograd = self.torch.autograd
        autograd._prepare_profiler(self.config, self.activities)
        autograd._enable_profiler(self.config, self.activities, set())
        self.enabled = True

    def _watch_steps(self):
        """Each optimizer.step() the program makes (torch's global
        optimizer step hooks), or sonde.step() it calls, ends a training
        step: its thread, start and end are kept, as ProfilerStep#N in
        the traces.  With a schedule (--torch-steps) the step hook also
        turns torch's profiler and the tracer's spans on and off: until
        the first step everything is recorded (a program that never
        steps is recorded whole); then only the active steps."""
        global _stepping
        self.steps = []  # (native thread id, start, end, number): CLOCK_REALTIME ns
        self.windows = []  # _Operators of each window closed
        self.nsteps = 0
        # Regions become frames from the first step recorded on (those run
        # before the first step then stay torch's: a program that never
        # steps is recorded whole, as torch records it).
        self.framing = self._active(0)
        self.since = None  # operators begun before it are not the first window's
        self.began = self.step_began = time.time_ns()
        _stepping = self
        self.step_hook = None
        try:  # (torch.optim deletes its name for the module)
            from torch.optim.optimizer import register_optimizer_step_post_hook as register
        except ImportError:  # a torch without the global hooks (before 2.0)
            register = None
        if register is not None:
            self.step_hook = register(lambda *_args: self.step())

    def _active(self, number):
        """Whether step `number` is recorded, as torch.profiler.schedule
        with warmup=0 answers it."""
        if self.schedule is None:
            return True
        wait, active, repeat = self.schedule
        cycle = wait + active
        return (repeat == 0 or number // cycle < repeat) and number % cycle >= wait

    def step(self):
        """Ends the current training step (sonde.step())."""
        if not self.running:
            return
        end, number = time.time_ns(), self.nsteps
        active = self._active(number)
        if active:
            self.steps.append((threading.get_native_id(), self.step_began, end, number))
        self.nsteps += 1
        self.framing = True
        if self.schedule is not None and self.handed is None:
            ahead = self._active(number + 1)
            if active and not ahead:
                self._close()
            elif not active and number == 0:  # what ran before the first step goes
                self.prof._torch_spans(False, True)
                if ahead:
                    # The next step is recorded: torch's profiler stays on and
                    # what it recorded so far is left out when read.  Turned
                    # off and on again here, inside the optimizer's own
                    # record_function region (this hook runs in it), the
                    # region's end would reach the new recording with the old
                    # one's freed event: a heap corruption.
                    self.since = end
                    self.prof._torch_spans(True)
                else:
                    self.torch.autograd._disable_profiler()
                    self.enabled = False
            if ahead and not self.enabled:  # the next step begins once recording has
                self.prof._torch_spans(True)
                self._enable()
                end = time.time_ns()
        self.step_began = end

    def _close(self):
        """The end of a window: torch's profiler off, its operators kept,
        the tracer's spans off."""
        awaited, said = self._await_device()
        self.said += said
        self.prof._torch_spans(False)  # (the calls open now end here: first)
        self.windows.append(_operators(self.torch, self.torch.autograd._disable_profiler(),
                                       self.regions, self.shapes, self.memory, awaited,
                                       self.since))
        self.enabled = False
        self.since = None

    def _unwatch_steps(self):
        global _stepping
        if _stepping is self:
            _stepping = None
        if self.step_hook is not None:
            self.step_hook.remove()
            self.step_hook = None

    def _patch_enable(self):
        """A torch.profiler the program starts takes torch's profiler over
        (its _prepare_profiler would drop what sonde's recorded): sonde's
        recording ends there, keeping what it recorded so far."""
        module = self.torch.autograd.profiler
        self.enable_patched = module._prepare_profiler, module._enable_profiler
        session = self

        def handing_over(original):
            def take_over(*args, **kwargs):
                if session.handed is None and session.running:
                    if session.enabled:
                        session.windows.append(_operators(
                            session.torch, session.torch.autograd._disable_profiler(),
                            session.regions, session.shapes, session.memory))
                        session.enabled = False
                    session.handed = _Operators.joined(session.windows)
                return original(*args, **kwargs)
            return take_over

        module._prepare_profiler, module._enable_profiler = map(handing_over,
                                                                self.enable_patched)

    def _patch_regions(self):
        """record_function's regions become frames of sonde's stacks (the
        calls made inside one are its children): its __enter__ and
        __exit__ tell the engine, until stop()."""
        cls = self.torch.autograd.profiler.record_function
        self.patched = cls, cls.__dict__["__enter__"], cls.__dict__["__exit__"]
        _, enter, leave = self.patched
        region_enter, region_exit, regions = (self.prof._region_enter, self.prof._region_exit,
                                              self.regions)
        session = self

        def __enter__(self):
            value = enter(self)
            # (--torch-steps: only a region begun while torch's profiler records
            # steps that are kept)
            if session.enabled and session.framing and region_enter(self.name):
                regions[self.name] = regions.get(self.name, 0) + 1
                self._sonde_framed = True
            return value

        def __exit__(self, *exc_info):
            try:
                return leave(self, *exc_info)
            finally:
                if self.__dict__.pop("_sonde_framed", False):
                    region_exit(self.name)

        cls.__enter__, cls.__exit__ = __enter__, __exit__

    def _unpatch(self):
        cls, enter, leave = self.patched
        cls.__enter__, cls.__exit__ = enter, leave
        module = self.torch.autograd.profiler
        module._prepare_profiler, module._enable_profiler = self.enable_patched

    def stop(self):
        """Stops recording and places the operators (the sonde profiler
        must be disabled).  Returns lines to tell the user."""
        if not self.running:
            return []
        self.running = False
        self._unpatch()
        self._unwatch_steps()
        said, steps = self.said, self.steps
        ops = self.handed
        if ops is not None:
            said.append("sonde: --torch: the program started its own torch.profiler, which "
                        "took torch's profiler over: sonde's operators end there")
        else:
            if self.enabled:
                awaited, more = self._await_device()
                said += more
                self.windows.append(_operators(self.torch, self.torch.autograd
                                               ._disable_profiler(), self.regions, self.shapes,
                                               self.memory, awaited, self.since))
                if awaited is not None:  # the steps that ended before sonde's wait
                    steps = [st for st in steps if st[2] < awaited]
            ops = _Operators.joined(self.windows)
        said += self._said_of_steps()
        n, top, placed, spans_full, kept, dropped = self.prof._torch_place(
            ops.tids, ops.names, ops.starts, ops.ends, self.shapes, self.max_events, ops.mems,
            ops.device_mems, ops.kernels, ops.regions, steps)
        if ops.unlaunched:
            said.append("sonde: --torch: %d GPU kernels (%.3f ms on the GPU) were launched by "
                        "no operator sonde recorded: placed under their thread"
                        % (len(ops.unlaunched), sum(k[3] - k[2] for k in ops.unlaunched) / 1e6))
        if spans_full:
            said.append("sonde: --torch: the log of calls reached its cap (4 million calls "
                        "of 0.5 us or more); later operators are placed under their "
                        "thread, not their caller")
        if dropped:
            said.append(dropped_line(kept, dropped, self.max_events))
        if top > placed:
            said.append("sonde: --torch: %d of %d top-level operators ran outside any "
                        "recorded call (placed under their thread)" % (top - placed, top))
        return said

    def step_cycles(self):
        """--torch-steps: the steps recorded in each cycle of the schedule,
        as (first, last) step numbers, in order; [] without a schedule."""
        if self.schedule is None:
            return []
        wait, active = self.schedule[0], self.schedule[1]
        cycles = {}
        for _tid, _start, _end, number in self.steps:
            first, last = cycles.get(number // (wait + active), (number, number))
            cycles[number // (wait + active)] = (min(first, number), max(last, number))
        return [cycles[k] for k in sorted(cycles)]

    def nothing_recorded(self):
        """Whether --torch-steps' window never came: the program stepped,
        but fewer steps than the waiting ones."""
        return self.schedule is not None and self.nsteps > 0 and not self.steps

    def _said_of_steps(self):
        """--torch-steps: a line when the program's steps did not fill the
        steps asked for."""
        if self.schedule is None:
            return []
        wait, active, _repeat = self.schedule
        if self.nsteps == 0:
            return ["sonde: --torch-steps: no step was seen (no optimizer.step() nor "
                    "sonde.step()): the whole run is recorded"]
        if self.nothing_recorded():
            return ["sonde: --torch-steps: the program ran %d steps, the first recorded "
                    "would have been step %d (ProfilerStep#%d): no operators recorded%s"
                    % (self.nsteps, wait + 1, wait,
                       ", no trace written" if self.max_events else "")]
        if self.nsteps < wait + active:
            return ["sonde: --torch-steps: the program ran %d steps: steps %d to %d recorded"
                    % (self.nsteps, wait + 1, self.nsteps)]
        return []

    def _await_device(self):
        """Waits for the kernels the GPU still has queued, as torch.profiler
        does before it stops, so that each is recorded whole.  Returns when
        the wait began (CLOCK_REALTIME ns: what torch records from then on
        is sonde's wait, not the program's; None without a GPU) and the
        lines to tell the user."""
        from torch._C._profiler import ProfilerActivity
        if ProfilerActivity.CUDA not in self.activities:
            return None, []
        began = time.time_ns()
        try:
            self.torch.cuda.synchronize()
        except RuntimeError as e:  # the program's own kernel failed, say
            return began, ["sonde: --torch: waiting for the GPU's last kernels failed (%s): "
                           "the recording may lack them" % str(e).split("\n")[0]]
        return began, []


def dropped_line(kept, dropped, budget):
    """What -f chrome's budget left out, in one line."""
    return ("sonde: --torch: the trace keeps the first %d of %d calls and operators "
            "(--max-events %d): %d dropped" % (kept, kept + dropped, budget, dropped))


class _Operators:
    """What one recording holds, as _torch_place takes it: per operator
    (and region) its thread, name, start and end (CLOCK_REALTIME ns), with
    memory its net CPU and GPU bytes (else None); the GPU kernels beneath
    the operators that launched them, each (operator index, name, start,
    end, device, stream; the index -1 for one launched by no operator
    recorded, also kept in `unlaunched`)."""

    def __init__(self, until=None):
        self.tids, self.names, self.starts, self.ends = [], [], [], []
        self.regions = []  # whether each is a record_function region (a user_annotation)
        self.mems = self.device_mems = None
        self.kernels, self.unlaunched = [], []
        self.until = until  # when sonde's own wait for the GPU began (None: no wait)

    @classmethod
    def joined(cls, parts):
        """The recordings of several windows (--torch-steps) as one."""
        if len(parts) == 1:
            return parts[0]
        ops = cls()
        if any(part.mems is not None for part in parts):
            ops.mems = []
        if any(part.device_mems is not None for part in parts):
            ops.device_mems = []
        for part in parts:
            base = len(ops.names)
            for mine, theirs in ((ops.tids, part.tids), (ops.names, part.names),
                                 (ops.starts, part.starts), (ops.ends, part.ends),
                                 (ops.regions, part.regions)):
                mine += theirs
            for mine, theirs in ((ops.mems, part.mems), (ops.device_mems, part.device_mems)):
                if mine is not None:
                    mine += theirs if theirs is not None else [0] * len(part.names)
            ops.kernels += [(k[0] + base if k[0] >= 0 else -1,) + tuple(k[1:])
                            for k in part.kernels]
            ops.unlaunched += part.unlaunched
        return ops


def _device_present(torch):
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # a broken CUDA install: profile the CPU side
        return False


def _operators(torch, result, regions, shapes, memory=False, until=None, since=None):
    """The CPU operators and regions key_averages() counts, less the
    regions sonde recorded itself as frames (their names in `regions`),
    those begun at or after `until` (sonde's own wait for the GPU) and,
    with the kernels, those begun before `since` (the steps waited),
    and the GPU kernels each launched, joined as torch.profiler joins them
    (a kernel's linked correlation id is its operator's correlation id;
    _Launchers says which operator where several have that id).  With
    shapes, each name is followed by a space and the input shapes as
    key_averages(group_by_input_shape=True) writes them."""
    from torch.autograd.profiler_util import _filter_name, _rewrite_name
    types = torch._C._autograd.DeviceType
    cpu = types.CPU
    devices = _device_types(types)
    ops = _Operators(until)
    launchers = _Launchers(ops)
    kernels, seen, kept = [], [], []  # the CPU events seen, and those kept with their index
    shown = {}  # torch's name -> the name shown, or None (left out): names repeat
    events = result.events()
    for e in events:
        name = _name(e)
        if name is None:
            continue
        show = shown.get(name, False)
        if show is False:
            show = shown[name] = (None if _filter_name(name) or name == _MEMORY_EVENT
                                  else _rewrite_name(name, with_wildcard=True))
        if show is None or e.is_hidden_event():
            continue
        start = e.start_ns()
        if since is not None and start < since:
            continue
        device, annotation = e.device_type(), e.is_user_annotation()
        if device in devices:
            if not annotation:  # a region's span on the GPU is no kernel
                kernels.append(e)
            continue
        if device != cpu or (until is not None and start >= until):
            continue
        seen.append(e)
        if name in regions and annotation:
            continue
        kept.append((e, len(ops.names)))
        ops.tids.append(e.device_resource_id())
        ops.regions.append(bool(annotation))
        ops.names.append("%s %s" % (show, e.shapes()) if shapes else show)
        ops.starts.append(start)
        ops.ends.append(e.end_ns())
    if kernels:  # which operator launched each (without a GPU, none to ask)
        for e in seen:
            launchers.saw(e)
        for e, index in kept:
            if _may_launch(e):
                launchers.add(e.correlation_id(), index)
    for e in kernels:
        kernel = (launchers.of(e.linked_correlation_id()),
                  _rewrite_name(_name(e), with_wildcard=True), e.start_ns(), e.end_ns(),
                  e.device_index(), e.device_resource_id())
        (ops.kernels if kernel[0] >= 0 else ops.unlaunched).append(kernel)
    ops.kernels += ops.unlaunched  # the trace shows them all
    if memory:
        held = _Memory(events, {getattr(types, name) for name in ("CPU", "MKLDNN", "IDEEP")
                                if hasattr(types, name)})
        ops.mems = [held.between(s, e) for s, e in zip(ops.starts, ops.ends)]
        held = _Memory(events, devices)
        if held.stamps:
            ops.device_mems = [held.between(s, e) for s, e in zip(ops.starts, ops.ends)]
    return ops


def _may_launch(e):
    """Whether a CPU event is an operator or region that GPU kernels can
    be linked to: one on a thread (CUPTI's records of its own overhead,
    "Lazy Function Loading" and the like, sit on none, and their
    correlation ids, from CUPTI's own count, can equal an operator's),
    not asynchronous, and itself linked to nothing (a runtime call such as
    cudaLaunchKernel is linked to its operator)."""
    return (e.linked_correlation_id() == 0 and e.correlation_id() > 0
            and e.device_resource_id() != 0 and not e.is_async()
            and e.start_thread_id() == e.end_thread_id())


class _Launchers:
    """Which operator launched the kernels linked to a correlation id.
    torch.profiler credits them to every CPU event with that id; a runtime
    call made outside any operator (cudaGetDeviceCount, say) carries an id
    of CUPTI's count that can equal an operator's, so where several have
    the id, the launcher is the one that made the launch call (a CPU event
    linked to the id, on its thread, within its span)."""

    def __init__(self, ops):
        self.ops = ops
        self.by_id = {}  # correlation id -> indices of the operators with it
        self.calls = {}  # linked correlation id -> [(thread, start)] of its runtime calls

    def saw(self, e):
        linked = e.linked_correlation_id()
        if linked > 0:
            self.calls.setdefault(linked, []).append((e.device_resource_id(), e.start_ns()))

    def add(self, correlation_id, index):
        self.by_id.setdefault(correlation_id, []).append(index)

    def of(self, linked):
        """The index of the operator that launched a kernel, else -1."""
        found = self.by_id.get(linked, ())
        if len(found) > 1:
            ops = self.ops
            found = [i for i in found
                     if any(tid == ops.tids[i] and ops.starts[i] <= start <= ops.ends[i]
                            for tid, start in self.calls.get(linked, ()))] or found
        return found[0] if found else -1


def _device_types(types):
    """The device types whose events are kernels (and memory) of a GPU,
    as torch.profiler counts them."""
    return {getattr(types, name) for name in ("CUDA", "HIP", "XPU", "PrivateUse1")
            if hasattr(types, name)}


_MEMORY_EVENT = "[memory]"  # torch's name for an allocation or a release


def _name(e):
    try:
        return e.name()
    except UnicodeDecodeError:  # seen with torch 2.13's Python events
        return None


class _Memory:
    """One allocator's events (profile_memory=True), those of the device
    types given: an operator's bytes are the sum of those stamped within
    its start and end, on any thread, as torch.profiler's cpu_memory_usage
    and device_memory_usage are (its MemRecordsAcc)."""

    def __init__(self, events, devices):
        import bisect
        import itertools
        records = sorted((e.start_ns(), e.nbytes()) for e in events
                         if _name(e) == _MEMORY_EVENT and e.device_type() in devices)
        self.stamps = [stamp for stamp, _bytes in records]
        self.sums = [0] + list(itertools.accumulate(nbytes for _stamp, nbytes in records))
        self.left, self.right = bisect.bisect_left, bisect.bisect_right

    def between(self, start, end):
        return self.sums[self.right(self.stamps, end)] - self.sums[self.left(self.stamps, start)]


class _Loader:
    """A module loader that calls `done` once the module has run."""

    def __init__(self, loader, done):
        self._loader, self._done = loader, done

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._done(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class TorchImportHook:
    """On sys.meta_path until the program imports torch: then calls
    on_import(torch) once torch's own module code has run, and leaves."""

    def __init__(self, on_import):
        self.on_import, self.busy = on_import, False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.busy:
            return None
        self.busy = True
        try:
            self._leave()
            import importlib.util
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader, self.on_import)
        return spec

    def _leave(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
