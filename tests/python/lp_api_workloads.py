"""Functions of every kind line_profiler's users profile: a loop, a
generator, a coroutine, an async generator, a class's methods."""

import asyncio


def loop(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
    return total


def gen(n):
    for i in range(n):
        yield i * 2
    return "done"


async def coro(n):
    total = 0
    for i in range(n):
        await asyncio.sleep(0)
        total += i
    return total


async def agen(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


class Shapes:
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


FUNCTIONS = [loop, gen, coro, agen, Shapes.__init__, Shapes.area]
