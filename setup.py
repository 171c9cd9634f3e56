"""Builds sonde's C extension for `pip install .` (metadata: pyproject.toml).

The extension holds the whole engine -- core model, writers, tracer and the
command line itself -- compiled from the same sources as `make`.
"""

from glob import glob

from setuptools import Extension, setup

sources = sorted(
    glob("src/core/*.c") + glob("src/formats/*.c") + glob("src/ext/*.c")
    + glob("src/sampler/*.c") + glob("src/sampler/proc/*.c") + glob("src/sampler/python/*.c")
    + [f for f in glob("src/cli/*.c") if not f.endswith("/main.c")]
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
