"""Builds sonde's C extension for `pip install .` (metadata: pyproject.toml).

The extension holds libsonde -- the profile model, the memory accounting,
the formats, reports and page, the sampler and the command line itself --
and the extension's own files, taken from sources.mk by the rule the
Makefile follows (every .c under the folders named, less tools/ folders
and the files and folders excluded), with sonde view's script and style
sheet embedded from src/page/.  Beside it goes
libsonde_alloc.so, the C allocator shim `sonde mem` preloads (no Python in
it, so it is built as a plain shared library).  And the sonde command
itself (build/bin/sonde's program: its main() and native frames, linked
with the extension's libsonde objects) goes in the scripts: `sonde` on
PATH is the C command, --native included, as from a wheel of make wheels
(packaging/make_wheel.py); pip copies a binary script as it is.
"""

import os
import runpy
from glob import glob

HERE = os.path.dirname(os.path.abspath(__file__))


def read_sources_mk(path=os.path.join(HERE, "sources.mk")):
    """sources.mk's "NAME := words" lines, as {NAME: [words]}."""
    values = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0]
            if ":=" in line:
                name, _, words = line.partition(":=")
                values[name.strip()] = words.split()
    return values


def artifact_sources(root=HERE):
    """{"libsonde": [...], "command": [...], "extension": [...], "shim": [...]}:
    each artifact's C files, relative to root, sorted, by sources.mk's rule."""
    mk = read_sources_mk(os.path.join(root, "sources.mk"))
    found = {}
    for name in ("libsonde", "command", "extension", "shim"):
        key = name.upper()
        excluded = set(mk.get(key + "_EXCLUDE", []))
        files = set()
        for path in mk.get(key + "_SOURCES", []):
            if path.endswith(".c"):
                files.add(path)
            else:
                base = os.path.join(root, path)
                files.update(os.path.relpath(f, root)
                             for f in glob(os.path.join(base, "**", "*.c"), recursive=True))
        found[name] = sorted(f for f in files if "/tools/" not in "/" + f and
                             not any(f == e or f.startswith(e + "/") for e in excluded))
    return found


def project_version(path=os.path.join(HERE, "pyproject.toml")):
    """pyproject.toml's version: its one home (the Makefile reads it too)."""
    with open(path) as f:
        for line in f:
            if line.startswith("version = "):
                return line.split('"')[1]
    raise SystemExit("setup.py: pyproject.toml names no version")


def libraries(*names):
    """The -lNAME words of sources.mk's X_LDLIBS, as setuptools takes them."""
    mk = read_sources_mk()
    return [w[2:] for n in names for w in mk.get(n + "_LDLIBS", []) if w.startswith("-l")]


def main():
    from setuptools import Extension, setup
    from setuptools.command.build_ext import build_ext
    from distutils.command.build_scripts import build_scripts  # setuptools provides it

    sources = artifact_sources()
    # sonde view's script and style sheet, embedded as C strings (as make does).
    view_assets = os.path.join("build", "gen", "view_assets.c")
    runpy.run_path(os.path.join("src", "page", "tools", "embed_assets.py"))["main"](view_assets)

    class BuildWithShim(build_ext):
        def run(self):
            super().run()
            objects = self.compiler.compile(sources["shim"], output_dir=self.build_temp,
                                            macros=[("_GNU_SOURCE", "1")],
                                            extra_postargs=["-std=c11", "-fPIC",
                                                            "-fvisibility=hidden"])
            target = os.path.join(self.build_lib, "sonde", "libsonde_alloc.so")
            self.compiler.link_shared_object(objects, target, libraries=libraries("SHIM"))
            # The command: its own files, and libsonde's objects the extension
            # was linked with (compiled once).
            objects = self.compiler.compile(sources["command"], output_dir=self.build_temp,
                                            macros=[("_GNU_SOURCE", "1")], include_dirs=["src"],
                                            extra_postargs=["-std=c11", "-fvisibility=hidden"])
            objects += self.compiler.object_filenames(sources["libsonde"] + [view_assets],
                                                      output_dir=self.build_temp)
            self.command_path = os.path.join(self.build_temp, "command", "sonde")
            self.compiler.link_executable(objects, self.command_path,
                                          libraries=libraries("COMMAND", "LIBSONDE"))

    class BuildCommand(build_scripts):
        """The scripts: the C command build_ext linked."""
        def get_source_files(self):
            return []

        def run(self):
            self.run_command("build_ext")
            built = self.get_finalized_command("build_ext").command_path
            self.mkpath(self.build_dir)
            self.copy_file(built, os.path.join(self.build_dir, "sonde"))

    setup(
        # One script, `sonde`: BuildCommand makes it (the name is all
        # setuptools reads here; installs run build_scripts when it is set).
        scripts=["sonde"],
        cmdclass={"build_ext": BuildWithShim, "build_scripts": BuildCommand},
        ext_modules=[
            Extension(
                "sonde._sonde",
                sources=sources["libsonde"] + [view_assets] + sources["extension"],
                define_macros=[("_GNU_SOURCE", "1"), ("SONDE_VERSION", '"%s"' % project_version())],
                include_dirs=["src"],
                extra_compile_args=["-std=c11", "-fvisibility=hidden"],
                libraries=libraries("LIBSONDE", "EXTENSION"),
            )
        ],
    )


if __name__ == "__main__":
    main()
