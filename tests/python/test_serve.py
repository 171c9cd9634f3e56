"""sonde view --serve against hostile clients: only a Host naming the
loopback and the port gets the page (a DNS-rebound name gets 403 and none
of it), a request dribbled a byte at a time is cut at its whole-request
bound, and slow clients holding every slot cannot keep a normal one from
its page.  Every wait has a hang guard; nothing is timed."""

import json
import os
import re
import select
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import SONDE

MAX_CLIENTS = 64  # serve.c's slots


def tiny_profile(folder):
    (folder / "p.json").write_text(json.dumps(
        {"sonde": 1, "mode": "run", "unit": "seconds",
         "functions": [{"name": "work", "qualname": "work", "file": "/srv/app.py",
                        "line": 1, "kind": "python"}],
         "threads": [{"ident": 1, "native_id": 1, "name": "MainThread", "root": 1}],
         "nodes": [[-1, 0, 0, 0, 0], [-1, 0, 0, 1.0, 0], [0, 1, 1, 1.0, 1.0]], "stats": []}))


@pytest.fixture
def server(tmp_path, request):
    """(port, page bytes) of a running `sonde view --serve`, with the
    whole-request bound the test's REQUEST_MS names, if it names one."""
    tiny_profile(tmp_path)
    env = dict(os.environ)
    bound = getattr(request.function, "request_ms", None)
    if bound:
        env["SONDE_SERVE_REQUEST_MS"] = str(bound)
    proc = subprocess.Popen([SONDE, "view", "p.json", "-o", "p.html", "--serve"],
                            cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True)
    try:
        m = re.match(r"serving http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
        assert m
        yield int(m.group(1)), (tmp_path / "p.html").read_bytes()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def ask(port, request):
    """The whole answer to one raw request."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        answer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return answer
            answer += chunk


def get(port, host):
    head = b"GET / HTTP/1.1\r\n" + (b"Host: " + host + b"\r\n" if host is not None else b"")
    answer = ask(port, head + b"Connection: close\r\n\r\n")
    status, _, body = answer.partition(b"\r\n\r\n")
    return int(status.split()[1]), body


@pytest.mark.parametrize("host", [b"evil.example", b"evil.example:%d", b"127.0.0.1.evil.example:%d",
                                  b"127.0.0.1:1", b"localhost", None])
def test_foreign_host_gets_none_of_the_page(server, host):
    port, page = server
    if host and b"%d" in host:
        host = host % port
    status, body = get(port, host)
    assert status == 403
    assert len(body) < 200 and b"<html" not in body.lower()
    assert b"work" not in body and page not in body


def test_two_hosts_are_refused(server):
    port, page = server
    answer = ask(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nHost: evil.example\r\n\r\n" % port)
    assert answer.startswith(b"HTTP/1.0 403 ") and page not in answer


@pytest.mark.parametrize("host", [b"127.0.0.1:%d", b"localhost:%d", b"LocalHost:%d", b"[::1]:%d"])
def test_own_host_gets_the_page(server, host):
    port, page = server
    assert get(port, host % port) == (200, page)
    assert urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=30).read() == page


def closed_by_server(sock):
    """Whether the server has closed sock (EOF or reset) by now."""
    if not select.select([sock], [], [], 0.1)[0]:
        return False
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


def test_request_dribbled_a_byte_at_a_time_is_cut(server):
    """Each byte used to give the client 10 s more: a request that never
    ends held its slot for ever.  Now the whole request has 300 ms."""
    port, _ = server
    dribble = socket.create_connection(("127.0.0.1", port), timeout=30)
    guard = time.monotonic() + 60
    sent = 0
    try:
        while time.monotonic() < guard:
            try:
                dribble.send(b"GET / HTTP/1.1\r\nX-Pad: " if sent == 0 else b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
            if closed_by_server(dribble):
                break
        else:
            pytest.fail("the server kept a request that never ended for 60 s")
        assert sent < 2000  # cut long before its buffer would be full
    finally:
        dribble.close()


test_request_dribbled_a_byte_at_a_time_is_cut.request_ms = 300


def listen_queue(port):
    """Connections waiting in the server's accept queue (/proc/net/tcp's
    rx_queue of the listening socket)."""
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if f[1].endswith(":%04X" % port) and f[3] == "0A":
            return int(f[4].split(":")[1], 16)
    raise AssertionError("no listening socket on port %d" % port)


def test_slow_clients_in_every_slot_do_not_starve_a_normal_one(server):
    port, page = server
    slow = []
    stop = threading.Event()

    def trickle():  # one byte to each slow client, over and over, as an attacker would
        while not stop.is_set():
            for s in slow:
                try:
                    s.send(b"a")
                except OSError:
                    pass
            stop.wait(0.2)

    try:
        for _ in range(MAX_CLIENTS):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
            slow.append(s)
        guard = time.monotonic() + 60
        while listen_queue(port) > 0:  # every slow client holds a slot
            assert time.monotonic() < guard, "the server did not accept its clients"
            time.sleep(0.05)
        feeder = threading.Thread(target=trickle, daemon=True)
        feeder.start()
        body = urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=30).read()
        assert body == page
    finally:
        stop.set()
        for s in slow:
            s.close()


test_slow_clients_in_every_slot_do_not_starve_a_normal_one.request_ms = 600000  # only a slot
# taken from the oldest slow client can serve the normal one in time
