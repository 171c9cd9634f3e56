"""The documentation's option references and man pages are the command's own
option tables: docs/tools/build.py writes them from `sonde COMMAND --help`,
and every option each table in src/cli/cmd_NAME.c declares -- read here
from the C source, the tables' other reader -- is in the command's page and
in its man page, and no command goes without either.  The docs' pages are
those make docs builds; mkdocs' strict build itself runs in `make docs`."""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import HERE, ROOT, SONDE, run_sonde

BUILD = os.path.join(ROOT, "docs", "tools", "build.py")


def macro_options():
    """{MACRO: [option names]} for the macros of src/cli's headers that hold
    table entries several tables share (CLI_PROGRAM_OPTIONS, TOOL_ARGS_FUNCTION...)."""
    out = {}
    for path in glob.glob(os.path.join(ROOT, "src", "cli", "*.h")):
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"#define (\w+)\(.*?\n((?:.*\\\n)*.*)", text):
            if names_in(m.group(2)):
                out[m.group(1)] = names_in(m.group(2))
    assert set(out) >= {"CLI_PROGRAM_OPTIONS", "CLI_NATIVE_OPTIONS", "TOOL_ARGS_FUNCTION"}, out
    return out


def names_in(c_text):
    return ["-" + s for s in re.findall(r"\.short_name\s*=\s*'(.)'", c_text)] + \
        ["--" + s for s in re.findall(r'\.long_name\s*=\s*"([^"]+)"', c_text)]


def declared():
    """{command: [every option name its table declares]}, from the C sources."""
    macros = macro_options()
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "cli", "cmd_*.c"))):
        with open(path) as f:
            text = f.read()
        name = re.search(r'const cli_command cmd_\w+ = \{\s*\.name = "([^"]+)"', text)
        assert name, "%s declares no cli_command" % path
        names = names_in(text)
        for macro, given in macros.items():
            if macro + "(" in text:
                names += given
        out[name.group(1)] = names
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The site's source and the man pages, as make docs writes them (no
    mkdocs: that is make docs' own step)."""
    out = tmp_path_factory.mktemp("docs")
    proc = subprocess.run([sys.executable, BUILD, "--sonde", SONDE, "--out", str(out / "site"),
                           "--man", str(out / "man"), "--demo", str(out / "no-demo"),
                           "--stage-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    return out


def options_section(page):
    return page.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]


def test_every_declared_option_is_in_its_page_and_man_page(built):
    tables = declared()
    assert {"run", "report", "record", "top", "dump", "lines", "mem", "view", "diff",
            "timeit"} <= set(tables)
    for command, names in tables.items():
        assert len(names) >= 2, (command, names)
        with open(str(built / "site" / "src" / "commands" / (command + ".md"))) as f:
            reference = options_section(f.read())
        with open(str(built / "man" / ("sonde-%s.1" % command))) as f:
            man = f.read()
        # each option is the name of an entry: `-o, --output FILE` / \fB\-o, \-\-output\fR
        entries = re.findall(r"^`([^`]+)`$", reference, re.M)
        labels = {word.rstrip(",") for e in entries for word in e.split() if word.startswith("-")}
        man_labels = {word.rstrip(",") for e in re.findall(r"^\\fB(.*?)\\fR", man, re.M)
                      for word in e.replace("\\-", "-").split()}
        for name in names:
            assert name in labels, "%s: %s is not in its page's reference" % (command, name)
            assert name in man_labels, "%s: %s is not in sonde-%s.1" % (command, name, command)
        # and nothing else: the reference is the table
        assert labels == set(names), (command, labels ^ set(names))


def test_the_man_pages_name_every_command(built):
    tables = declared()
    pages = {os.path.basename(p) for p in glob.glob(str(built / "man" / "*.1"))}
    assert pages == {"sonde.1"} | {"sonde-%s.1" % c for c in tables}
    with open(str(built / "man" / "sonde.1")) as f:
        index = f.read()
    for command in tables:
        assert "\\fBsonde %s\\fR" % command in index


def test_man_page_reads_as_a_man_page(built):
    """man(1) itself formats it: name, synopsis, an option and its help."""
    man = subprocess.run(["man", "-l", str(built / "man" / "sonde-record.1")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0"))
    if man.returncode != 0 and "not found" in man.stderr:
        pytest.skip("man is not installed")
    text = re.sub(r".\x08", "", man.stdout)
    assert man.returncode == 0, man.stderr
    assert re.search(r"^NAME\n\s+sonde-record - sample a running Python process", text, re.M)
    assert re.search(r"^SYNOPSIS\n\s+sonde record \[-o FILE\]", text, re.M)
    assert re.search(r"^\s+-r, --rate HZ\n\s+samples per second", text, re.M), text


def test_a_command_without_a_page_gets_one(built):
    """Every command has its page: written by hand, or made of its reference;
    its usage is the one --help prints, and no marker is left."""
    for command in declared():
        with open(str(built / "site" / "src" / "commands" / (command + ".md"))) as f:
            page = f.read()
        usage = subprocess.run([SONDE, command, "--help"], stdout=subprocess.PIPE,
                               universal_newlines=True, check=True).stdout.split("\n")[0]
        assert page.startswith("# sonde %s\n" % command)
        assert "\n    " + usage[len("usage: "):] + "\n" in page, command
        assert "<!-- sonde-" not in page, command


def test_a_broken_page_fails_the_build(tmp_path):
    """make docs is strict: a page linking to a page or an anchor that does
    not exist fails it, naming the link (mkdocs from make docs' venv), and so
    does a page whose list Python-Markdown leaves as text."""
    python = os.path.join(ROOT, "build", "docs-venv", "bin", "python")
    if not os.path.exists(python):
        pytest.skip("make docs has not installed MkDocs into build/docs-venv")
    args = [python, BUILD, "--sonde", SONDE, "--man", str(tmp_path / "man"),
            "--demo", str(tmp_path / "no-demo")]
    cases = [("\nSee [a page](nowhere.md).\n", "WARNING"),
             ("\nSee [an anchor](formats.md#nowhere).\n", "WARNING"),
             # GitHub's list without a blank line before it: shown as text
             ("\nA list:\n- one\n- two\n", "did not read")]
    for broken, said in cases:
        docs = tmp_path / "docs"
        subprocess.run(["rm", "-rf", str(docs)], check=True)
        subprocess.run(["cp", "-r", os.path.join(ROOT, "docs"), str(docs)], check=True)
        with open(str(docs / "reading.md"), "a") as f:
            f.write(broken)
        proc = subprocess.run(args + ["--docs", str(docs), "--out", str(tmp_path / "out")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        assert proc.returncode == 1, proc.stderr
        assert said in proc.stderr and "reading" in proc.stderr, proc.stderr
    # and the pages as they are build (the picture notes aside: no demo here)
    proc = subprocess.run(args + ["--out", str(tmp_path / "out")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    assert os.path.exists(str(tmp_path / "out" / "site" / "commands" / "record.html"))


def keys_of(value, out):
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            keys_of(item, out)
    elif isinstance(value, list):
        for item in value:
            keys_of(item, out)
    return out


def test_the_formats_page_names_every_field_of_sonde_s_json(tmp_path):
    """Every key of what sonde writes as JSON -- run's and record's profiles,
    the lines and mem documents (their golden schemas: every key a real
    program fills) -- is named on the formats page, as `key` or in a
    {"key", ...} or {key, ...} listing (DESIGN: document every field)."""
    (tmp_path / "p.py").write_text("def work(n):\n    return sum(i * i for i in range(n))\n\n"
                                   "for _ in range(300):\n    work(20000)\n")
    proc = run_sonde(["run", "-f", "json", "-o", "run.json", "p.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = run_sonde(["record", "-r", "1000", "-f", "json", "-o", "record.json", "--",
                      sys.executable, "p.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    keys = set()
    for path in (tmp_path / "run.json", tmp_path / "record.json",
                 os.path.join(HERE, "golden", "lines_doc_schema.json"),
                 os.path.join(HERE, "golden", "mem_doc_schema.json")):
        with open(str(path)) as f:
            keys_of(json.load(f), keys)
    assert {"about", "functions", "nodes", "stats", "timeline", "sample_rate", "leaks",
            "time_ns", "alloc_bytes"} <= keys, keys
    with open(os.path.join(ROOT, "docs", "formats.md")) as f:
        page = f.read()
    unnamed = sorted(k for k in keys if "`%s`" % k not in page and
                     not re.search(r'[{,]\s*"?%s"?\s*[,}:]' % re.escape(k), page))
    assert unnamed == []
