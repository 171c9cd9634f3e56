"""line_profiler 5's public API on sonde.LineProfiler.

What line_profiler's users call beyond add_function/enable/disable:
add_callable (functions behind methods, properties, partials, classes),
add_class/add_module with their scoping policies, the decorator that
turns the profiler on while a function, generator, coroutine or async
generator runs, enable_by_count/disable_by_count, runcall/runctx/run,
get_stats/dump_stats/print_stats.  The counting stays sonde's (_lines.py
and the C tracer): hits are exact, times are sonde's clock in ns
(unit 1e-9).
"""

import functools
import inspect
import json
import sys
import types

from ._line_stats import LineStats, print_functions

_POLICIES = ("exact", "children", "descendants", "siblings", "none")
_DEFAULT_POLICIES = {"func": "siblings", "class": "siblings", "module": "exact"}
_MARKER = "__line_profiler_id__"  # line_profiler's name for "a profiling wrapper"


class _Wrapped:
    """What a profiling wrapper carries: the function it wraps, and which
    profiler made it."""

    def __init__(self, func, profiler_id):
        self.func, self.profiler_id = func, profiler_id


def _policies(scoping_policy):
    """{func, class, module: policy name} from a name or a mapping
    (None: line_profiler's defaults); ValueError for other names."""
    if scoping_policy is None:
        policies = dict(_DEFAULT_POLICIES)
    elif isinstance(scoping_policy, str):
        policies = dict.fromkeys(_DEFAULT_POLICIES, scoping_policy)
    else:
        policies = dict(_DEFAULT_POLICIES, **dict(scoping_policy))
    for kind, policy in policies.items():
        policy = str(getattr(policy, "value", policy)).lower()
        if kind not in _DEFAULT_POLICIES or policy not in _POLICIES:
            raise ValueError("scoping_policy: %r: %r is none of %s"
                             % (kind, policy, ", ".join(_POLICIES)))
        policies[kind] = policy
    return policies


def _package(module_name):
    return module_name.rpartition(".")[0]


def _in_scope(policy, namespace, obj):
    """Whether obj (a function, class or module found in namespace, a class
    or a module) is in namespace's scope under policy."""
    if policy == "none":
        return True
    ns_module = namespace.__name__ if isinstance(namespace, types.ModuleType) else namespace.__module__
    if isinstance(obj, types.ModuleType):
        if policy == "exact" or isinstance(namespace, type):
            return False
        if policy == "siblings" and _package(ns_module):
            return obj.__name__.startswith(_package(ns_module) + ".")
        return obj.__name__.startswith(ns_module + ".")
    module = getattr(obj, "__module__", None)
    if policy == "siblings":
        package = _package(ns_module)
        return module == ns_module or bool(package) and str(module).startswith(package + ".")
    if isinstance(namespace, type):
        return (module == ns_module and
                str(getattr(obj, "__qualname__", "")).startswith(namespace.__qualname__ + "."))
    return module == ns_module


class LineProfilerAPI:
    """Mixed into sonde.LineProfiler (a Traced): line_profiler's methods."""

    # -- what to profile --

    @classmethod
    def _functions_of(cls, obj, seen):
        """The Python functions behind obj, as line_profiler finds them;
        TypeError when obj is no callable of any kind."""
        if isinstance(obj, (types.MethodType, classmethod, staticmethod)):
            return cls._functions_of(obj.__func__, seen)
        if isinstance(obj, (functools.partial, functools.partialmethod,
                            functools.cached_property)):
            return cls._functions_of(obj.func, seen)
        if isinstance(obj, property):
            return [f for part in (obj.fget, obj.fset, obj.fdel) if part is not None
                    for f in cls._functions_of(part, seen)]
        if isinstance(obj, type):
            # line_profiler's class policy: its own methods and inner
            # classes ("children"), not a function defined elsewhere and
            # assigned to it (convert = staticmethod(some_function)).
            found = []
            for member in vars(obj).values():
                if isinstance(member, type) and not _in_scope("children", obj, member):
                    continue
                try:
                    found += [f for f in cls._functions_of(member, seen)
                              if isinstance(member, type) or _in_scope("children", obj, f)]
                except TypeError:
                    pass
            return found
        if not callable(obj):
            raise TypeError("func = %r: cannot get functions from %s objects" % (obj, type(obj)))
        if id(obj) in seen:
            return []
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            return [obj]
        call = getattr(type(obj), "__call__", None)
        return [call] if isinstance(call, types.FunctionType) else []

    def _wrapper_info(self, func):
        info = getattr(func, _MARKER, None)
        return info if isinstance(info, _Wrapped) else None

    def add_callable(self, func, guard=None, name=None):
        """Profiles the functions behind func (a function, a method, a
        property, a partial, a class...); 1 if any was added, else 0.
        guard(function) true: leave that function out (by default, the
        wrappers this profiler made, whose function is added already)."""
        added = 0
        for impl in self._functions_of(func, set()):
            info = self._wrapper_info(impl)
            if guard(impl) if guard is not None else (info and info.profiler_id == id(self)):
                continue
            self.add_function(info.func if info else impl)
            added = 1
        return added

    def _add_namespace(self, namespace, policies, wrap, seen):
        count, to_wrap = 0, {}
        for attr, value in list(vars(namespace).items()):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, type):
                if _in_scope(policies["class"], namespace, value):
                    count += bool(self._add_namespace(value, policies, wrap, seen))
            elif isinstance(value, types.ModuleType):
                if _in_scope(policies["module"], namespace, value):
                    count += bool(self._add_namespace(value, policies, wrap, seen))
            else:
                try:
                    added = self.add_callable(value, guard=lambda f: (
                        self._wrapper_info(f) is not None
                        or not _in_scope(policies["func"], namespace, f)))
                except TypeError:
                    continue
                if added:
                    count += 1
                    to_wrap[attr] = value
        if wrap:
            for attr, value in to_wrap.items():
                setattr(namespace, attr, self.wrap_callable(value))
        return count

    def add_class(self, cls, *, scoping_policy=None, wrap=False):
        """Profiles the methods (and inner classes') of cls that the
        scoping policy admits; returns how many members were added."""
        if not isinstance(cls, type):
            raise TypeError("add_class: %r is not a class" % (cls,))
        return self._add_namespace(cls, _policies(scoping_policy), wrap, set())

    def add_module(self, mod, *, scoping_policy=None, wrap=False):
        """Profiles the functions and classes of module mod that the
        scoping policy admits; returns how many members were added."""
        if not isinstance(mod, types.ModuleType):
            raise TypeError("add_module: %r is not a module" % (mod,))
        return self._add_namespace(mod, _policies(scoping_policy), wrap, set())

    def add_function(self, func):
        """Profiles func's code (a function, or a method's function);
        func joins .functions, as each add_function does in
        line_profiler (a function added twice is listed twice)."""
        added = super().add_function(func)
        self.__dict__.setdefault("functions", []).append(func)
        return added

    @property
    def functions(self):
        """The functions given to add_function, in order (line_profiler's
        public list)."""
        return self.__dict__.setdefault("functions", [])

    @functions.setter
    def functions(self, value):
        self.__dict__["functions"] = value

    # -- when to profile --

    @property
    def enable_count(self):
        """How many enable_by_count() calls (decorated calls, `with`
        blocks) are open: the profiler is on while it is above 0."""
        return self._depth

    @enable_count.setter
    def enable_count(self, value):
        self._depth = value

    def enable_by_count(self):
        """Enables the profiler on the first of nested calls."""
        self._depth += 1
        if self._depth == 1:
            self.enable()

    def disable_by_count(self):
        """Disables it when the last of nested calls ends."""
        if self._depth > 0:
            self._depth -= 1
            if self._depth == 0:
                self.disable()

    def __enter__(self):
        self.enable_by_count()
        return self

    def __exit__(self, *exc):
        self.disable_by_count()

    def runcall(self, func, *args, **kw):
        self.enable_by_count()
        try:
            return func(*args, **kw)
        finally:
            self.disable_by_count()

    def runctx(self, cmd, globals, locals):
        self.enable_by_count()
        try:
            exec(cmd, globals, locals)
        finally:
            self.disable_by_count()
        return self

    def run(self, cmd):
        import __main__
        return self.runctx(cmd, __main__.__dict__, __main__.__dict__)

    def __call__(self, func):
        """As a decorator: profiles func's functions and returns func
        wrapped so that the profiler is on while it runs (a class, or a
        callable with no Python function, comes back as it was)."""
        self.add_callable(func)
        return self.wrap_callable(func)

    def wrap_callable(self, func):
        """func made to turn the profiler on while it runs: a function,
        generator, coroutine or async generator wrapped; a classmethod,
        staticmethod, bound method, partial, partialmethod, property or
        cached_property rebuilt around its wrapped functions; a class
        with its own methods so replaced (the class itself is returned);
        anything else as it is."""
        if isinstance(func, type):
            return self._wrap_class(func)
        if isinstance(func, (classmethod, staticmethod)):
            return type(func)(self.wrap_callable(func.__func__))
        if isinstance(func, types.MethodType):
            return types.MethodType(self.wrap_callable(func.__func__), func.__self__)
        if isinstance(func, (functools.partial, functools.partialmethod)):
            return type(func)(self.wrap_callable(func.func), *func.args, **func.keywords)
        if isinstance(func, functools.cached_property):
            new = functools.cached_property(self.wrap_callable(func.func))
            for key, value in vars(func).items():
                vars(new).setdefault(key, value)
            new.attrname = func.attrname
            return new
        if isinstance(func, property):
            parts = [None if f is None else self.wrap_callable(f)
                     for f in (func.fget, func.fset, func.fdel)]
            return property(*parts, func.__doc__)
        if not isinstance(func, types.FunctionType):
            return func
        info = self._wrapper_info(func)
        if info and info.profiler_id == id(self):
            return func
        if inspect.isasyncgenfunction(func):
            wrapper = self._wrap_async_generator(func)
        elif inspect.iscoroutinefunction(func):
            wrapper = self._wrap_coroutine(func)
        elif inspect.isgeneratorfunction(func):
            wrapper = self._wrap_generator(func)
        else:
            wrapper = self._wrap_function(func)
        setattr(wrapper, _MARKER, _Wrapped(info.func if info else func, id(self)))
        return wrapper

    def _wrap_class(self, cls):
        for attr, member in list(vars(cls).items()):
            if isinstance(member, type):
                continue
            try:
                if not self._functions_of(member, set()):
                    continue
            except TypeError:
                continue
            wrapper = self.wrap_callable(member)
            if wrapper is not member:
                setattr(cls, attr, wrapper)
        return cls

    def _wrap_function(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return self.runcall(func, *args, **kwargs)
        return wrapper

    def _wrap_coroutine(self, func):
        @functools.wraps(func)
        async def wrapper(*args, **kwargs):
            self.enable_by_count()
            try:
                return await func(*args, **kwargs)
            finally:
                self.disable_by_count()
        return wrapper

    def _wrap_generator(self, func):
        """The profiler is on while the generator runs, off while it is
        suspended."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            step, value = gen.send, None
            while True:
                try:
                    item = self.runcall(step, value)
                except StopIteration as stop:
                    return stop.value
                try:
                    step, value = gen.send, (yield item)
                except GeneratorExit:
                    gen.close()
                    raise
                except BaseException as e:  # thrown in: the generator's to handle
                    step, value = gen.throw, e
        return wrapper

    def _wrap_async_generator(self, func):
        @functools.wraps(func)
        async def wrapper(*args, **kwargs):
            agen = func(*args, **kwargs)
            step, value = agen.asend, None
            while True:
                self.enable_by_count()
                try:
                    item = await step(value)
                except StopAsyncIteration:
                    return
                finally:
                    self.disable_by_count()
                try:
                    step, value = agen.asend, (yield item)
                except GeneratorExit:
                    await agen.aclose()
                    raise
                except BaseException as e:
                    step, value = agen.athrow, e
        return wrapper

    # -- results --

    def get_stats(self):
        """A LineStats: {(file, first_line, name): [(line, hits, ns)]} of
        the lines that ran (name: the qualified name from 3.11, as
        line_profiler's), unit 1e-9."""
        timings = {}
        for f in json.loads(self.document())["functions"]:
            name = f["name"] if sys.version_info >= (3, 11) else f["name"].rpartition(".")[2]
            lines = timings.setdefault((f["file"], f["first_line"], name), {})
            for entry in f["lines"]:
                if entry["hits"]:
                    hits, ns = lines.get(entry["line"], (0, 0))
                    lines[entry["line"]] = (hits + entry["hits"], ns + entry["time_ns"])
        return LineStats({key: [(line, hits, ns) for line, (hits, ns) in sorted(lines.items())]
                          for key, lines in timings.items()}, 1e-9)

    def dump_stats(self, filename):
        """Writes get_stats() as line_profiler's .lprof file."""
        self.get_stats().to_file(filename)

    def print_stats(self, stream=None, output_unit=None, stripzeros=False, details=True,
                    summarize=False, sort=False, rich=False, *, unit=None, **_config):
        """line_profiler's report, in sonde's table, which leaves out the
        functions that never ran (line_profiler prints them unless
        stripzeros).  output_unit (or unit): "s", "ms", "us", "ns", or
        seconds as a number (1e-6); by default each time has its own
        unit.  rich and line_profiler's config are not used."""
        unit = unit if unit is not None else output_unit
        print_functions(json.loads(self.document())["functions"], stream, unit, stripzeros,
                        details, summarize, sort)
