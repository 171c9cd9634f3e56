"""IPython's %sonde and %%sonde, %sonde_timeit and %%sonde_timeit
(`%load_ext sonde`).

%sonde run|lines|mem|timeit STMT (and %%sonde [run|lines|mem|timeit] over
a cell) profile code in the notebook's own namespace with the in-process
API: `run` prints the table `sonde run` prints and shows the page `sonde
view` draws of that profile (inline in a notebook; in a terminal, where it
was written), `lines` the hits and times per line of the -f functions as
`sonde lines` (and %lprun), `mem` the memory per line as `sonde mem` (and
%mprun), with %memit's peak and increment.

%sonde_timeit (or %sonde timeit) times a statement, %%sonde_timeit a
cell (its first line, after the options, is the setup, as %%timeit takes
it), in the notebook's own namespace: the objects a notebook defines
cannot travel to fresh processes, so the values come from the kernel's
process (the warnings say so) while calibration, warmups, the statistics
and the line are those of `sonde timeit`.  -o returns the result
object, as %timeit -o does.
"""

import os
import sys
import tempfile

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from . import _timeit

_OPTIONS = "n:r:o"  # -n LOOPS, -r RUNS (values per round), -o: return the result
_FLAGS = ("fast", "rigorous")


def _count(opts, key, name, low, high):
    """The count option -key as an int in [low, high], else 0 when absent."""
    if key not in opts:
        return 0
    try:
        value = int(opts[key])
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise UsageError("%%sonde_timeit: -%s takes a number of %s from %d to %d, not '%s'"
                         % (key, name, low, high, opts[key]))
    return value


@magics_class
class SondeMagics(Magics):
    @line_cell_magic
    def sonde_timeit(self, line, cell=None):
        """Time a statement as `sonde timeit` does, in this namespace:

          %sonde_timeit [-n LOOPS] [-r RUNS] [--fast|--rigorous] [-o] STMT
          %%sonde_timeit [options] [SETUP]
          CELL

        Prints sonde timeit's line (mean +- std. dev., median, the 95%
        interval, the empty loop) and its warnings; -o returns the result
        (.mean, .ci, .values ...)."""
        opts, rest = self.parse_options(line, _OPTIONS, *_FLAGS, posix=False, strict=False)
        if "fast" in opts and "rigorous" in opts:
            raise UsageError("%sonde_timeit: --fast or --rigorous, not both")
        if cell is None:
            stmt, setup = rest, "pass"
        else:
            stmt, setup = cell, rest or "pass"
        if not stmt.strip():
            raise UsageError("%sonde_timeit: which statement? give one after the options")
        transform = self.shell.transform_cell
        mode = "fast" if "fast" in opts else "rigorous" if "rigorous" in opts else "default"
        try:
            result = _timeit.timeit(transform(stmt), transform(setup), self.shell.user_ns,
                                    mode=mode, number=_count(opts, "n", "loops", 1, 10 ** 12),
                                    repeat=_count(opts, "r", "values", 1, 1000))
        except _timeit.TimeitError as e:
            if e.detail:
                sys.stderr.write(e.detail if e.detail.endswith("\n") else e.detail + "\n")
            sys.stderr.write("sonde timeit: %s\n" % e.message)
            return None
        print(result.line())
        for w in result.warnings:
            sys.stderr.write("warning: %s\n" % w)
        return result if "o" in opts else None

    # ------------------------------------------------------------ %sonde

    @line_cell_magic
    def sonde(self, line, cell=None):
        """Profile a statement (or the cell) in this namespace, as sonde's
        commands do:

          %sonde run [-s KEY] [-l N] [-o FILE] [-r] STMT   the call table, and the page
          %%sonde [run] [options]                          the same, over the cell
          %sonde lines -f FUNC [-f FUNC]... [-r] STMT      hits and time per line of FUNC
          %%sonde lines [-f FUNC]...                       (none: the cell's own code)
          %sonde mem [-f FUNC]... [-r] STMT                memory per line, peak and increment
          %%sonde mem [-f FUNC]...                         (the cell's own code, and FUNC)
          %sonde timeit ...                                as %sonde_timeit

        -s sorts the table (cumtime, tottime, ncalls, pcalls, name, file,
        line), -l keeps N rows (0: all; default 30), -o writes the profile
        (.json: sonde's JSON, else pstats), -r returns the profiler."""
        words = line.strip().split(None, 1)
        sub, rest = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
        if cell is not None and (not sub or sub.startswith("-")):
            sub, rest = "run", line
        if sub not in _SUBCOMMANDS:
            raise UsageError("%%sonde: %s; usage: %s"
                             % ("which subcommand?" if not sub else "unknown subcommand '%s'" % sub,
                                _USAGE))
        if sub == "timeit":
            return self.sonde_timeit(rest, cell)
        name = ("%%%%sonde %s" if cell is not None else "%%sonde %s") % sub
        spec = {"run": "s:l:o:r", "lines": "f:r", "mem": "f:r"}[sub]
        opts, stmt = self.parse_options(rest, spec, posix=False, strict=False, list_all=True)
        if cell is not None:
            if stmt.strip():
                raise UsageError("%s: the cell is the code to profile; after the options "
                                 "nothing may follow on the magic's line (got '%s')"
                                 % (name, stmt.strip()))
            stmt = cell
        if not stmt.strip():
            raise UsageError("%s: which statement? give one after the options" % name)
        return getattr(self, "_sonde_" + sub)(name, opts, stmt, cell is not None)

    def _compile(self, name, source):
        """The code object of source (IPython's syntax transformed), under
        the name IPython caches it by, so its lines show in the tables."""
        transformed = self.shell.transform_cell(source)
        filename = self.shell.compile.cache(transformed, self.shell.execution_count, source)
        try:
            return compile(transformed, filename, "exec", self.shell.compile.flags, True)
        except (SyntaxError, ValueError) as e:
            where = " (line %d)" % e.lineno if getattr(e, "lineno", None) else ""
            raise UsageError("%s: the code is not valid Python: %s%s"
                             % (name, getattr(e, "msg", None) or e, where)) from None

    def _execute(self, name, profiler, code):
        """Runs code in the user's namespace with profiler on.  The user's
        exception prints its traceback, then one line; returns whether the
        code ran to its end."""
        ns = self.shell.user_ns  # a property: read before recording
        try:
            profiler.enable()
        except RuntimeError as e:
            raise UsageError("%s: %s" % (name, e)) from None
        try:
            exec(code, ns, ns)
        except Exception as e:
            profiler.disable()
            tb = e.__traceback__
            self.shell.showtraceback((type(e), e, tb.tb_next or tb))  # from the user's code on
            sys.stderr.write("%s: the code raised %s (traceback above); the profile of what ran "
                             "follows\n" % (name, type(e).__name__))
            return False
        finally:
            profiler.disable()
        return True

    def _functions(self, name, exprs):
        """The Python functions that -f expressions name in this namespace."""
        found = []
        for expr in exprs:
            try:
                obj = eval(expr, self.shell.user_ns)
            except Exception as e:
                raise UsageError("%s: -f %s names nothing here (%s: %s)"
                                 % (name, expr, type(e).__name__, e)) from None
            funcs = _python_functions_of(obj)
            if not funcs:
                raise UsageError("%s: -f %s is %s, not a Python function: it has no lines to count"
                                 % (name, expr, "a " + type(obj).__name__))
            found += funcs
        return found

    def _page_dir(self):
        if getattr(self, "_pages", None) is None:
            self._pages = tempfile.mkdtemp(prefix="sonde-ipython-")
            self._page_count = 0
        self._page_count += 1
        return os.path.join(self._pages, "profile-%d" % self._page_count)

    def _sonde_run(self, name, opts, stmt, is_cell):
        from . import Profile
        sort = _last(opts, "s") or "cumtime"
        if sort not in _SORT_KEYS:
            raise UsageError("%s: -s takes one of %s, not '%s'" % (name, ", ".join(_SORT_KEYS[:7]), sort))
        limit = _last(opts, "l")
        try:
            limit = 30 if limit is None else int(limit)
        except ValueError:
            limit = -1
        if limit < 0:
            raise UsageError("%s: -l takes a number of rows (0: all), not '%s'"
                             % (name, _last(opts, "l")))
        code = self._compile(name, stmt)
        prof = Profile()
        self._execute(name, prof, code)
        sys.stdout.write(prof.table(sort=sort, limit=limit))
        out = _last(opts, "o")
        if out:
            try:
                prof.write(out, "json" if out.endswith(".json") else "pstats")
            except (OSError, ValueError) as e:
                sys.stderr.write("%s: could not write %s: %s\n" % (name, out, e))
            else:
                print("profile: %s" % out)
        self._show_page(name, prof)
        return prof if "r" in opts else None

    def _show_page(self, name, prof):
        """The page sonde view draws of prof: inline in a notebook (an
        iframe holding it), else where it was written."""
        base = self._page_dir()
        try:
            prof.write(base + ".json", "json")
        except (OSError, ValueError) as e:
            sys.stderr.write("%s: no page: could not write %s.json: %s\n" % (name, base, e))
            return
        rc, message = _view(base + ".json", base + ".html")
        if rc != 0:
            sys.stderr.write("%s: no page: %s\n" % (name, message.splitlines()[-1] if message
                                                    else "sonde view failed"))
            return
        if getattr(self.shell, "kernel", None) is None:
            print("page: %s" % (base + ".html"))
            return
        import html
        from IPython.display import display
        with open(base + ".html", encoding="utf-8") as f:
            page = f.read()
        display({"text/html": '<iframe srcdoc="%s" style="width:100%%;height:640px;border:1px solid '
                              '#ccc" title="sonde profile"></iframe>' % html.escape(page, quote=True),
                 "text/plain": "page: %s" % (base + ".html")}, raw=True)

    def _sonde_lines(self, name, opts, stmt, is_cell):
        from ._lines import LineProfiler, code_tree
        functions = self._functions(name, _all(opts, "f"))
        if not functions and not is_cell:
            raise UsageError("%s: which function? name it with -f FUNC (as %%lprun -f)" % name)
        code = self._compile(name, stmt)
        prof = LineProfiler(*functions)
        if not functions:  # the cell's own code: its top level and its functions
            prof.add_code(code, "<module>")
            for inner, qualname in code_tree(code):
                prof.add_code(inner, qualname)
        self._execute(name, prof, code)
        prof.print_stats()
        return prof if "r" in opts else None

    def _sonde_mem(self, name, opts, stmt, is_cell):
        from ._lines import code_tree
        from ._mem import MemoryProfiler
        functions = self._functions(name, _all(opts, "f"))
        code = self._compile(name, stmt)
        prof = MemoryProfiler(*functions)
        prof.add_code(code, "<module>")
        if is_cell:
            for inner, qualname in code_tree(code):
                prof.add_code(inner, qualname)
        before = _rss_bytes()
        self._execute(name, prof, code)
        after = _rss_bytes()
        prof.print_stats()
        doc = prof.results()
        peak = max(doc.get("timeline", {}).get("rss_bytes", []) + [before, after])
        print("peak memory: %.2f MiB, increment: %.2f MiB (RSS, as %%memit); heap peak %.2f MiB"
              % (peak / _MiB, (peak - before) / _MiB, doc.get("heap_peak_bytes", 0) / _MiB))
        return prof if "r" in opts else None


_SUBCOMMANDS = ("run", "lines", "mem", "timeit")
_USAGE = "%sonde run|lines|mem|timeit [options] STMT, or %%sonde [run|lines|mem|timeit] [options] over a cell"
_SORT_KEYS = ("cumtime", "tottime", "ncalls", "pcalls", "name", "file", "line",
              "cumulative", "time", "calls", "filename")
_MiB = 1024.0 * 1024.0


def _last(opts, key):
    value = opts.get(key)
    return value[-1] if isinstance(value, list) else value


def _all(opts, key):
    value = opts.get(key, [])
    return value if isinstance(value, list) else [value]


def _rss_bytes():
    """This process's resident set, from /proc/self/statm (0 if unreadable)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _view(profile_path, html_path):
    """`sonde view PROFILE -o HTML` in this process; its message (on
    descriptor 2, written by C) is taken, not left on the kernel's stderr.
    Returns (exit status, message)."""
    from . import _sonde
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.stderr.flush()
    with tempfile.TemporaryFile() as err:
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            rc = _sonde.main(["sonde", "view", profile_path, "-o", html_path],
                             sys.executable or "", package_dir)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        message = err.read().decode("utf-8", "replace").strip()
    return rc, message


def _python_functions_of(obj):
    """The Python functions an -f expression's value names: a function or
    method (wrapped ones too), a property's accessors, a class's methods."""
    from ._lines import _python_functions
    if isinstance(obj, type):
        found = []
        for member in vars(obj).values():
            found += _python_functions(member)
        return found
    return _python_functions(getattr(obj, "__func__", obj))


def load(ipython):
    try:
        from . import _sonde  # noqa: F401  (import sonde alone survives its absence)
    except ImportError as e:
        raise UsageError("sonde: its C extension is not built for this kernel's Python %d.%d (%s): "
                         "install sonde into this kernel's environment or build it with "
                         "`make PYTHON=%s` (%s)"
                         % (sys.version_info[0], sys.version_info[1], sys.executable,
                            sys.executable, str(e).splitlines()[0] if str(e) else type(e).__name__)
                         ) from None
    ipython.register_magics(SondeMagics)
