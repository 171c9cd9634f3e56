"""Workloads for bench_run.py: each takes a size and returns nothing useful.

SIZES gives each workload's size for a normal run and for --quick; a
normal size takes about 0.1 s bare on CPython 3.11 on a 2-core AMD EPYC VM
(the sizes are kept there because yappi, with its CPU clock, makes each
call 20-45 times slower and dominates the run time).
"""

import difflib
import json
import re


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursive(n):
    """Plain Python recursion: one call per node of fib's call tree."""
    fib(n)


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def scaled(self, k):
        return Vec(self.x * k, self.y * k)

    @property
    def norm1(self):
        return abs(self.x) + abs(self.y)


class Body:
    def __init__(self, pos, vel):
        self.pos = pos
        self.vel = vel

    @property
    def energy(self):
        return self.vel.norm1

    def step(self, dt):
        self.pos = self.pos + self.vel.scaled(dt)

    def bounce(self):
        if self.pos.norm1 > 100:
            self.vel = self.vel.scaled(-1)


def methods(n):
    """Many small method calls, properties and dunders on small objects."""
    bodies = [Body(Vec(i, -i), Vec(1 + i % 3, 2 - i % 5)) for i in range(50)]
    for _ in range(n):
        for body in bodies:
            body.step(0.5)
            body.bounce()
    sum(body.energy for body in bodies)


def stdlib(n):
    """Real standard library code, n times: json, re and difflib."""
    data = {
        "users": [
            {"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 7)] * (i % 4),
             "scores": [i / 3, i % 11, None], "active": i % 2 == 0}
            for i in range(40)
        ]
    }
    for _ in range(n):
        text = json.dumps(data, indent=2, sort_keys=True)
        json.loads(text)
        re.findall(r'"name": "(\w+)"', text)
        re.sub(r"\s+", " ", text)
        lines = text.splitlines()[:300]
        edited = [line.replace("t3", "T3") for line in lines if "t5" not in line]
        difflib.SequenceMatcher(None, lines, edited).ratio()
        list(difflib.unified_diff(lines, edited, lineterm=""))


WORKLOADS = {"recursive": recursive, "methods": methods, "stdlib": stdlib}

# name: (normal size, --quick size)
SIZES = {"recursive": (30, 26), "methods": (5000, 1500), "stdlib": (140, 40)}
