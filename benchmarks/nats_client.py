"""Our NATS client against nats-py on the same nats-server, in one process run.

Not a row of the suite (it needs the ``nats-server`` binary and ``nats-py``):
run it by hand::

    .venv/bin/python -m benchmarks.nats_client [--rounds 5] [--messages 100000]

Workloads (wall clock, and the CPU time of this process: both clients of a
workload run in it; the server is another process):

* ``pubsub``: one client publishes N small messages (16 bytes), another
  receives them through a callback subscription; from the first publish to the
  last message received. Unit: ns per message.
* ``stream``: the same, received by a task iterating the subscription
  (ours: ``next_msgs(1024)``, drain-many; nats-py: ``sub.messages``).
* ``request``: sequential request/reply round trips to a responder on another
  connection of the same implementation. Unit: microseconds per round trip.

Implementations: ``ours`` on asyncio, uvloop and Trio; ``nats-py`` on asyncio
and uvloop. Samples alternate between implementations within each round;
the table shows medians and each ratio against nats-py on asyncio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from actors.nats import Msg, NatsServer, connect

PAYLOAD = b"x" * 16


async def pubsub_ours(url: str, count: int) -> float:
    done = anyio.Event()
    received = 0

    def on_msg(msg: Msg) -> None:
        nonlocal received
        received += 1
        if received == count:
            done.set()

    async with connect(url) as pub, connect(url) as sub:
        await sub.subscribe("bench.pubsub", callback=on_msg)
        await sub.flush()
        start = time.perf_counter()
        publish = pub.publish
        for _ in range(count):
            await publish("bench.pubsub", PAYLOAD)
        await done.wait()
        return time.perf_counter() - start


async def pubsub_nats_py(url: str, count: int) -> float:
    import asyncio

    import nats

    done = asyncio.Event()
    received = 0

    async def on_msg(msg: Any) -> None:
        nonlocal received
        received += 1
        if received == count:
            done.set()

    pub = await nats.connect(url, pending_size=8 * 1024 * 1024)
    sub = await nats.connect(url)
    try:
        await sub.subscribe("bench.pubsub", cb=on_msg, pending_msgs_limit=count + 1)
        await sub.flush()
        start = time.perf_counter()
        publish = pub.publish
        for _ in range(count):
            await publish("bench.pubsub", PAYLOAD)
        await done.wait()
        return time.perf_counter() - start
    finally:
        await pub.close()
        await sub.close()


async def stream_ours(url: str, count: int) -> float:
    async with connect(url) as pub, connect(url) as sub:
        subscription = await sub.subscribe("bench.stream", max_pending=count + 1)
        await sub.flush()
        start = time.perf_counter()
        publish = pub.publish
        received = 0
        async with anyio.create_task_group() as tg:

            async def consume() -> None:
                nonlocal received
                while received < count:
                    received += len(await subscription.next_msgs(1024))

            tg.start_soon(consume)
            for _ in range(count):
                await publish("bench.stream", PAYLOAD)
        return time.perf_counter() - start


async def stream_nats_py(url: str, count: int) -> float:
    import nats

    pub = await nats.connect(url, pending_size=8 * 1024 * 1024)
    sub = await nats.connect(url)
    try:
        subscription = await sub.subscribe("bench.stream", pending_msgs_limit=count + 1)
        await sub.flush()
        start = time.perf_counter()
        received = 0
        async with anyio.create_task_group() as tg:

            async def consume() -> None:
                nonlocal received
                async for _ in subscription.messages:
                    received += 1
                    if received == count:
                        break

            tg.start_soon(consume)
            publish = pub.publish
            for _ in range(count):
                await publish("bench.stream", PAYLOAD)
        return time.perf_counter() - start
    finally:
        await pub.close()
        await sub.close()


async def request_ours(url: str, count: int) -> float:
    async with connect(url) as requester, connect(url) as responder:

        def respond(msg: Msg) -> None:
            assert msg.reply is not None
            responder.publish_nowait(msg.reply, msg.data)

        await responder.subscribe("bench.request", callback=respond)
        await responder.flush()
        start = time.perf_counter()
        for _ in range(count):
            await requester.request("bench.request", PAYLOAD)
        return time.perf_counter() - start


async def request_nats_py(url: str, count: int) -> float:
    import nats
    import nats.errors

    requester = await nats.connect(url)
    responder = await nats.connect(url)
    try:

        async def respond(msg: Any) -> None:
            await responder.publish(msg.reply, msg.data)

        await responder.subscribe("bench.request", cb=respond)
        await responder.flush()
        for _ in range(100):  # nats-py's flush does not always cover the SUB
            try:
                await requester.request("bench.request", PAYLOAD, timeout=5)
                break
            except nats.errors.NoRespondersError:
                await anyio.sleep(0.01)
        start = time.perf_counter()
        for _ in range(count):
            await requester.request("bench.request", PAYLOAD, timeout=5)
        return time.perf_counter() - start
    finally:
        await requester.close()
        await responder.close()


Impl = tuple[str, str, Callable[[str, int], Awaitable[float]]]

IMPLS: dict[str, list[Impl]] = {
    "pubsub": [
        ("nats-py", "asyncio", pubsub_nats_py),
        ("ours", "asyncio", pubsub_ours),
        ("nats-py", "uvloop", pubsub_nats_py),
        ("ours", "uvloop", pubsub_ours),
        ("ours", "trio", pubsub_ours),
    ],
    "stream": [
        ("nats-py", "asyncio", stream_nats_py),
        ("ours", "asyncio", stream_ours),
        ("nats-py", "uvloop", stream_nats_py),
        ("ours", "uvloop", stream_ours),
        ("ours", "trio", stream_ours),
    ],
    "request": [
        ("nats-py", "asyncio", request_nats_py),
        ("ours", "asyncio", request_ours),
        ("nats-py", "uvloop", request_nats_py),
        ("ours", "uvloop", request_ours),
        ("ours", "trio", request_ours),
    ],
}


def _run(
    backend: str, fn: Callable[[str, int], Awaitable[float]], *args: Any
) -> tuple[float, float]:
    """Run one sample: (wall seconds, CPU seconds of this process)."""
    cpu = time.process_time()
    if backend == "trio":
        wall = anyio.run(fn, *args, backend="trio")
    else:
        options = {"use_uvloop": backend == "uvloop"}
        wall = anyio.run(fn, *args, backend="asyncio", backend_options=options)
    # Setup and teardown are in the CPU time too: small beside the workload.
    return wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=5_000)
    args = parser.parse_args()
    counts = {
        "pubsub": args.messages,
        "stream": args.messages,
        "request": args.requests,
    }
    units = {
        "pubsub": ("ns/msg", 1e9),
        "stream": ("ns/msg", 1e9),
        "request": ("us/req", 1e6),
    }
    with NatsServer() as server:
        samples: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
        for workload, impls in IMPLS.items():
            count = counts[workload]
            for _impl, backend, fn in impls:  # warm-up
                _run(backend, fn, server.url, max(count // 10, 1))
            for _ in range(args.rounds):
                for impl, backend, fn in impls:
                    wall, cpu = _run(backend, fn, server.url, count)
                    samples.setdefault((workload, impl, backend), []).append(
                        (wall / count, cpu / count)
                    )
        print(
            f"NATS client: {args.rounds} rounds, {args.messages} messages, "
            f"{args.requests} requests, medians (wall clock)\n"
        )
        print(
            "| workload | implementation | backend | wall per item | vs nats-py "
            "asyncio | client CPU per item | vs nats-py asyncio |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for workload, impls in IMPLS.items():
            unit, scale = units[workload]
            base = samples[(workload, "nats-py", "asyncio")]
            base_wall = statistics.median(s[0] for s in base)
            base_cpu = statistics.median(s[1] for s in base)
            for impl, backend, _ in impls:
                mine = samples[(workload, impl, backend)]
                wall = statistics.median(s[0] for s in mine)
                cpu = statistics.median(s[1] for s in mine)
                print(
                    f"| {workload} | {impl} | {backend} | {wall * scale:.1f} {unit} "
                    f"| {wall / base_wall:.2f}x | {cpu * scale:.1f} {unit} "
                    f"| {cpu / base_cpu:.2f}x |"
                )


if __name__ == "__main__":
    main()
