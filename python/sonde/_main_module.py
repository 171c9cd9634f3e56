"""The module `python -m NAME` runs as __main__, found before it runs.

sonde lines and sonde mem choose the functions to trace from the code that
runs.  For a script that is the code the launcher compiles; for -m, runpy
finds and compiles the module only once the program has started, and its
functions' code objects are new ones.  find() reads the module's code first
(without importing the package it is in, as runpy has not yet), and
MainModule.serve() hands runpy that same code object, so the functions
chosen in it are the ones that run as __main__.
"""

import importlib.machinery
import importlib.util
import sys


class MainModule:
    """What -m runs: its module name (NAME, or NAME.__main__ for a
    package), its spec, its code and its source."""

    def __init__(self, name, spec, code, source):
        self.name, self.spec, self.code, self.source = name, spec, code, source

    def serve(self):
        """Makes runpy's lookup of the module answer self.spec, whose
        loader gives self.code once; both steps then take themselves off
        (the program finds the import system and the loader as a bare run
        leaves them)."""
        sys.meta_path.insert(0, _OneLookup(self))


class _OneLookup:
    """A finder on sys.meta_path for one lookup of one module name."""

    def __init__(self, main):
        self.main = main

    def find_spec(self, name, path, target=None):
        if name != self.main.name:
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:  # the program took it off itself
            pass
        loader, code = self.main.spec.loader, self.main.code

        def get_code(fullname):
            del loader.get_code  # the loader's own method again
            return code if fullname == self.main.name else loader.get_code(fullname)

        loader.get_code = get_code
        return self.main.spec


def find(name):
    """The MainModule that `python -m name` runs, or None when it is not
    Python source read from a file (runpy then runs what it finds, and says
    what is wrong with it as a bare run does)."""
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            name += ".__main__"
            spec = importlib.machinery.PathFinder.find_spec(name, spec.submodule_search_locations)
        loader = spec.loader if spec is not None else None
        if not isinstance(loader, importlib.machinery.SourceFileLoader):
            return None
        return MainModule(name, spec, loader.get_code(name), loader.get_source(name))
    except (ImportError, SyntaxError, ValueError, OSError):
        return None
