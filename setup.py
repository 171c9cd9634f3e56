"""Builds sonde's C extension for `pip install .` (metadata: pyproject.toml).

The extension holds the whole engine -- core model, writers, tracer and the
command line itself -- compiled from the same sources as `make`.
"""

from glob import glob

from setuptools import Extension, setup

# Every C file of the engine: all of src/ but the standalone command's
# main() and the developers' generators under tools/.
sources = sorted(
    f for f in glob("src/**/*.c", recursive=True)
    if f != "src/cli/main.c" and "/tools/" not in f
)

setup(
    ext_modules=[
        Extension(
            "sonde._sonde",
            sources=sources,
            define_macros=[("_GNU_SOURCE", "1")],
            extra_compile_args=["-std=c11", "-fvisibility=hidden"],
        )
    ]
)
