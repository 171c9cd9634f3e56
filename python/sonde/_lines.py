"""Per-line profiling: sonde.LineProfiler and what `sonde lines` prints.

The counting is C (_sonde.LineTracer), and so are the JSON document of
`sonde lines -o` (docs/formats.md) and the table (_sonde.lines_table);
this module chooses which code objects to trace, and gives the document
what only Python knows: each line's source and the instructions as dis
shows them.
"""

import array
import dis
import fnmatch
import functools
import importlib.machinery
import json
import linecache
import os
import sys
import types

from ._line_api import LineProfilerAPI
from ._sonde import LineTracer, write_file


def nested_codes(code):
    """The lambdas, comprehensions and generator expressions of code, and
    theirs: code objects whose lines are code's lines."""
    for const in code.co_consts:
        if hasattr(const, "co_code") and const.co_name.startswith("<"):
            yield const
            yield from nested_codes(const)


def line_range(code):
    """First and last line an instruction of code, or of code nested in it,
    can be on."""
    lines = [line for c in [code, *nested_codes(code)]
             for _, line in dis.findlinestarts(c) if line is not None]
    first = code.co_firstlineno
    return first, max(lines + [first])


def unit_lines(code):
    """The line of each code unit, as int32 bytes (0: none); 3.12+ needs it
    to tell a backward jump within one line."""
    if sys.version_info < (3, 12):
        return b""
    lines = array.array("i", bytes(4 * (len(code.co_code) // 2)))
    for start, end, line in code.co_lines():
        for unit in range(start // 2, end // 2):
            lines[unit] = line or 0
    return lines.tobytes()


def source_line(filename, line):
    """A line's text, as the documents show it."""
    return linecache.getline(filename, line).rstrip("\n")


def instructions(code):
    """(offset, opname, argument, line) of each instruction, as dis shows them:
    the argument as dis.dis prints it, its number and what it means in
    parentheses ("CALL 2", "LOAD_FAST 0 (a)"), or nothing."""
    starts = sorted((off, line) for off, line in dis.findlinestarts(code) if line is not None)
    out, k, line = [], 0, code.co_firstlineno
    kwargs = {"adaptive": False} if sys.version_info >= (3, 12) else {}
    for ins in dis.get_instructions(code, **kwargs):
        while k < len(starts) and starts[k][0] <= ins.offset:
            line = starts[k][1]
            k += 1
        arg = "" if ins.arg is None else "%d (%s)" % (ins.arg, ins.argrepr) if ins.argrepr \
            else str(ins.arg)
        out.append((ins.offset, ins.opname, arg, line))
    return out


def code_tree(code, qualname=""):
    """(code, qualname) of every function nested in code, depth first.

    Comprehensions and lambdas stay with the function around them: their
    lines are that function's lines."""
    for const in code.co_consts:
        if not hasattr(const, "co_code"):
            continue
        if const.co_name.startswith("<"):
            yield from code_tree(const, qualname)
            continue
        name = getattr(const, "co_qualname", None) or (
            qualname + "." + const.co_name if qualname else const.co_name)
        yield const, name
        is_function = const.co_flags & 0x3  # CO_OPTIMIZED | CO_NEWLOCALS; a class body has neither
        yield from code_tree(const, name + ".<locals>" if is_function else name)


class Traced:
    """What sonde's line-level profilers share: the functions to trace,
    given as a decorator (@profiler), with add_function(), or both, then
    enable()/disable() or `with profiler:`; a decorated function turns the
    profiler on while it runs."""

    def __init__(self, tracer, functions, nested=True):
        self._tracer = tracer
        self._depth = 0
        # Lambdas and comprehensions are traced too, counted on their
        # function's lines (nested=False: not traced).
        self._nested = nested
        for f in functions:
            self.add_function(f)

    def _code_units(self, code):
        return 0

    def add_code(self, code, qualname=None):
        first, last = line_range(code)
        name = qualname or getattr(code, "co_qualname", code.co_name)
        if not self._tracer.add_code(code, first, last, self._code_units(code), unit_lines(code),
                                     name=name) or not self._nested:
            return
        for inner in nested_codes(code):
            self._tracer.add_code(inner, first, last, 0, unit_lines(inner), code)

    def add_function(self, func):
        func = getattr(func, "__func__", func)
        code = func.__code__
        self.add_code(code, getattr(func, "__qualname__", code.co_name))
        return func

    def __call__(self, func):
        self.add_function(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self._depth += 1
            if self._depth == 1:
                self.enable()
            try:
                return func(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.disable()

        return wrapper

    def document(self):
        """The JSON document `sonde lines -o` (or `sonde mem -o`) writes, as
        bytes: written in C, by the writer the command line uses."""
        return self._tracer.document(source_line, instructions)

    def dump_json(self, path):
        write_file(path, self.document())

    def enable(self):
        self._tracer.enable()

    def disable(self):
        self._tracer.disable()

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.disable()


class LineProfiler(LineProfilerAPI, Traced):
    """Exact hits and time per line of the functions given to it (see
    Traced), with line_profiler's API (_line_api.py): print_stats() prints
    line_profiler's table, get_stats() returns its LineStats."""

    def __init__(self, *functions, bytecode=False):
        self._bytecode = bytecode
        super().__init__(LineTracer(), functions)

    def _code_units(self, code):
        return len(code.co_code) // 2 if self._bytecode else 0

    def results(self):
        """[{file, name, first_line, total_ns, lines: [{line, hits, iterations, time_ns, source}],
        and with bytecode: instructions: [{offset, opname, arg, line, hits, time_ns}]}]:
        the functions of the document dump_json() writes."""
        return json.loads(self.document())["functions"]


def select(tracer, script_code, script_source, patterns, with_module=False,
           module_names=("__main__",)):
    """Registers the script's functions with tracer (a Traced): those
    matching -f patterns, else (when the script has no @profile) all of
    them, and with_module: its top-level code too.  module_names: what a
    pattern may call the script's module (-m's module also answers to its
    own name).  Returns the patterns still unmatched."""
    uses_decorator = any(line.lstrip().startswith("@profile") for line in script_source.splitlines())
    unmatched = set(patterns)
    for code, qualname in code_tree(script_code):
        if patterns:
            hit = [p for name in module_names for p in _pattern_hits(patterns, name, qualname)]
            if hit:
                tracer.add_code(code, qualname)
                unmatched -= set(hit)
        elif not uses_decorator:
            tracer.add_code(code, qualname)
    if with_module and script_source and not patterns and not uses_decorator:
        tracer.add_code(script_code, "<module>")
    return unmatched


def _qualname_patterns(pattern, module_name):
    """What a -f pattern asks of the functions of the module module_name,
    as qualified-name patterns (none: it names another module).
    `module:qualname` names that module's; a bare pattern names a function
    of any module; kernprof's dotted `package.module.Class.method` also
    names `Class.method` of `package.module`."""
    module, colon, qualname = pattern.rpartition(":")
    if colon:
        return [qualname] if module == module_name else []
    prefix = module_name + "."
    return [pattern] + ([pattern[len(prefix):]] if pattern.startswith(prefix) else [])


def _pattern_hits(patterns, module_name, qualname):
    """The -f patterns that name qualname of the module module_name."""
    return [p for p in patterns
            if any(fnmatch.fnmatchcase(qualname, q) for q in _qualname_patterns(p, module_name))]


def _module_members(module):
    """(dotted name, object) of what a module defines at its top level and
    in its classes (nested classes included), as its namespace shows them."""
    name = getattr(module, "__name__", None)
    todo = [("", vars(module))]
    seen = set()
    while todo:
        prefix, space = todo.pop()
        for key, obj in list(space.items()):
            if not isinstance(key, str):
                continue
            yield prefix + key, obj
            if (isinstance(obj, type) and id(obj) not in seen
                    and getattr(obj, "__module__", None) == name):
                seen.add(id(obj))
                todo.append((prefix + key + ".", vars(obj)))


def _python_functions(obj):
    """The Python functions behind a namespace member: a function, a static
    or class method, a property's accessors, and what decorators made with
    functools.wraps (lru_cache's included) wrap."""
    found = []
    for _ in range(8):  # a chain of __wrapped__, bounded
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            found += [f for f in (obj.fget, obj.fset, obj.fdel)
                      if isinstance(f, types.FunctionType)]
        elif isinstance(obj, types.FunctionType):
            found.append(obj)
        try:
            obj = obj.__dict__["__wrapped__"]
        except (AttributeError, KeyError, TypeError):
            break
    return found


def _qualname(func):
    """The qualified name of a function's code (a wrapper that took the
    name of what it wraps answers its own), or None."""
    code = func.__code__
    qualname = getattr(code, "co_qualname", None)  # 3.11+
    if qualname is None:
        qualname = func.__qualname__
        if not isinstance(qualname, str) or qualname.rpartition(".")[2] != code.co_name:
            return None
    return qualname


_STDLIB = os.path.dirname(os.__file__) + os.sep


def in_stdlib(filename):
    """Whether a module's file is the standard library's (frozen included)."""
    return (not filename or filename.startswith("<frozen") or
            (filename.startswith(_STDLIB) and "-packages" + os.sep not in filename))


def select_imported(tracer, patterns, unmatched, modules, not_stdlib=()):
    """Registers with tracer the functions that -f patterns name in modules
    already imported (modules: name -> module, sonde's own and __main__ left
    out: select chooses the program's), as LaterImportsFinder does for the
    modules imported later, so that a function is found whoever imported
    its module first.  Removes the patterns that matched from unmatched.
    not_stdlib: patterns that look at no module of the standard library."""
    for module_name, module in list(modules.items()):
        if (module_name in ("sonde", "__main__") or module_name.startswith("sonde.")
                or not isinstance(module, types.ModuleType)):
            continue
        stdlib = in_stdlib(getattr(module, "__file__", None))
        wanted = [p for p in patterns if _qualname_patterns(p, module_name)
                  and not (stdlib and p in not_stdlib)]
        if not wanted:
            continue
        for _, member in _module_members(module):
            for func in _python_functions(member):
                if getattr(func, "__module__", None) != module_name:
                    continue  # imported from elsewhere: found in its own module
                code, qualname = func.__code__, _qualname(func)
                if qualname is None:
                    continue
                hit = _pattern_hits(wanted, module_name, qualname)
                if hit:
                    tracer.add_code(code, qualname)
                    unmatched -= set(hit)
                for inner, inner_name in code_tree(code, qualname + ".<locals>"):
                    hit = _pattern_hits(wanted, module_name, inner_name)
                    if hit:
                        tracer.add_code(inner, inner_name)
                        unmatched -= set(hit)


def names_matching(pattern, names):
    """The qualified names among names that a -f pattern names (whatever
    module it says; a dotted pattern's every possible module)."""
    module, colon, qualname = pattern.rpartition(":")
    parts = pattern.split(".")
    wanted = [qualname] if colon else [".".join(parts[k:]) for k in range(len(parts))]
    return [name for name in names if any(fnmatch.fnmatchcase(name, q) for q in wanted)]


def compiled_code(pattern, modules, main_namespace):
    """What a -f pattern that matched no Python function names when it is
    compiled code (a builtin, a C extension's, Cython's or mypyc's
    function): "a builtin_function_or_method of _heapq", else None."""
    module_name, colon, qualname = pattern.rpartition(":")
    if not colon and "." in pattern:  # kernprof's package.module.function
        parts = pattern.split(".")
        for k in range(len(parts) - 1, 0, -1):
            if ".".join(parts[:k]) in modules:
                return compiled_code(".".join(parts[:k]) + ":" + ".".join(parts[k:]), modules,
                                     main_namespace)
    space = modules.get(module_name) if module_name else None
    if module_name and not isinstance(space, types.ModuleType):
        return None
    members = (_module_members(space) if space is not None
               else ((key, obj) for key, obj in list(main_namespace.items())
                     if isinstance(key, str)))
    for dotted, obj in members:
        if (fnmatch.fnmatchcase(dotted, qualname) and callable(obj)
                and not isinstance(obj, type) and not _python_functions(obj)):
            where = getattr(obj, "__module__", None) or module_name
            return "a %s%s" % (type(obj).__name__, " of %s" % where if where else "")
    return None


class LaterImportsFinder:
    """Registers functions of modules imported later that -f patterns name
    (module:qualname, or a bare qualname pattern for any module)."""

    def __init__(self, tracer, patterns, unmatched, not_stdlib=()):
        self.tracer, self.patterns, self.unmatched = tracer, patterns, unmatched
        self.not_stdlib = not_stdlib  # as select_imported's

    def find_spec(self, name, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        stdlib = in_stdlib(spec.origin)
        wanted = [p for p in self.patterns if _qualname_patterns(p, name)
                  and not (stdlib and p in self.not_stdlib)]
        if not wanted:
            return None
        loader, watcher = spec.loader, self

        class Loader(type(loader)):
            def exec_module(self, module):
                code = loader.get_code(name)
                for inner, qualname in code_tree(code):
                    hit = _pattern_hits(wanted, name, qualname)
                    if hit:
                        watcher.tracer.add_code(inner, qualname)
                        watcher.unmatched -= set(hit)
                exec(code, module.__dict__)

        spec.loader = Loader(loader.name, loader.path)
        return spec
