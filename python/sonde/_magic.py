"""IPython's %sonde_timeit and %%sonde_timeit (`%load_ext sonde`).

The line magic times a statement, the cell magic a cell (its first line,
after the options, is the setup, as %%timeit takes it), in the notebook's
own namespace: the objects a notebook defines cannot travel to fresh
processes, so the values come from the kernel's process (the warnings say
so) while calibration, warmups, the statistics and the line are those of
`sonde timeit`.  -o returns the result object, as %timeit -o does.
"""

import sys

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


def load(ipython):
    ipython.register_magics(SondeMagics)
