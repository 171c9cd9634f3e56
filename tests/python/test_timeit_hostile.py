"""sonde timeit against hostile but legal input: pyperf files with values
of zero, too large to add up, of the wrong type or nested too deep give
one line and exit 1, never a traceback; a file of 100,000 runs is read
(hang guard) and its interval agrees with a bootstrap computed here; a
statement's stderr is passed through as it comes, not kept in memory; a
setup longer than one argument can hold works; a child process that
outlives its statement is not blamed on it; a full standard output is
one line and exit 1."""

import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys

import pytest

from conftest import SONDE, run_sonde

HANG_GUARD = 240


def pyperf_file(path, runs, name="timeit", loops=1000, extra_runs=(), **extra):
    """A pyperf 1.0 file: one benchmark, one run per list in runs (then
    extra_runs as they are); extra replaces the benchmark's keys."""
    bench = {"metadata": {"name": name, "loops": loops},
             "runs": [{"metadata": {}, "values": values} for values in runs] + list(extra_runs)}
    bench.update(extra)
    path.write_text(json.dumps({"version": "1.0", "metadata": {}, "benchmarks": [bench]}))
    return str(path)


def text_file(path, text):
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def sonde_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["SONDE_PYTHON"] = sys.executable
    return env


def one_line_refusal(p, timed=False):
    """The one line of a refusal (with timed, the warnings on the values
    timed may come before it)."""
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = [l for l in p.stderr.strip().splitlines()
             if not (timed and l.startswith("warning: "))]
    assert len(lines) == 1 and lines[0].startswith("sonde timeit: "), p.stderr
    return lines[0]


GOOD = [[1.0e-6, 1.1e-6, 1.2e-6], [1.05e-6, 1.0e-6, 1.1e-6]]

HOSTILE = {
    # each: the file's text, and what its one line says
    "zero values": (lambda p: pyperf_file(p, [[0, 0, 0], [0, 0]]), "is not a number above 0"),
    "negative value": (lambda p: pyperf_file(p, [[-1e-6, 1e-6]]), "is not a number above 0"),
    "huge values": (lambda p: pyperf_file(p, [[1e308, 1e308], [1e308]]),
                    "is not a number above 0 and at most"),
    "huge integer": (lambda p: text_file(p,
        '{"version": "1.0", "benchmarks": [{"metadata": {"name": "timeit"}, '
        '"runs": [{"values": [1%s]}]}]}' % ("0" * 400)), "is not a number above 0"),
    "infinite loops": (lambda p: text_file(p,
        '{"version": "1.0", "benchmarks": [{"metadata": {"name": "timeit", "loops": 1e400}, '
        '"runs": [{"values": [1e-6, 2e-6]}]}]}'), "'loops' is"),
    "string values": (lambda p: pyperf_file(p, ["abc"]), "'values' is"),
    "nested values": (lambda p: pyperf_file(p, [[[1e-6]]]), "is not a number"),
    "boolean values": (lambda p: pyperf_file(p, [[True, True]]), "is not a number"),
    "name not a string": (lambda p: pyperf_file(p, GOOD, name=5), "is not a string"),
    "name an object": (lambda p: pyperf_file(p, GOOD, name={"a": 1}), "is not a string"),
    "metadata a list": (lambda p: pyperf_file(p, GOOD, metadata=[1, 2]), "not an object"),
    "runs not objects": (lambda p: pyperf_file(p, [[3], [4]], extra_runs=[3, 4]),
                         "not an object"),
    "loops a string": (lambda p: pyperf_file(p, GOOD, loops="many"), "'loops' is"),
    "nested deep": (lambda p: text_file(p, "[" * 200000 + "]" * 200000),
                    "nested too deep"),
    "not an object": (lambda p: text_file(p, "[1, 2]"), "not an object"),
    "not utf-8": (lambda p: text_file(p, b'{"version": "\xff"}'), "not JSON"),
}


def fifo(path):
    os.mkfifo(str(path))
    return str(path)


def huge(path):
    with open(str(path), "wb") as f:
        f.truncate((128 << 20) + 1)  # sparse: nothing is written
    return str(path)


HOSTILE["a pipe"] = (fifo, "is a pipe (FIFO), not a pyperf JSON file")
HOSTILE["too large"] = (huge, "is larger than 128 MiB")
HOSTILE["a folder"] = (lambda p: p.mkdir() or str(p), "is a folder, not a pyperf JSON file")


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_pyperf_file_is_one_line(tmp_path, kind):
    write, says = HOSTILE[kind]
    good = pyperf_file(tmp_path / "good.json", GOOD)
    hostile = write(tmp_path / "hostile.json")
    for files in ([good, hostile], [hostile, good]):
        p = run_sonde(["timeit", "--compare"] + files, tmp_path, timeout=HANG_GUARD)
        line = one_line_refusal(p)
        assert hostile in line and says in line, line
        assert p.stdout == ""


def test_control_characters_in_a_name_stay_on_one_line(tmp_path):
    a = pyperf_file(tmp_path / "a.json", GOOD, name="x\x1b[2J\ny")
    b = pyperf_file(tmp_path / "b.json", GOOD, name="z")
    line = one_line_refusal(run_sonde(["timeit", "--compare", a, b], tmp_path,
                                      timeout=HANG_GUARD))
    assert "different benchmarks (x\\x1b[2J\\x0ay against z)" in line


def bootstrap_ratio_ci(a, b, resamples=2000):
    """The 95% percentile bootstrap interval of mean(a) / mean(b), with
    numpy, in chunks of resamples."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    a, b = np.asarray(a), np.asarray(b)
    ratios = []
    for _ in range(resamples // 50):
        ia = rng.integers(0, len(a), size=(50, len(a)))
        ib = rng.integers(0, len(b), size=(50, len(b)))
        ratios.extend(a[ia].mean(axis=1) / b[ib].mean(axis=1))
    return np.percentile(ratios, 2.5), np.percentile(ratios, 97.5)


def test_a_hundred_thousand_runs_are_read(tmp_path):
    """2000 bootstrap resamples of every run took minutes (200,000 runs:
    timed out); now linear, and the interval is the bootstrap's."""
    rng = random.Random(3)
    n = 100000
    a = [[rng.lognormvariate(0, 1) * 1e-6] for _ in range(n)]
    b = [[rng.lognormvariate(0.05, 1) * 1e-6] for _ in range(n)]
    files = [pyperf_file(tmp_path / "a.json", a), pyperf_file(tmp_path / "b.json", b)]
    p = run_sonde(["timeit", "--compare"] + files, tmp_path, timeout=HANG_GUARD)
    assert p.returncode == 0, p.stderr
    ma, mb = (statistics.fmean(v[0] for v in runs) for runs in (a, b))
    line = p.stdout.strip().splitlines()[-1]
    m = re.match(r"(\S+) is ([\d.]+)x (slower|faster) than (\S+) \(95% CI ([\d.]+)-([\d.]+)x, ",
                 line)
    assert m and (m.group(1), m.group(4)) == (files[1], files[0]), line
    word = "slower" if mb > ma else "faster"
    ratio, lo, hi = (float(m.group(k)) for k in (2, 5, 6))
    assert m.group(3) == word and abs(ratio - max(ma, mb) / min(ma, mb)) <= 0.0051, (line, ma, mb)
    ref_lo, ref_hi = bootstrap_ratio_ci([v[0] for v in a], [v[0] for v in b])
    if word == "slower":
        ref_lo, ref_hi = 1 / ref_hi, 1 / ref_lo
    # printed to 2 decimals: within half of the last digit, and what two
    # bootstraps of 2000 resamples differ by
    assert abs(lo - ref_lo) <= 0.0075 and abs(hi - ref_hi) <= 0.0075, (line, ref_lo, ref_hi)


def test_statement_stderr_is_passed_through_not_kept(tmp_path):
    """32 MB a run of the statement, written in 1 MB pieces: all of it
    reaches sonde's stderr, and no process holds it (the driver kept it
    all in memory and showed none)."""
    count = tmp_path / "runs.txt"
    stmt = ("open(%r, 'a').write('x\\n')\nfor _ in range(32): sys.stderr.write(chunk)"
            % str(count))
    script = ("import resource, subprocess, sys\n"
              "with open(sys.argv[1], 'w') as err:\n"
              "    rc = subprocess.run(sys.argv[2:], stderr=err, stdout=subprocess.DEVNULL,"
              " timeout=%d).returncode\n"
              "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n" % HANG_GUARD)
    err = tmp_path / "stderr.txt"
    p = subprocess.run([sys.executable, "-c", script, str(err), SONDE, "timeit", "-n", "1",
                        "-r", "1", "-p", "1", "-s", "import sys; chunk = 'E' * (1 << 20)", stmt],
                       cwd=str(tmp_path), env=sonde_env(), stdout=subprocess.PIPE,
                       universal_newlines=True, timeout=HANG_GUARD + 30)
    rc, max_rss_kb = (int(x) for x in p.stdout.split())
    assert rc == 0
    runs = len(count.read_text().splitlines())
    assert runs >= 2  # a warmup and a value
    with open(str(err), "rb") as f:
        written = sum(chunk.count(b"E") for chunk in iter(lambda: f.read(1 << 20), b""))
    assert written == runs * 32 << 20
    assert max_rss_kb < 48 << 10, max_rss_kb  # under 48 MB: 64 MB or more went through


def test_setup_longer_than_an_argument(tmp_path):
    """Two -s of 100 KB: more than the 128 KB one argument holds, which
    the options handed to the driver were."""
    text = "a" * 100000
    p = run_sonde(["timeit", "-n", "1", "-r", "1", "-p", "1", "-s", "x = %r" % text,
                   "-s", "y = %r" % text, "assert len(x) + len(y) == 200000"], tmp_path,
                  timeout=HANG_GUARD)
    assert p.returncode == 0, p.stderr
    assert "per loop (mean +- std. dev. of 1 values, 1 process, 1 loops each)" in p.stdout


@pytest.mark.parametrize("mode, shows", [("--profile", "function calls"),
                                         ("--lines", "len(x) + len(y)")])
def test_setup_longer_than_an_argument_profiled(tmp_path, mode, shows):
    """--profile and --lines run the loop's code in `sonde run`/`lines`:
    with 200 KB of setup it goes through a file, not one -c argument
    (before: a traceback ending in 'Argument list too long').  The loop
    ran its 7 passes: the statement's line has 7 hits."""
    text = "a" * 100000
    p = run_sonde(["timeit", "-n", "7", "-r", "1", "-p", "1", "-s", "x = %r" % text,
                   "-s", "y = %r" % text, mode, "assert len(x) + len(y) == 200000"], tmp_path,
                  timeout=HANG_GUARD)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and shows in p.stderr, p.stderr
    if mode == "--lines":
        hits = [line.split() for line in p.stderr.splitlines() if "assert len(x)" in line]
        assert hits and hits[-1][1] == "7", p.stderr


def test_child_outliving_its_statement_is_not_a_timeout(tmp_path):
    """The statement starts a child that sleeps on, holding the worker's
    stderr: the worker has finished, and its value counts."""
    pids = tmp_path / "pids.txt"
    stmt = ("p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(%d)']); "
            "open(%r, 'a').write('%%d\\n' %% p.pid)" % (HANG_GUARD, str(pids)))
    try:
        with open(str(tmp_path / "stderr.txt"), "w") as err:
            p = subprocess.run([SONDE, "timeit", "--timeout", "20", "-n", "1", "-r", "1", "-p", "1",
                                "-s", "import subprocess, sys", stmt], cwd=str(tmp_path),
                               env=sonde_env(), stdout=subprocess.PIPE, stderr=err,
                               universal_newlines=True, timeout=HANG_GUARD)
        stderr = (tmp_path / "stderr.txt").read_text()
        assert p.returncode == 0, stderr
        assert "did not finish" not in stderr
        assert "1 process, 1 loops each" in p.stdout
    finally:
        for pid in (pids.read_text().split() if pids.exists() else []):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [["-n", "1", "-r", "1", "-p", "1", "pass"], ["--compare"]])
def test_full_standard_output_is_one_line(tmp_path, args):
    if args == ["--compare"]:
        args = args + [pyperf_file(tmp_path / "a.json", GOOD), pyperf_file(tmp_path / "b.json",
                                                                           GOOD)]
    with open("/dev/full", "w") as full:
        p = subprocess.run([SONDE, "timeit"] + args, cwd=str(tmp_path), env=sonde_env(),
                           stdout=full, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=HANG_GUARD)
    p.stdout = ""
    line = one_line_refusal(p, timed=args[0] != "--compare")
    assert line == "sonde timeit: cannot write the standard output: No space left on device"
