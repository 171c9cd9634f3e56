"""Every caller->callee edge count equals cProfile's, on every interpreter.

Both profilers record the same warm workload in the same process (see
edge_driver.py); the .prof files are compared edge by edge.
"""

import subprocess

import pytest

import profcompare
import workloads
from conftest import HERE, need, version_params, with_pkg_env


@pytest.mark.parametrize("workload", sorted(workloads.ALL))
@pytest.mark.parametrize("python", version_params())
def test_edges_equal_cprofile(python, workload, tmp_path):
    python = need(python)
    ours, theirs = tmp_path / "sonde.prof", tmp_path / "cprofile.prof"
    subprocess.run([python, HERE + "/edge_driver.py", workload, str(ours), str(theirs)],
                   check=True, env=with_pkg_env(), cwd=str(tmp_path))
    assert profcompare.differences(str(ours), str(theirs)) == []
    assert len(profcompare.edges(profcompare.load(str(ours)))) >= 2


def test_recursive_counts_are_cprofile_form(tmp_path):
    """fib(15) makes 1973 calls, one of them primitive: pstats shows 1973/1."""
    import marshal
    import sys

    ours = tmp_path / "s.prof"
    subprocess.run([sys.executable, HERE + "/edge_driver.py", "recursion", str(ours),
                    str(tmp_path / "c.prof")], check=True, env=with_pkg_env())
    stats = marshal.load(open(str(ours), "rb"))
    (fib,) = [v for k, v in stats.items() if k[2] == "fib"]
    assert fib[:2] == (1, 1973)
    assert fib[3] >= fib[2] * (1 - 1e-9) > 0  # cumtime covers tottime
    callers = fib[4]
    self_edge = [v for k, v in callers.items() if k[2] == "fib"][0]
    # Only fib(15)'s own two calls are primitive fib->fib edge activations.
    assert self_edge[:2] == (1972, 2)
