"""Builds sonde's C extension for `pip install .` (metadata: pyproject.toml).

The extension holds the whole engine -- core model, writers, tracer and the
command line itself -- compiled from the same sources as `make` (with sonde
view's script and style sheet embedded from src/view/).  Beside it
goes libsonde_alloc.so, the C allocator shim `sonde mem` preloads (no
Python in it, so it is built as a plain shared library).
"""

import os
import runpy
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Every C file of the engine: all of src/ but the standalone command's
# main(), the developers' generators under tools/, the shim, and native
# frames (src/sampler/native: not wired into a command yet; it needs libdw).
sources = sorted(
    f for f in glob("src/**/*.c", recursive=True)
    if f != "src/cli/main.c" and "/tools/" not in f and not f.startswith("src/shim/")
    and not f.startswith("src/sampler/native/")
)


# sonde view's script and style sheet, embedded as C strings (as make does).
VIEW_ASSETS = os.path.join("build", "gen", "view_assets.c")
runpy.run_path(os.path.join("src", "view", "tools", "embed_assets.py"))["main"](VIEW_ASSETS)
sources.append(VIEW_ASSETS)


class BuildWithShim(build_ext):
    def run(self):
        super().run()
        objects = self.compiler.compile(["src/shim/alloc_shim.c"], output_dir=self.build_temp,
                                        macros=[("_GNU_SOURCE", "1")],
                                        extra_postargs=["-std=c11", "-fPIC",
                                                        "-fvisibility=hidden"])
        target = os.path.join(self.build_lib, "sonde", "libsonde_alloc.so")
        self.compiler.link_shared_object(objects, target, libraries=["dl"])


setup(
    cmdclass={"build_ext": BuildWithShim},
    ext_modules=[
        Extension(
            "sonde._sonde",
            sources=sources,
            define_macros=[("_GNU_SOURCE", "1")],
            include_dirs=["src"],
            extra_compile_args=["-std=c11", "-fvisibility=hidden"],
            libraries=["m"],
        )
    ],
)
