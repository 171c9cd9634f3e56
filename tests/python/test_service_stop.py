"""A service stopped the way `kill`, `timeout`, `docker stop` and systemd
stop it (SIGTERM, or SIGHUP when its terminal goes) under sonde run, lines
and mem: the profile is written, with every request the service says it
handled, and sonde ends as the bare service ends, killed by that signal."""

import json
import marshal
import os
import signal
import socket
import subprocess

import pytest

from conftest import SONDE, need, signals_at_default, version_params

REQUESTS = 7
REPLY_BYTES = 256 * 1024  # each request's buffer: a block sonde mem counts exactly (8 KiB and more)

# A TCP service in the shape of a real one: it says it listens, then
# serves one request at a time and says how many it has handled so far
# (its own count), until it is stopped.
SERVICE = """
import socketserver


class Handler(socketserver.StreamRequestHandler):
    handled = 0

    def handle(self):
        Handler.handled += 1
        buffer = bytearray(REPLY_BYTES)  # the request's working space
        self.wfile.write(self.rfile.readline().upper())


server = socketserver.TCPServer(("127.0.0.1", 0), Handler)
print("ready", server.server_address[1], flush=True)
while True:
    server.handle_request()
    print("handled", Handler.handled, flush=True)
""".replace("REPLY_BYTES", str(REPLY_BYTES))

HANDLE_LINES = {"count": 9, "buffer": 10, "write": 11}  # the lines of Handler.handle


def serve_then_stop(cmd, cwd, python, sig):
    """Runs cmd (the service, bare or under sonde), sends it REQUESTS
    requests, each answered before the next, then sig once it has said it
    handled the last one.  Returns (exit status, the service's stdout,
    sonde's stderr)."""
    env = dict(os.environ, SONDE_PYTHON=python)
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            preexec_fn=signals_at_default)
    try:
        ready = proc.stdout.readline()
        assert ready.startswith("ready "), (ready, proc.stderr.read() if not ready else "")
        said = [ready]
        for k in range(REQUESTS):
            with socket.create_connection(("127.0.0.1", int(ready.split()[1])), timeout=60) as c:
                c.sendall(b"request %d\n" % k)
                assert c.makefile("rb").readline() == b"REQUEST %d\n" % k
            said.append(proc.stdout.readline())
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    out, err = signal_then_wait(proc, sig)
    return proc.returncode, "".join(said) + out, err


def signal_then_wait(proc, sig):
    """Sends sig to proc and waits for its end (killed if it has not ended
    within 120 s): (the rest of its stdout, its stderr)."""
    try:
        proc.send_signal(sig)
        return proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def handled_count(stdout):
    """What the service itself says it handled, last."""
    return int(stdout.strip().splitlines()[-1].split()[1])


def profile_of(tool, path):
    """The functions of what each tool wrote: run's pstats {name: calls};
    lines' and mem's {qualified name: {line: its entry}}."""
    if tool == "run":
        with open(str(path), "rb") as f:
            return {key[2]: value[1] for key, value in marshal.load(f).items()}
    with open(str(path)) as f:
        return {fn["name"]: {line["line"]: line for line in fn["lines"]}
                for fn in json.load(f)["functions"]}


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("tool", ["run", "lines", "mem"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_stopped_service_leaves_its_profile_and_the_bare_exit(python, tool, sig, tmp_path):
    python = need(python)
    (tmp_path / "service.py").write_text(SERVICE)
    status, bare_out, _ = serve_then_stop([python, "service.py"], tmp_path, python, sig)
    assert status == -sig and handled_count(bare_out) == REQUESTS
    out = tmp_path / ("service.prof" if tool == "run" else "service.json")
    chosen = [] if tool == "run" else ["-f", "Handler.handle"]
    ours, our_out, err = serve_then_stop([SONDE, tool, "-o", str(out)] + chosen + ["service.py"],
                                         tmp_path, python, sig)
    assert ours == status, err  # killed by the same signal, as the shell sees it
    assert our_out.split()[2:] == bare_out.split()[2:]  # the same replies said (the port aside)
    assert "no profile" not in err and out.exists(), err
    handled = handled_count(our_out)
    got = profile_of(tool, out)
    if tool == "run":
        assert got["handle"] == handled == REQUESTS, err
        assert got["_signal_arrived"] == 1  # sonde's handler, where the signal found the service
    elif tool == "lines":
        hits = {line: got["Handler.handle"][n]["hits"] for line, n in HANDLE_LINES.items()}
        assert hits == {"count": handled, "buffer": handled, "write": handled}, err
    else:
        allocated = got["Handler.handle"][HANDLE_LINES["buffer"]]["alloc_bytes"]
        assert handled * REPLY_BYTES <= allocated < handled * (REPLY_BYTES + 8192), err



# Forks CHILDREN children, each sleeping, and sends each SIGTERM as soon as
# fork returns (as a pool's terminate() does to a worker it has just made),
# then says how many ended by it; one still alive after GRACE seconds is
# said too, and killed.
FORK_AND_TERMINATE = """
import os, signal, sys, time

CHILDREN, GRACE = 200, 5.0
ended = alive = 0
for _ in range(CHILDREN):
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            ended += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
            break
        if time.monotonic() > deadline:
            alive += 1
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            break
        time.sleep(0.001)
print("ended", ended, "alive", alive, flush=True)
"""


@pytest.mark.parametrize("tool", ["run", "mem", "run --subprocesses"])
@pytest.mark.parametrize("python", version_params())
def test_a_child_terminated_as_it_is_forked_ends(python, tool, tmp_path):
    """A child the program forks has SIGTERM's default action back, and a
    SIGTERM that comes before it has (between fork and the launcher's
    after-fork hook) is not lost: held back across the fork, it comes once
    the default is in place.  (It was taken by the handler's C half and
    then dropped: a pool's worker terminated just after it was forked
    lived on and its parent waited for ever, about one run in ten of
    test_mem's forked-children test on a loaded machine.)  With
    --subprocesses a child keeps sonde's handler instead, writes its own
    part, and ends by the signal all the same: every one is in the sum."""
    python = need(python)
    (tmp_path / "forks.py").write_text(FORK_AND_TERMINATE)
    env = dict(os.environ, SONDE_PYTHON=python)
    env.pop("PYTHONPATH", None)
    args = [SONDE] + tool.split() + ["-o", "out." + ("prof" if "run" in tool else "json"),
                                     "forks.py"]
    done = subprocess.run(args, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600,
                          preexec_fn=signals_at_default)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "ended 200 alive 0", done.stdout
    if "--subprocesses" in tool:
        assert "processes: 201, the program and 200 children" in done.stderr, done.stderr


# Blocks SIGTERM, sends it to itself, then (in C, with no Python code
# between) unblocks it -- its C handler runs at once -- and waits in
# pause(): the signal came before the wait, which nothing else ends.
PAUSE_AFTER_UNBLOCK = r"""
#include <signal.h>
#include <unistd.h>
void unblock_then_pause(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    pause();
}
"""

SIGNAL_BEFORE_WAIT = """
import ctypes, os, signal, sys
lib = ctypes.CDLL(sys.argv[1])
def work():
    return sum(range(1000))
work()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
os.kill(os.getpid(), signal.SIGTERM)
lib.unblock_then_pause()
print("not ended by the signal", flush=True)
"""


@pytest.mark.parametrize("python", version_params())
def test_a_signal_just_before_a_blocking_call_ends_the_program(python, tmp_path):
    """A SIGTERM whose C handler ran just before the program blocked in a
    call no later signal would end (a pool worker about to wait on its
    queue while its parent terminates the pool): a bare run dies at once;
    under sonde run the Python handler's flag alone would leave it blocked
    for ever (the parent waiting for it too).  sonde sends the signal again
    until its handler runs: the profile is written and the program ends by
    SIGTERM."""
    python = need(python)
    (tmp_path / "pause.c").write_text(PAUSE_AFTER_UNBLOCK)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "pause.so"),
                    str(tmp_path / "pause.c")], check=True)
    (tmp_path / "racer.py").write_text(SIGNAL_BEFORE_WAIT)
    env = dict(os.environ, SONDE_PYTHON=python)
    env.pop("PYTHONPATH", None)
    done = subprocess.run([SONDE, "run", "-o", "out.prof", "racer.py", str(tmp_path / "pause.so")],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                          preexec_fn=signals_at_default)
    assert done.returncode == -signal.SIGTERM, (done.returncode, done.stderr)
    assert done.stdout == ""
    stats = marshal.loads((tmp_path / "out.prof").read_bytes())
    assert [v[0] for k, v in stats.items() if k[2] == "work"] == [1], stats.keys()


# A service that warms up on the CPU (so a sampler running beside it has
# samples of `warm`, however busy the machine: the spin counts the
# service's own CPU time), says it is ready, then waits to be stopped; with
# an argument it ends itself on SIGTERM and SIGHUP, saying so, and exits 0.
# It waits as an event loop does, on its signal wakeup descriptor: a signal
# that comes between "ready" and the wait still ends the wait (a bare
# time.sleep would sleep on, its handler pending, in a bare run too).
WARM_THEN_WAIT = """
import os, select, signal, sys, time

def warm():
    while time.process_time() < 0.3:
        pass

def stop(sig, frame):
    print("stopping on", sig, flush=True)
    sys.exit(0)

woken, wake = os.pipe()
os.set_blocking(wake, False)
signal.set_wakeup_fd(wake)
if len(sys.argv) > 1:
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
warm()
print("ready", flush=True)
while True:
    select.select([woken], [], [])
"""


@pytest.mark.parametrize("python", version_params())
@pytest.mark.parametrize("handles", [False, True], ids=["default", "handled"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_record_passes_a_stop_on_to_its_command(python, handles, sig, tmp_path):
    """`timeout`, `kill` and systemd send SIGTERM (a lost terminal SIGHUP)
    to `sonde record -- CMD` alone: sonde writes its profile, passes the
    signal on, and ends as the command does -- killed by the signal, or
    with the exit code the command's own handler chose.  (It wrote the
    profile and then waited for a command that was never told to stop.)"""
    python = need(python)
    (tmp_path / "service.py").write_text(WARM_THEN_WAIT)
    cmd = [SONDE, "record", "-f", "collapsed", "-o", "out.txt", "--", python, "service.py"]
    proc = subprocess.Popen(cmd + (["handle"] if handles else []), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, preexec_fn=signals_at_default)
    ready = proc.stdout.readline()
    out, err = signal_then_wait(proc, sig)
    assert ready == "ready\n", err
    assert proc.returncode == (0 if handles else -sig), err
    assert out == ("stopping on %d\n" % sig if handles else ""), err
    stacks = (tmp_path / "out.txt").read_text().splitlines()
    assert any(stack.rsplit(" ", 1)[0].endswith("service.py:5)") and ";warm (" in stack
               for stack in stacks), stacks
