"""The process bench_sampler.py --async samples: target_deep.py's work inside
a chain of asyncio tasks.

Task "outer" awaits task "middle", which awaits task "inner"; inner's
coroutine awaits down 10 coroutines deep and then loops for ever calling
target_deep's leaf function (one unit of work), yielding to the event loop
every 100 units.  It answers SIGUSR1 with target_deep's report line
("UNITS MONOTONIC") and prints "ready" once the loop starts.  One thread,
so every sample of it is one stack.

    python3 bench/target_async.py
"""

import asyncio
import signal

import target_deep as work  # bench/ is the script's folder: sys.path[0]

DEPTH = 10


async def descend(depth):
    """Await down to DEPTH coroutines, then work, yielding now and then."""
    if depth < DEPTH:
        return await descend(depth + 1)
    print("ready", flush=True)
    while True:
        for _ in range(100):
            work.leaf()
            work.units += 1
        await asyncio.sleep(0)


async def chain(name, inner):
    await asyncio.create_task(inner, name=name)


async def main():
    await chain("outer", chain("middle", chain("inner", descend(1))))


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, work.report)
    asyncio.run(main())
