"""The call tree rebuilt from a .prof (callers only, no call paths) keeps
every call path's time: a dispatcher entered again through its plugins (as
pluggy's hook call is, in pytest and tox) still shows the hot function
under it, as wide as pstats' cumtime for it; the root is the profile's
total time and each function's self times add up to its tottime.  pstats
reading cProfile's own file is the reference."""

import pstats
import subprocess
import sys

import pytest

from conftest import run_sonde
from pages import page_data, view

DISPATCH = '''
PLUGINS = {}

def register(name):
    def add(fn):
        PLUGINS.setdefault(name, []).append(fn)
        return fn
    return add

def hook(name, *args):
    return [fn(*args) for fn in PLUGINS.get(name, [])]

def test_body(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total

@register("pyfunc_call")
def pytest_pyfunc_call(n):
    return test_body(n)

@register("runtest")
def call_runtest(n):
    return hook("pyfunc_call", n)

@register("runtest")
def log_report(n):
    return sum(range(200))

def setup(n):
    return sorted(range(n // 50, 0, -1))

def runtestprotocol(n):
    setup(n)
    return hook("runtest", n)

def main():
    for _ in range(30):
        runtestprotocol(20000)

main()
'''


@pytest.fixture(scope="module")
def dispatch(tmp_path_factory):
    """The dispatcher program profiled by cProfile and by sonde run."""
    tmp = tmp_path_factory.mktemp("dispatch")
    (tmp / "dispatch.py").write_text(DISPATCH)
    subprocess.run([sys.executable, "-m", "cProfile", "-o", "cprofile.prof", "dispatch.py"],
                   cwd=str(tmp), check=True, stdout=subprocess.DEVNULL)
    proc = run_sonde(["run", "-o", "sonde.prof", "dispatch.py"], tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp


def topmost_width(tree, funcs, name):
    """The seconds of name's frames that have no frame of name above them."""
    def named(i):
        return funcs[tree[i][0]][0] == name

    width = 0
    for i in range(1, len(tree)):
        a = tree[i][1]
        while a and not named(a):
            a = tree[a][1]
        if named(i) and not a:
            width += tree[i][2]
    return width


@pytest.mark.parametrize("name", ["cprofile.prof", "sonde.prof"])
def test_dispatcher_entered_again_keeps_the_hot_path(dispatch, name):
    stats = pstats.Stats(str(dispatch / name)).stats
    data = page_data(view(dispatch, name))
    tree, funcs = data["tree"], data["funcs"]
    total = sum(v[2] for v in stats.values())
    assert abs(tree[0][2] - total) <= 1e-6 + 1e-6 * total
    by_name = {}
    for key, v in stats.items():
        by_name.setdefault(key[2], []).append(v)
    self_time = {}
    for n in tree[1:]:
        self_time[funcs[n[0]][0]] = self_time.get(funcs[n[0]][0], 0) + n[3]
    for fn, entries in by_name.items():  # every function's own time, nowhere lost
        tottime = sum(v[2] for v in entries)
        assert abs(self_time.get(fn, 0) - tottime) <= 1e-6 + 1e-6 * tottime, fn
    # the hot path under the dispatcher entered again: each as wide as its cumtime
    for fn in ("call_runtest", "pytest_pyfunc_call", "test_body", "runtestprotocol"):
        (cumtime,) = [v[3] for v in by_name[fn]]
        assert cumtime > 0.5 * total
        assert abs(topmost_width(tree, funcs, fn) - cumtime) <= 0.01 * cumtime, fn
    # and test_body is drawn under pytest_pyfunc_call, under the nested hook
    hot = max(range(1, len(tree)), key=lambda i: tree[i][2] if funcs[tree[i][0]][0] ==
              "test_body" else -1)
    path = []
    while hot:
        if funcs[tree[hot][0]][0] != "<listcomp>":  # a frame of its own before 3.12
            path.append(funcs[tree[hot][0]][0])
        hot = tree[hot][1]
    assert path[:6] == ["test_body", "pytest_pyfunc_call", "hook", "call_runtest", "hook",
                        "runtestprotocol"], path
