"""Workloads whose call graphs sonde must count exactly as cProfile does.

Each workload is a function taking no arguments; together they cover
recursion, generators, coroutines, exceptions, methods (bound, unbound,
descriptors, properties), lambdas and comprehensions, and real standard
library code (json, re, difflib).
"""

import asyncio
import difflib
import json
import re


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def recursion():
    fib(15)
    is_even(50)


def countdown(n):
    while n:
        yield n
        n -= 1


def delegating(n):
    yield from countdown(n)
    yield from (i * i for i in range(n))


def generators():
    sum(countdown(100))
    list(delegating(20))
    g = countdown(10)
    next(g)
    g.close()
    sorted(x for x in range(50) if x % 3)


async def leaf(i):
    await asyncio.sleep(0)
    return i * 2


async def gather_all():
    results = await asyncio.gather(*(leaf(i) for i in range(5)))
    return sum(results)


def coroutines():
    asyncio.run(gather_all())


class Bad(Exception):
    pass


def raiser(n):
    if n % 3 == 0:
        raise Bad(n)
    return n


def gen_raiser():
    yield 1
    raise Bad("in a generator")


def exceptions():
    caught = 0
    for i in range(30):
        try:
            raiser(i)
        except Bad:
            caught += 1
    for text in ("1", "x", "2", "y"):
        try:
            int(text)
        except ValueError:
            caught += 1
    try:
        list(gen_raiser())
    except Bad:
        caught += 1
    return caught


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    @property
    def norm(self):
        return abs(self.x) + abs(self.y)

    def moved(self, dx):
        return Point(self.x + dx, self.y)

    @classmethod
    def origin(cls):
        return cls(0, 0)

    @staticmethod
    def parse(text):
        return Point(*map(int, text.split(",")))


def methods():
    points = [Point.origin()]
    for i in range(100):
        p = points[-1].moved(i)
        points.append(p)
        _ = p.norm
    lookup = {}
    for i in range(50):
        lookup.get(i % 7)
        lookup.setdefault(i % 5, []).append(i)
    str.join(",", ["a", "b"])     # an unbound method descriptor
    Point.parse("3,4")
    sorted(points, key=lambda q: -q.x)
    {k: len(v) for k, v in lookup.items()}
    {p.x % 3 for p in points}


def stdlib():
    data = {"items": [{"id": i, "tags": ["x"] * (i % 4), "v": i / 7} for i in range(60)]}
    text = json.dumps(data, indent=1, sort_keys=True)
    json.loads(text)
    re.findall(r"\"id\": (\d+)", text)
    re.sub(r"\s+", " ", text[:2000])
    a = text.splitlines()[:120]
    b = [line.replace("x", "y") for line in a]
    difflib.SequenceMatcher(None, a, b).ratio()
    list(difflib.unified_diff(a, b, lineterm=""))


ALL = {
    "recursion": recursion,
    "generators": generators,
    "coroutines": coroutines,
    "exceptions": exceptions,
    "methods": methods,
    "stdlib": stdlib,
}
