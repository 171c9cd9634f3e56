"""The process bench_sampler.py --async samples: CPU-bound inside a chain of
asyncio tasks.

Task "outer" awaits task "middle", which awaits task "inner"; inner's
coroutine calls down 10 coroutines deep and then loops for ever calling a
leaf function that does a fixed amount of arithmetic (one unit of work),
yielding to the event loop every 100 units.  On SIGUSR1 it prints one line,
"UNITS MONOTONIC", as target_deep.py does, and it prints "ready" once the
loop starts.  One thread, so every sample of it is one stack.

    python3 bench/target_async.py
"""

import asyncio
import signal
import time

DEPTH = 10
units = 0


def report(signum, frame):
    """SIGUSR1: print the units done so far and the time."""
    print(units, time.monotonic(), flush=True)


def leaf():
    """One unit of work: a hundred multiplications and additions."""
    total = 0
    for i in range(100):
        total += i * i
    return total


async def descend(depth):
    """Await down to DEPTH coroutines, then work, yielding now and then."""
    global units
    if depth < DEPTH:
        return await descend(depth + 1)
    print("ready", flush=True)
    while True:
        for _ in range(100):
            leaf()
            units += 1
        await asyncio.sleep(0)


async def chain(name, inner):
    await asyncio.create_task(inner, name=name)


async def main():
    await chain("outer", chain("middle", chain("inner", descend(1))))


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, report)
    asyncio.run(main())
