"""`pip install .` gives a working package, extension and `sonde` command
in a fresh virtual environment, the way Python users install tools."""

import json
import os
import runpy
import shutil
import subprocess
import sys
from glob import glob

from conftest import ROOT, SONDE


def sources_of_both_builds(root):
    """What `make print-sources` and setup.py each build from the tree at
    root: {"libsonde": [...], "command": [...], "extension": [...], "shim": [...]}."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "print-sources"], cwd=str(root),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    made = {}
    for line in out.splitlines():
        name, _, files = line.partition(":")
        made[name] = sorted(files.split())
    installed = runpy.run_path(os.path.join(str(root), "setup.py"),
                               run_name="sources")["artifact_sources"](str(root))
    return made, installed


def test_make_and_pip_build_the_same_sources(tmp_path):
    """The Makefile and setup.py take their sources by sources.mk's one rule:
    each builds the same files for each artifact, every C file under src/
    (but the developers' tools/) goes into exactly one artifact, and a file
    moved into a new subfolder is still built, by both."""
    made, installed = sources_of_both_builds(ROOT)
    assert made == installed
    every = sorted(os.path.relpath(f, ROOT) for f in glob(os.path.join(ROOT, "src", "**", "*.c"),
                                                          recursive=True)
                   if "/tools/" not in f)
    assert sorted(sum(made.values(), [])) == every
    # Native frames are the command's only (they link libdw).
    native = sorted(os.path.relpath(f, ROOT)
                    for f in glob(os.path.join(ROOT, "src", "sampler", "native", "*.c")))
    assert native and made["command"] == ["src/cli/main.c"] + native
    assert "src/ext/module.c" in made["extension"]
    assert not [f for f in made["libsonde"] if f.startswith("src/sampler/native/")]

    # A copy of the tree where files moved into new subfolders, and one
    # added to a subfolder of the command's native folder.
    root = tmp_path / "tree"
    shutil.copytree(ROOT, str(root), ignore=shutil.ignore_patterns("build", ".git", "tests"))
    moves = {"src/formats/collapsed.c": "src/formats/tools_read/collapsed.c",
             "src/ext/tracer/tracer.c": "src/ext/tracer/deterministic/tracer.c"}
    for old, new in moves.items():
        os.makedirs(os.path.dirname(str(root / new)))
        os.rename(str(root / old), str(root / new))
    (root / "src" / "sampler" / "native" / "extra").mkdir()
    (root / "src" / "sampler" / "native" / "extra" / "more.c").write_text("int more;\n")
    made, installed = sources_of_both_builds(root)
    assert made == installed
    assert "src/formats/tools_read/collapsed.c" in made["libsonde"]
    assert "src/ext/tracer/deterministic/tracer.c" in made["extension"]
    assert "src/sampler/native/extra/more.c" in made["command"]
    assert "src/sampler/native/extra/more.c" not in made["libsonde"]


def test_pip_install_into_fresh_venv(tmp_path):
    # Install from a clean copy of the sources, as a user's checkout would be.
    src = tmp_path / "src"
    shutil.copytree(ROOT, str(src), ignore=shutil.ignore_patterns("build", ".git", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                          "--disable-pip-version-check", str(src)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    assert pip.returncode == 0, pip.stdout[-3000:]
    script = tmp_path / "w.py"
    script.write_text("def f(n):\n    return n and f(n - 1)\nf(20)\n")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("SONDE_PYTHON", None)
    proc = subprocess.run([str(venv / "bin" / "sonde"), "run", "-o", "w.prof", str(script)],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    assert "21/1" in proc.stderr and "w.py:1(f)" in proc.stderr
    check = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import pstats; s = pstats.Stats('w.prof');"
                            "print([v[:2] for k, v in s.stats.items() if k[2] == 'f'])"],
                           cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                           universal_newlines=True, check=True)
    assert check.stdout.strip() == "[(1, 21)]"
    # sonde mem finds the C allocator shim pip built beside the extension.
    (tmp_path / "m.py").write_text(
        "import ctypes\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.malloc.restype = ctypes.c_void_p\n"
        "def grab():\n"
        "    return libc.malloc(3 << 20)\n"
        "kept = grab()\n")
    mem = subprocess.run([str(venv / "bin" / "sonde"), "mem", "-o", "m.json", "m.py"],
                         cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    assert mem.returncode == 0, mem.stderr
    doc = json.load(open(str(tmp_path / "m.json")))
    assert doc["native"] is True
    grab = [f for f in doc["functions"] if f["name"] == "grab"][0]
    net = [l["net_bytes"] for l in grab["lines"] if l["line"] == 5][0]
    assert abs(net - (3 << 20)) < 0.01 * (3 << 20)  # the block, and a sampled int
    # sonde view from the installed command: the page carries its script.
    page = subprocess.run([str(venv / "bin" / "sonde"), "view", "w.prof"], cwd=str(tmp_path),
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "w.html").read_text()
    assert "Content-Security-Policy" in html and "function buildTree(" in html
    # The version's one home, pyproject.toml, reaches the command, the
    # module and the installed metadata alike.
    said = subprocess.run([str(venv / "bin" / "sonde"), "--version"], env=env,
                          stdout=subprocess.PIPE, universal_newlines=True, check=True)
    module = subprocess.run([str(venv / "bin" / "python"), "-c",
                             "import sonde, importlib.metadata as m;"
                             "print(sonde.__version__, m.version('sonde'))"],
                            cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                            universal_newlines=True, check=True)
    assert said.stdout.split() == ["sonde", project_version()]
    assert module.stdout.split() == [project_version()] * 2


def project_version():
    return runpy.run_path(os.path.join(ROOT, "setup.py"), run_name="version")["project_version"]()


def test_the_build_trees_version_is_pyprojects():
    """make's command and extension say pyproject.toml's version."""
    said = subprocess.run([SONDE, "--version"], stdout=subprocess.PIPE, universal_newlines=True,
                          check=True)
    module = subprocess.run([sys.executable, "-c", "import sonde; print(sonde.__version__)"],
                            env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python")),
                            stdout=subprocess.PIPE, universal_newlines=True, check=True)
    assert said.stdout.split() == ["sonde", project_version()]
    assert module.stdout.strip() == project_version()
