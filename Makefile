# sonde - build, test and demo.
#
#   make                      build/bin/sonde and the extension for $(PYTHON)
#   make PYTHON=python3.X     add the extension for another interpreter
#   make test                 build for every interpreter here, run all tests
#   make demo                 profile examples/julia.py and show what it wrote
#   make test-asan            C tests, the command (with the hostile-program tests)
#                             and the extension under ASan/UBSan
#   make test-valgrind        C tests, fuzzers and the command under valgrind
#   make test-repeat N=5      page, sampler, native, record-message and timeit tests N times under
#                             a load on every CPU: no failure, no skip for load
#   make bench                sonde against cProfile, yappi, pyinstrument
#   make bench-sampler        sonde record against py-spy and austin
#   make bench-lines          sonde.LineProfiler against line_profiler
#   make bench-mem            sonde mem against memory_profiler, memray, Scalene
#   make bench-native         the stop and cost of a native stack sample, per method;
#                             record --native against py-spy --native on numpy
#   make bench-timeit         sonde timeit against pyperf timeit and stdlib timeit
#   make docs                 the documentation site (build/docs/site, strict) and the
#                             man pages (build/man), from docs/ and the option tables
#   make install PREFIX=...   install the command, its man pages and the Python package

PYTHON ?= python3
PREFIX ?= /usr/local
CC ?= cc
BUILD ?= build

# The version's one home is pyproject.toml (setup.py and make_wheel.py read it too).
SONDE_VERSION := $(shell sed -n 's/^version = "\([^"]*\)"$$/\1/p' pyproject.toml)
$(if $(SONDE_VERSION),,$(error pyproject.toml names no version (a line 'version = "X.Y.Z"')))

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS ?= -O2 -g
ALL_CFLAGS := $(WARN) -D_GNU_SOURCE -fPIC -fvisibility=hidden $(CFLAGS)

# The sources of each thing built, by the rule sources.mk states (setup.py
# reads it too): every .c under the folders named, less tools/ folders and
# the files and folders excluded.
include sources.mk
sources = $(sort $(filter-out $(2) $(addsuffix /%,$(2)),$(shell find $(1) -name '*.c' -not -path '*/tools/*')))
LIBSONDE_SRC := $(call sources,$(LIBSONDE_SOURCES),$(LIBSONDE_EXCLUDE))
COMMAND_SRC := $(call sources,$(COMMAND_SOURCES),$(COMMAND_EXCLUDE))
EXTENSION_SRC := $(call sources,$(EXTENSION_SOURCES),$(EXTENSION_EXCLUDE))
SHIM_SRC := $(call sources,$(SHIM_SOURCES),$(SHIM_EXCLUDE))
HEADERS := $(shell find src -name '*.h')

SHIM := $(BUILD)/python/sonde/libsonde_alloc.so
LIBSONDE_OBJ := $(patsubst src/%.c,$(BUILD)/obj/libsonde/%.o,$(LIBSONDE_SRC)) \
                $(BUILD)/obj/libsonde/gen/view_assets.o
COMMAND_OBJ := $(patsubst src/%.c,$(BUILD)/obj/command/%.o,$(COMMAND_SRC))
PY_FILES := $(wildcard python/sonde/*.py)
PKG := $(BUILD)/python/sonde

# What the interpreter named by PYTHON needs: headers, suffix, version tag.
PY_INFO := $(shell $(PYTHON) -c 'import sysconfig as s, sys; print(s.get_paths()["include"], s.get_config_var("EXT_SUFFIX"), "%d%d" % sys.version_info[:2])' 2>/dev/null)
PY_INCLUDE := $(word 1,$(PY_INFO))
PY_SUFFIX := $(word 2,$(PY_INFO))
PY_TAG := $(word 3,$(PY_INFO))
EXT := $(PKG)/_sonde$(PY_SUFFIX)
EXTENSION_OBJ := $(patsubst src/%.c,$(BUILD)/obj/_sonde-py$(PY_TAG)/%.o,$(EXTENSION_SRC))

.PHONY: all check-python print-sources test test-asan test-valgrind test-repeat demo bench bench-sampler \
        bench-lines bench-mem bench-native bench-timeit install clean docs man
all: $(BUILD)/bin/sonde python-package

check-python:
	@test -n "$(PY_TAG)" || { echo "make: cannot run '$(PYTHON)': set PYTHON=/path/to/python3" >&2; exit 1; }
	@test -f "$(PY_INCLUDE)/Python.h" || { echo "make: Python headers for $(PYTHON) are missing ($(PY_INCLUDE)/Python.h): install them, e.g. 'apt-get install python3-dev'" >&2; exit 1; }

# What each build takes, as sources.mk's rule finds it (setup.py's test
# compares it with its own).
print-sources:
	@echo "libsonde: $(LIBSONDE_SRC)"
	@echo "command: $(COMMAND_SRC)"
	@echo "extension: $(EXTENSION_SRC)"
	@echo "shim: $(SHIM_SRC)"

$(BUILD)/obj/libsonde/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/libsonde/cli/cli.o: ALL_CFLAGS += -DSONDE_VERSION='"$(SONDE_VERSION)"'
$(BUILD)/obj/libsonde/cli/cli.o: pyproject.toml

$(BUILD)/obj/command/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# sonde view's script and style sheet, embedded as C strings.
$(BUILD)/gen/view_assets.c: src/page/viewer.js src/page/viewer.css src/page/tools/embed_assets.py
	$(PYTHON) src/page/tools/embed_assets.py $@

$(BUILD)/obj/libsonde/gen/view_assets.o: $(BUILD)/gen/view_assets.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/obj/_sonde-py$(PY_TAG)/%.o: src/%.c $(HEADERS) | check-python
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(PY_INCLUDE) -c $< -o $@

$(BUILD)/bin/sonde: $(COMMAND_OBJ) $(LIBSONDE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ -o $@ $(COMMAND_LDLIBS) $(LIBSONDE_LDLIBS)

.PHONY: python-package
python-package: $(EXT) $(SHIM) $(patsubst python/sonde/%,$(PKG)/%,$(PY_FILES))

$(EXT): $(EXTENSION_OBJ) $(LIBSONDE_OBJ) | check-python
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared $^ -o $@ $(EXTENSION_LDLIBS) $(LIBSONDE_LDLIBS)

# The C allocator shim sonde mem preloads (no Python in it: one for all).
$(SHIM): $(SHIM_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared $(SHIM_SRC) -o $@ $(SHIM_LDLIBS)

$(PKG)/%.py: python/sonde/%.py
	@mkdir -p $(dir $@)
	cp $< $@

# What the command links beside main() (native frames, sources.mk): the
# C tests and benchmarks link it too.
COMMAND_LIB_OBJ := $(filter-out $(BUILD)/obj/command/cli/main.o,$(COMMAND_OBJ))

# ---- tests ----
# The native tests' programs and libraries: -O2, no frame pointers, -g,
# as distributions build them; the stripped copy keeps .dynsym only.
NATIVE_TEST := $(BUILD)/tests/native
NATIVE_TEST_FLAGS := -O2 -g -fomit-frame-pointer -fPIC -Wall -Werror
NATIVE_TEST_FILES := $(NATIVE_TEST)/libtl.so $(NATIVE_TEST)/libtl_stripped.so \
                     $(NATIVE_TEST)/libtlx.so $(NATIVE_TEST)/testprog $(NATIVE_TEST)/libshare.so \
                     $(NATIVE_TEST)/libnoperf.so
$(NATIVE_TEST)/libtl.so: tests/native/testlib.c
	@mkdir -p $(dir $@)
	cc $(NATIVE_TEST_FLAGS) -shared $< -o $@
$(NATIVE_TEST)/libtl_stripped.so: $(NATIVE_TEST)/libtl.so
	strip --strip-all $< -o $@
$(NATIVE_TEST)/libtlx.so: tests/native/testlib_cxx.cpp
	@mkdir -p $(dir $@)
	c++ $(NATIVE_TEST_FLAGS) -shared $< -o $@
$(NATIVE_TEST)/libshare.so: tests/native/sharelib.c
	@mkdir -p $(dir $@)
	cc $(NATIVE_TEST_FLAGS) -shared -pthread $< -o $@
$(NATIVE_TEST)/libnoperf.so: tests/native/noperf.c
	@mkdir -p $(dir $@)
	cc $(NATIVE_TEST_FLAGS) -shared $< -o $@ -ldl
$(NATIVE_TEST)/testprog: tests/native/testprog.c
	@mkdir -p $(dir $@)
	cc $(NATIVE_TEST_FLAGS) $< -o $@ -ldl

C_TEST_FILES := $(filter-out %_main.c,$(wildcard tests/c/test_*.c))
C_TESTS := $(C_TEST_FILES) tests/c/test_main.c tests/c/fixture.c
# The C tests' one register: every `void test_NAME(void)` the test files
# define, as TEST(test_NAME) lines in file order; test_main.c declares and
# runs them all.
$(BUILD)/gen/c_tests.h: $(C_TEST_FILES) tests/c
	@mkdir -p $(dir $@)
	sed -n 's/^void \(test_[a-z0-9_]*\)(void)$$/TEST(\1)/p' $(C_TEST_FILES) > $@
$(BUILD)/tests/unit: $(C_TESTS) $(wildcard tests/c/*.h) $(BUILD)/gen/c_tests.h $(LIBSONDE_OBJ) \
                     $(COMMAND_LIB_OBJ) $(NATIVE_TEST_FILES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -I$(BUILD)/gen -DSONDE_TEST_NATIVE_DIR='"$(abspath $(NATIVE_TEST))"' \
	  -DSONDE_TEST_NATIVE_SRC='"$(abspath tests/native)"' \
	  $(C_TESTS) $(LIBSONDE_OBJ) $(COMMAND_LIB_OBJ) -o $@ $(COMMAND_LDLIBS) $(LIBSONDE_LDLIBS)

# The fuzzers share a generator and a corpus driver (tests/c/fuzz.c).
FUZZ_COMMON := tests/c/fuzz.c tests/c/fuzz.h
$(BUILD)/tests/fuzz_pstats: tests/c/fuzz_pstats.c $(FUZZ_COMMON) $(LIBSONDE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $(filter-out %.h,$^) -o $@ $(LIBSONDE_LDLIBS)

# The walker's fuzz target: mutated snapshots of real interpreters' memory.
$(BUILD)/tests/fuzz_walker: tests/c/fuzz_walker.c tests/c/snapshot.c tests/c/snapshot.h \
                           $(FUZZ_COMMON) $(LIBSONDE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $(filter-out %.h,$^) -o $@ $(LIBSONDE_LDLIBS)

# The loader (JSON documents, collapsed stacks), fed mutations of files
# sonde and others write (tests/c/corpus).
$(BUILD)/tests/fuzz_json: tests/c/fuzz_json.c $(FUZZ_COMMON) $(LIBSONDE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $(filter-out %.h,$^) -o $@ $(LIBSONDE_LDLIBS)
JSON_CORPUS := $(wildcard tests/c/corpus/*.json tests/c/corpus/*.collapsed)

# The pprof reader, fed mutations of Go's and sonde's pprof files.
$(BUILD)/tests/fuzz_pprof: tests/c/fuzz_pprof.c $(FUZZ_COMMON) $(LIBSONDE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $(filter-out %.h,$^) -o $@ $(LIBSONDE_LDLIBS)
PPROF_CORPUS := $(wildcard tests/c/corpus/*.pb tests/c/corpus/*.pb.gz)

# Every supported CPython (src/core/pyversions.h names them) this machine
# has: pyenv's, the system's /usr/bin/python3, and those of the Debian root
# that tests/sid/make_root.sh makes (3.14, 3.15: .ci/run makes it), each
# run there as a container runs it (build/sid/python3.X).
PY_MINORS := $(shell seq $(shell sed -n 's/^\#define SONDE_PY_FIRST_MINOR //p;s/^\#define SONDE_PY_LAST_MINOR //p' src/core/pyversions.h))
SID_PYTHONS := $(foreach v,$(PY_MINORS),$(wildcard $(BUILD)/sid/python3.$(v)))
PYTHONS := $(foreach v,$(PY_MINORS),$(wildcard $(HOME)/.pyenv/versions/3.$(v).*/bin/python3)) \
           $(wildcard /usr/bin/python3) $(abspath $(SID_PYTHONS))
VENV := $(BUILD)/venv

$(VENV)/.ready: tests/requirements.txt
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r tests/requirements.txt
	touch $@

# A recipe's first step: builds the extension for each interpreter that has
# its headers, and inside the Debian root for its interpreters, and lists
# them in the shell variable `usable`; the others are named, and the
# version-matrix tests report them as skipped.
EXTENSIONS_FOR_TESTS = usable=""; for py in $(filter-out $(abspath $(SID_PYTHONS)),$(PYTHONS)); do \
	  inc=$$($$py -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null); \
	  if [ -f "$$inc/Python.h" ]; then \
	    $(MAKE) --no-print-directory python-package PYTHON=$$py >/dev/null || \
	      { echo "make: extension build failed for $$py" >&2; exit 1; }; \
	    usable="$$usable $$py"; \
	  else echo "note: $$py has no headers (apt-get install python3-dev): its tests are skipped"; fi; \
	done; \
	for py in $(notdir $(SID_PYTHONS)); do \
	  sh tests/sid/python.sh $(BUILD)/sid-root $(MAKE) --no-print-directory BUILD=$(BUILD)/sid-build \
	    PYTHON=$$py PKG=$(BUILD)/python/sonde sid-extension >/dev/null || \
	    { echo "make: extension build failed for $$py in $(BUILD)/sid-root" >&2; exit 1; }; \
	  usable="$$usable $(abspath $(BUILD))/sid/$$py"; \
	done

test: all $(BUILD)/tests/unit $(BUILD)/tests/fuzz_pstats $(BUILD)/tests/fuzz_walker $(BUILD)/tests/fuzz_json \
      $(BUILD)/tests/fuzz_pprof $(VENV)/.ready docs
	@$(EXTENSIONS_FOR_TESTS); \
	$(BUILD)/tests/fuzz_pstats 3000 && \
	$(BUILD)/tests/fuzz_walker 2000 $(PYTHONS) && \
	$(BUILD)/tests/fuzz_json 3000 $(JSON_CORPUS) && \
	$(BUILD)/tests/fuzz_pprof 3000 $(PPROF_CORPUS) && \
	$(VENV)/bin/python tests/run.py --unit $(BUILD)/tests/unit --pythons "$$usable"

# The extension alone, into PKG: what make test builds inside the Debian
# root for its interpreters (its compiler and C library, its objects apart
# in BUILD), beside the host's in build/python/sonde.
.PHONY: sid-extension
sid-extension: $(EXT)

# Manylinux wheels into $(BUILD)/wheels, one per interpreter with headers
# (pyenv's interpreters, the Debian root's; Debian's
# /usr/bin/python3 has pyenv 3.11's tag): the C command as the wheel's
# `sonde` script, the package and its extension, repaired by auditwheel
# (packaging/make_wheel.py; a wheel newer than its inputs is kept).
.PHONY: wheels
wheels: all $(VENV)/.ready
	@$(EXTENSIONS_FOR_TESTS); \
	$(VENV)/bin/python packaging/make_wheel.py --out $(BUILD)/wheels \
	  $$(for py in $$usable; do [ "$$py" = /usr/bin/python3 ] || echo "$$py"; done)

ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
               -fno-sanitize-recover=all
# The hostile-program tests (issue 23), run again with the sanitizer build
# of the command under make's interpreter: threads past 256, exec from a
# thread, subinterpreters, a demangling bomb, a profile naming files
# outside the program, --serve's hostile clients.
HOSTILE_TESTS := tests/python/test_sampler.py tests/python/test_subinterpreters.py \
                 tests/python/test_native_demangle.py tests/python/test_view_sources.py \
                 tests/python/test_serve.py
HOSTILE_SELECT := 256_threads or exec_from_a_thread or thread_that_execs or subinterpreter or \
                  bomb or embeds or cwd or host or dribbled or slow_clients

test-asan: $(VENV)/.ready
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan CFLAGS="$(ASAN_CFLAGS)" \
	  $(BUILD)/asan/bin/sonde $(BUILD)/asan/tests/unit $(BUILD)/asan/tests/fuzz_pstats \
	  $(BUILD)/asan/tests/fuzz_walker $(BUILD)/asan/tests/fuzz_json $(BUILD)/asan/tests/fuzz_pprof
	$(BUILD)/asan/tests/unit
	$(BUILD)/asan/tests/fuzz_pstats 20000
	$(BUILD)/asan/tests/fuzz_walker 20000 $(PYTHONS)
	$(BUILD)/asan/tests/fuzz_json 20000 $(JSON_CORPUS)
	$(BUILD)/asan/tests/fuzz_pprof 20000 $(PPROF_CORPUS)
	SONDE_BIN=$(BUILD)/asan/bin/sonde sh tests/cli_report_check.sh
	SONDE_TEST_BIN=$(abspath $(BUILD))/asan/bin/sonde \
	  SONDE_TEST_PYTHONS="$$($(PYTHON) -c 'import sys; print(sys.executable)')" \
	  $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(HOSTILE_TESTS) -k "$(HOSTILE_SELECT)"
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan PYTHON=$(PYTHON) CFLAGS="$(ASAN_CFLAGS)" \
	  python-package
	LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$(BUILD)/asan/python:tests/python \
	  $(PYTHON) tests/asan_extension.py

test-valgrind: $(BUILD)/tests/unit $(BUILD)/tests/fuzz_pstats $(BUILD)/tests/fuzz_walker $(BUILD)/tests/fuzz_json \
               $(BUILD)/tests/fuzz_pprof $(BUILD)/bin/sonde
	valgrind -q --error-exitcode=99 --leak-check=full $(BUILD)/tests/unit
	valgrind -q --error-exitcode=99 --leak-check=full $(BUILD)/tests/fuzz_pstats 2000
	valgrind -q --error-exitcode=99 --leak-check=full $(BUILD)/tests/fuzz_walker 200 $(PYTHONS)
	valgrind -q --error-exitcode=99 --leak-check=full $(BUILD)/tests/fuzz_json 300 $(JSON_CORPUS)
	valgrind -q --error-exitcode=99 --leak-check=full $(BUILD)/tests/fuzz_pprof 300 $(PPROF_CORPUS)
	SONDE_BIN="valgrind -q --error-exitcode=99 --leak-check=full $(BUILD)/bin/sonde" sh tests/cli_report_check.sh

# The flake finder: the page, sampler, native and timeit tests N times (N=5)
# with one busy process per CPU beside them (tests/load.py, started and
# ended by the run), with the interpreters `make test` uses.
N ?= 5
test-repeat: all $(NATIVE_TEST_FILES) $(VENV)/.ready
	@$(EXTENSIONS_FOR_TESTS); \
	$(VENV)/bin/python tests/repeat.py --rounds $(N) --pythons "$$usable"

demo: all
	sh examples/demo.sh

# The peers come from PyPI into their own environment; 3.12 and 3.13 are
# measured too when present (their floor and sonde, without the peers).
BENCH_VENV := $(BUILD)/benchvenv
bench: all
	@test -x $(BENCH_VENV)/bin/python || { $(PYTHON) -m venv $(BENCH_VENV) && \
	  $(BENCH_VENV)/bin/pip install -q --disable-pip-version-check yappi pyinstrument; }
	@for py in $(filter %/3.12.1/bin/python3 %/3.13.0/bin/python3,$(PYTHONS)); do \
	  $(MAKE) --no-print-directory python-package PYTHON=$$py >/dev/null; done
	$(BENCH_VENV)/bin/python bench/bench_run.py --python $(BENCH_VENV)/bin/python \
	  $(foreach py,$(filter %/3.12.1/bin/python3 %/3.13.0/bin/python3,$(PYTHONS)),--python $(py))

# austin 4.x needs glibc 2.38; 3.7.0 runs on older ones (Debian 12 has 2.36).
bench-sampler: all
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --disable-pip-version-check py-spy austin-dist==3.7.0
	$(BENCH_VENV)/bin/python bench/bench_sampler.py

# line_profiler comes from PyPI into build/benchvenv, and for pyenv's
# 3.12.1, when present, into a venv of its own.
BENCH_VENV312 := $(BUILD)/benchvenv312
PY312 := $(filter %/3.12.1/bin/python3,$(PYTHONS))
bench-lines: all
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --disable-pip-version-check line_profiler
	@for py in $(PY312); do \
	  $(MAKE) --no-print-directory python-package PYTHON=$$py >/dev/null && \
	  { test -x $(BENCH_VENV312)/bin/python || $$py -m venv $(BENCH_VENV312); } && \
	  $(BENCH_VENV312)/bin/pip install -q --disable-pip-version-check line_profiler || exit 1; \
	done
	$(BENCH_VENV)/bin/python bench/bench_lines.py --python $(BENCH_VENV)/bin/python \
	  $(if $(PY312),--python $(BENCH_VENV312)/bin/python)

# pyperf comes from PyPI into build/benchvenv.
bench-timeit: all
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --disable-pip-version-check pyperf
	$(BENCH_VENV)/bin/python bench/bench_timeit.py

# The peers come from PyPI into build/benchvenv, and for pyenv's 3.12.1,
# when present, into build/benchvenv312.
MEM_PEERS := memory_profiler memray scalene
bench-mem: all
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --disable-pip-version-check $(MEM_PEERS)
	$(BENCH_VENV)/bin/python bench/bench_mem.py --python $(BENCH_VENV)/bin/python
	@for py in $(PY312); do \
	  $(MAKE) --no-print-directory python-package PYTHON=$$py >/dev/null && \
	  { test -x $(BENCH_VENV312)/bin/python || $$py -m venv $(BENCH_VENV312); } && \
	  $(BENCH_VENV312)/bin/pip install -q --disable-pip-version-check $(MEM_PEERS) && \
	  $(BENCH_VENV)/bin/python bench/bench_mem.py --python $(BENCH_VENV312)/bin/python || exit 1; \
	done

# libunwind-ptrace (Debian: libunwind-dev) is compared when present.
HAVE_LIBUNWIND := $(wildcard /usr/include/*/libunwind-ptrace.h /usr/include/libunwind-ptrace.h)
$(BUILD)/bench/native_stop: bench/native_stop.c $(COMMAND_LIB_OBJ) $(LIBSONDE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $(if $(HAVE_LIBUNWIND),-DHAVE_LIBUNWIND) $^ -o $@ $(COMMAND_LDLIBS) $(LIBSONDE_LDLIBS) \
	  $(if $(HAVE_LIBUNWIND),-lunwind-ptrace -lunwind-generic)
$(BUILD)/bench/native_target: bench/native_target.c
	@mkdir -p $(dir $@)
	cc -O2 -fomit-frame-pointer -pthread $< -o $@
# Then sonde record --native against py-spy record --native on a numpy
# program (numpy and py-spy from PyPI into the test venv).
$(BUILD)/bench/libstall_probe.so: bench/stall_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared $< -o $@

bench-native: $(BUILD)/bench/native_stop $(BUILD)/bench/native_target $(BUILD)/bench/libstall_probe.so all
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --disable-pip-version-check py-spy austin-dist==3.7.0 numpy
	@for threads in 1 8; do for rate in 100 1000; do \
	  echo "== $$threads thread(s), $$rate Hz"; \
	  $(BUILD)/bench/native_stop $(BUILD)/bench/native_target $$rate 3 $$threads || exit 1; \
	done; done
	$(BENCH_VENV)/bin/python bench/bench_native.py --rounds 3 --threads 1,32 --rate 100
	$(BENCH_VENV)/bin/python bench/bench_native.py --rounds 3 --stalls 1,32,128 --rates 100,1000

# ---- documentation ----
# The man pages come from the command's own --help (its option tables):
# docs/tools/build.py writes them, and with the site the same reference into
# each command's page.  MkDocs, pinned, comes from PyPI into its own venv;
# the pictures are make demo's (run first when build/demo has none).
DOCS_VENV := $(BUILD)/docs-venv
$(DOCS_VENV)/.ready: docs/requirements.txt
	rm -rf $(DOCS_VENV)
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install -q --disable-pip-version-check -r docs/requirements.txt
	touch $@

man: $(BUILD)/bin/sonde
	$(PYTHON) docs/tools/build.py --sonde $(BUILD)/bin/sonde --man $(BUILD)/man --man-only

docs: all $(DOCS_VENV)/.ready
	@test -f $(BUILD)/demo/julia.svg || { echo "docs: running examples/demo.sh first: the pages show its pictures"; \
	  sh examples/demo.sh > $(BUILD)/demo.log 2>&1 || { cat $(BUILD)/demo.log; exit 1; }; }
	$(DOCS_VENV)/bin/python docs/tools/build.py --sonde $(BUILD)/bin/sonde --out $(BUILD)/docs \
	  --man $(BUILD)/man --demo $(BUILD)/demo

install: all man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/sonde/python/sonde \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/bin/sonde $(DESTDIR)$(PREFIX)/bin/sonde
	install -m 644 $(PKG)/* $(DESTDIR)$(PREFIX)/lib/sonde/python/sonde/
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf $(BUILD)
