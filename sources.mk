# sources.mk - which C files make each thing sonde builds.
#
# Read by the Makefile and by setup.py (pip install), so that both builds
# take the same files by the same rule: X_SOURCES names folders and files;
# X is every .c file under those folders, subfolders included, and the
# files named, less those under a tools/ folder (developers' generators)
# and the files and folders in X_EXCLUDE.  A file moved between folders or a new subfolder
# needs no change here; tests/python/test_pip_install.py checks that every
# C file under src/ goes into exactly one of them and that both builds
# list the same files.  X_LDLIBS are the libraries X links with.
#
# Plain "NAME := words" lines only: setup.py reads them without make.

# libsonde: the engine, linked into the command and the extension alike:
# the profile model, the memory accounting, the file formats, the reports
# and the page, the external sampler and the subcommands (python3 -m sonde
# runs them through the extension).
LIBSONDE_SOURCES := src/core src/mem src/formats src/report src/page src/sampler src/cli
LIBSONDE_EXCLUDE := src/cli/main.c src/sampler/native
# No -dev package: zlib (pprof files are gzipped) is loaded at run time
# (src/formats/gzip.c), hence -ldl for glibc before 2.34.
LIBSONDE_LDLIBS := -lm -ldl

# The sonde command: its main(), linked with libsonde.  (What only the
# command links goes here and in LIBSONDE_EXCLUDE, its libraries in
# COMMAND_LDLIBS.)
#
# Native frames (src/sampler/native, record/dump/top --native) are the
# command's only: they demangle C++ names with libstdc++ and read DWARF
# line tables through elfutils' libdw, loaded at run time
# (src/sampler/native/libdw_dl.c: no libdw-dev needed to build, and
# without libdw.so.1 frames lose only file:line).  python3 -m sonde
# answers --native with one line naming the sonde command.
COMMAND_SOURCES := src/cli/main.c src/sampler/native
COMMAND_LDLIBS := -lstdc++

# The _sonde extension's own files (built with Python.h, once per
# interpreter), linked with libsonde.
EXTENSION_SOURCES := src/ext
# -lrt: timer_create (src/ext/signals), in librt before glibc 2.34.
EXTENSION_LDLIBS := -lrt

# The C allocator shim sonde mem preloads (no Python in it: one for all).
SHIM_SOURCES := src/shim
SHIM_LDLIBS := -ldl
