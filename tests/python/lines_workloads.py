"""Functions whose per-line hits sonde lines must count exactly: loops, comprehensions,
lambdas, generator expressions, generators, coroutines, exceptions, recursion, threads."""

import asyncio
import threading


def loops(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
        else:
            total -= 1
    while total > 0:
        total //= 2
    return total


def comprehension(n):
    squares = [i * i for i in range(n)]
    evens = {i for i in squares if i % 2 == 0}
    total = sum(x + 1 for x in squares)
    pairs = {k: v for k, v in zip(squares,
                                  sorted(squares, key=lambda s: -s))}
    nested = [[j for j in range(i)] for i in range(4)]
    scale = lambda v: v * 2
    return len(evens) + total + len(pairs) + len(nested) + scale(n)


def generator(n):
    for i in range(n):
        if i % 2:
            yield i
    yield -1


def consume():
    return sum(generator(20))


async def step(i):
    await asyncio.sleep(0)
    return i


async def coroutine(n):
    total = 0
    for i in range(n):
        total += await step(i)
    return total


def run_coroutine():
    return asyncio.run(coroutine(5))


def raises(n):
    caught = 0
    for i in range(n):
        try:
            if i % 2:
                raise ValueError(i)
            caught -= 1
        except ValueError:
            caught += 1
    return caught


def recursive(n):
    if n <= 1:
        return 1
    return n * recursive(n - 1)


def in_threads():
    workers = [threading.Thread(target=loops, args=(50,)) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


TRACED = [loops, comprehension, generator, coroutine, raises, recursive]


def everything():
    loops(30)
    comprehension(10)
    consume()
    run_coroutine()
    raises(7)
    recursive(6)
    in_threads()
