"""The command line's options: every command's --help comes from its
option table (src/cli/options.c), every spelling users type keeps working,
and run, lines and mem take SCRIPT | -m MODULE | -c CODE alike."""

import json
import re
import subprocess
import sys

import pytest

from conftest import SONDE, run_sonde

COMMANDS = ["run", "report", "lines", "mem", "view", "diff", "record", "top", "dump", "timeit", "merge"]


def help_of(command):
    proc = subprocess.run([SONDE, command, "--help"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


def test_every_command_is_listed():
    proc = subprocess.run([SONDE, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
    listed = re.findall(r"^  (\w+) ", proc.stdout, re.M)
    assert listed == COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_help_lists_every_option_its_usage_names(command):
    """The usage line is written by hand, the option list comes from the
    table: every option the usage names is in the list, with its help, and
    -h prints the same."""
    text = help_of(command)
    usage, _, rest = text.partition("\n\n")
    assert usage.startswith("usage: sonde %s " % command)
    options = re.findall(r"^  (?:(-\w)(?:, (--[\w-]+))?|    (--[\w-]+))(?: ([A-Z]+))?  +\S",
                         rest, re.M)
    assert options, rest
    listed = {name for short, long_, only, _ in options for name in (short, long_, only) if name}
    named = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage))
    assert named <= listed, (named - listed)
    assert subprocess.run([SONDE, command, "-h"], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout == text


PROGRAM = """
import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def main(n):
    return [fib(k) for k in range(n)]
main(int(sys.argv[1]))
"""


def rows(table_text):
    """The function rows of a pstats table: (ncalls, function), in order."""
    return [(l.split()[0], l.split()[-1]) for l in table_text.splitlines()
            if re.match(r"\s+[\d/]+\s+\d", l)]


def test_every_spelling_of_an_option(tmp_path):
    """-sVAL, -s VAL, --sort=VAL, --sort VAL and `--` before the script give
    the same table; the program's own options stay its own."""
    (tmp_path / "p.py").write_text(PROGRAM)
    spellings = [["-l", "4", "-s", "ncalls", "p.py", "12"],
                 ["-l4", "-sncalls", "p.py", "12"],
                 ["--limit=4", "--sort=ncalls", "p.py", "12"],
                 ["--limit", "4", "--sort", "ncalls", "--", "p.py", "12"]]
    tables = []
    for args in spellings:
        proc = run_sonde(["run"] + args, tmp_path)
        assert proc.returncode == 0, proc.stderr
        tables.append(rows(proc.stderr))
    assert tables[0] == tables[1] == tables[2] == tables[3]
    # fib(k) makes 2 fib(k + 1) - 1 calls: 740 for k below 12, 12 of them primitive
    assert len(tables[0]) == 4 and tables[0][0][0] == "740/12"
    assert tables[0][0][1].endswith("p.py:3(fib)")


@pytest.mark.parametrize("command", ["lines", "mem"])
def test_lines_and_mem_run_code_given_with_c(command, tmp_path):
    """-c CODE, as python -c: its functions are chosen as a script's are,
    and counted as the interpreter's own line events count them; its
    arguments are sys.argv[1:]."""
    code = ("import sys\n"
            "def f(n):\n"
            "    s = 0\n"
            "    for i in range(n):\n"
            "        s += i\n"
            "    return s\n"
            "f(10)\n"
            "f(int(sys.argv[1]))\n"
            "print(sys.argv)\n")
    trace = ("import sys, json\n"
             "counts = {}\n"
             "def local(frame, event, arg):\n"
             "    if event == 'line':\n"
             "        counts[frame.f_lineno] = counts.get(frame.f_lineno, 0) + 1\n"
             "    return local\n"
             "sys.settrace(lambda frame, event, arg: local if frame.f_code.co_name == 'f' "
             "else None)\n"
             "sys.argv = ['-c', '5']\n"
             "exec(compile(sys.stdin.read(), '<string>', 'exec'), {'__name__': '__main__'})\n"
             "sys.settrace(None)\n"
             "sys.stderr.write(json.dumps(counts))\n")
    ref = subprocess.run([sys.executable, "-c", trace], input=code, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=True)
    want = {int(k): v for k, v in json.loads(ref.stderr).items()}
    extra = ["--no-native", "--lines"] if command == "mem" else []
    proc = run_sonde([command, "-o", "c.json"] + extra + ["-c", code, "5"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "['-c', '5']\n"
    functions = json.load(open(str(tmp_path / "c.json")))["functions"]
    (f,) = [fn for fn in functions if fn["name"] == "f"]
    assert f["file"] == "<string>"
    assert {l["line"]: l["hits"] for l in f["lines"] if l["hits"]} == want
