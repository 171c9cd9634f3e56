"""The supported CPython versions are named in one place, src/core/pyversions.h:
no other file of the project states the supported range (a message, a gate, a
list of versions), so that the next version is one line there; the
"Supported" line of the docs' home page (docs/index.md) and of the README
lists exactly those versions; and every message that names
the range says what pyversions.h says."""

import os
import re
import subprocess

from conftest import ROOT, SONDE, SUPPORTED, supported_minors

HOME = os.path.join("src", "core", "pyversions.h")
THIS = os.path.join("tests", "python", "test_versions_home.py")  # its examples
# Where the code and the docs that ship live (the README and docs/ are checked apart).
SOURCES = ["src", "python", "tests", "examples", "Makefile", "setup.py", "sources.mk",
           "pyproject.toml", ".ci"]
# Facts about particular versions, not claims of what is supported: the
# fixed layout tables cover 3.8 to 3.12.
FACTS = {("src/sampler/python/layout.h", "3.8 to 3.12"),
         ("src/sampler/python/layout.c", "3.8-3.12")}


def project_files():
    out = subprocess.run(["git", "ls-files"] + SOURCES, cwd=ROOT, stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return [f for f in out.split() if f not in (HOME, THIS) and not f.startswith("tests/c/corpus/")
            and not f.startswith("tests/python/recorded/") and not f.endswith(".gz")]


def range_claims(text):
    """Every way of stating the supported range from its first version: "3.8 to 3.N",
    "3.8-3.N", "(3, 8) <= ...", a list "3.8", "3.9", ... of three or more."""
    first = supported_minors()[0]
    found = re.findall(r"3\.%d ?(?:to|-|\.\.\.) ?3\.\d+" % first, text)
    found += re.findall(r"\(3, ?%d\) ?<=" % first, text)
    found += re.findall(r"""["']3\.%d["'], ?["']3\.%d["'], ?["']3\.%d["']""" % (first, first + 1,
                                                                             first + 2), text)
    return found


def test_no_file_but_the_home_names_the_supported_range():
    claims = []
    for f in project_files():
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            for c in range_claims(fh.read()):
                if (f, c) not in FACTS:
                    claims.append((f, c))
    assert claims == []


def test_the_check_finds_a_stated_range():
    assert range_claims('"sonde runs 3.8 to 3.13", if (3, 8) <= v') == ["3.8 to 3.13", "(3, 8) <="]
    assert range_claims('wanted = ["3.8", "3.9", "3.10"]') == ['"3.8", "3.9", "3.10"']


def test_the_docs_list_the_supported_versions():
    for page in (os.path.join("docs", "index.md"), "README.md"):
        with open(os.path.join(ROOT, page)) as f:
            text = f.read()
        line = re.search(r"^Supported: CPython ([\d., ]+) on Linux", text, re.M)
        assert line, "%s has no 'Supported: CPython ... on Linux' line" % page
        listed = [v.strip() for v in line.group(1).replace("\n", " ").split(",") if v.strip()]
        assert listed == ["3.%d" % m for m in supported_minors()], page


def test_messages_name_the_home_s_range(tmp_path):
    """An interpreter outside the range is refused with the range of pyversions.h."""
    (tmp_path / "p.py").write_text("print('ran')\n")
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexec %s -c 'import sys; sys.exit(0)'\n" % "/bin/true")
    fake.chmod(0o755)
    proc = subprocess.run([SONDE, "run", "--python", str(fake), "p.py"], cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 1
    assert "is it Python %s?" % SUPPORTED in proc.stderr, proc.stderr
