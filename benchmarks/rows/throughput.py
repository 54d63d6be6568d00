"""Throughput rows as a user times them: plain actors, the whole job, both clocks.

The ``queued``, ``flood`` and ``fan_out`` rows of ``actors.py`` time the work
inside an entered ``ActorSystem`` (entering and leaving it is not timed) on
the run's clock, and compare pools as well as plain actors with every
baseline. A user who times a job sees more: the system starting, the work,
and the system stopping (every actor's stop, its hooks, its termination). These
rows time exactly that, once on the wall clock and once on the CPU clock of
the process, whatever ``--clock`` says (the clock is in the row's name), with
plain actors (one actor per worker, ``tell``), beside the lightest
hand-written asyncio code timed the same way: from before the queues are made
to after the ``asyncio.TaskGroup`` has exited (its waiting consumers
cancelled).

* ``throughput/queued/{wall,cpu}``: 100,000 messages told to one idle actor
  first, then it drains them; asyncio: ``put_nowait`` into a queue one
  consumer task reads.
* ``throughput/flood/unbounded/{wall,cpu}``: 4 producer tasks ``tell``
  100,000 messages to one actor; asyncio: 4 producer tasks ``put_nowait``.
* ``throughput/flood/bounded/{wall,cpu}``: the same with capacity 64:
  producers ``await ref.send`` / ``await queue.put``.
* ``throughput/fan_out/{4,16}/{wall,cpu}``: one root tells 100,000 messages
  in turn to W plain actors it spawned; asyncio: W queues fed in turn with
  ``put_nowait``, W consumer tasks.

Every handler and consumer does the same bookkeeping per message (one
counter increment and comparison). asyncio and uvloop only: the baseline is
asyncio's. Unit: one message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import anyio

from actors import ActorRef, ActorSystem

from .._registry import ASYNCIO_LOOPS, Impl, Row, Sample, SampleFn, register
from ._actor_tasks import Tally, shares
from ._systems import Counter

__all__: list[str] = []

MESSAGES = 100_000  #: messages per sample
QUICK = 1_000  #: with --quick
PRODUCERS = 4  #: producer tasks of the flood rows
BOUNDED = 64  #: the capacity of flood/bounded
#: The clocks, named as ``--clock`` names them; each row uses its own.
CLOCKS: dict[str, Callable[[], float]] = {
    "wall": time.perf_counter,
    "cpu": time.process_time,
}


async def _tell(ref: ActorRef[Any], count: int) -> None:
    tell = ref.tell
    for i in range(count):
        tell(i)


async def _send(ref: ActorRef[Any], count: int) -> None:
    send = ref.send
    for i in range(count):
        await send(i)


def ours_queued(clock: Callable[[], float]) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        start = clock()
        async with ActorSystem() as system:
            ref = system.spawn(Counter, tally)
            await _tell(ref, count)
            await tally.done.wait()
        return Sample(clock() - start, tally.count)

    return sample


def ours_flood(clock: Callable[[], float], capacity: int | None) -> SampleFn:
    produce = _tell if capacity is None else _send

    async def sample(count: int) -> Sample:
        tally = Tally(count)
        start = clock()
        async with ActorSystem() as system:
            ref = system.spawn(Counter, tally, capacity=capacity)
            async with anyio.create_task_group() as tg:
                for share in shares(count, PRODUCERS):
                    tg.start_soon(produce, ref, share)
            await tally.done.wait()
        return Sample(clock() - start, tally.count)

    return sample


def ours_fan_out(clock: Callable[[], float], workers: int) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        start = clock()
        async with ActorSystem() as system:
            tells = [system.spawn(Counter, tally).tell for _ in range(workers)]
            for i in range(count):
                tells[i % workers](i)
            await tally.done.wait()
        return Sample(clock() - start, tally.count)

    return sample


async def _consume(queue: asyncio.Queue[Any], tally: Tally) -> None:
    get = queue.get
    while True:
        await get()
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()


async def _put_nowait(queue: asyncio.Queue[Any], count: int) -> None:
    put_nowait = queue.put_nowait
    for i in range(count):
        put_nowait(i)


async def _put(queue: asyncio.Queue[Any], count: int) -> None:
    put = queue.put
    for i in range(count):
        await put(i)


def queue_queued(clock: Callable[[], float]) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        start = clock()
        queue: asyncio.Queue[int] = asyncio.Queue()
        async with asyncio.TaskGroup() as tg:
            consumer = tg.create_task(_consume(queue, tally))
            await _put_nowait(queue, count)
            await tally.done.wait()
            consumer.cancel()
        return Sample(clock() - start, tally.count)

    return sample


def queue_flood(clock: Callable[[], float], capacity: int) -> SampleFn:
    produce = _put_nowait if capacity == 0 else _put

    async def sample(count: int) -> Sample:
        tally = Tally(count)
        start = clock()
        queue: asyncio.Queue[int] = asyncio.Queue(capacity)
        async with asyncio.TaskGroup() as tg:
            consumer = tg.create_task(_consume(queue, tally))
            producers = [
                tg.create_task(produce(queue, share))
                for share in shares(count, PRODUCERS)
            ]
            await asyncio.gather(*producers)
            await tally.done.wait()
            consumer.cancel()
        return Sample(clock() - start, tally.count)

    return sample


def queue_fan_out(clock: Callable[[], float], workers: int) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        start = clock()
        queues: list[asyncio.Queue[int]] = [asyncio.Queue() for _ in range(workers)]
        async with asyncio.TaskGroup() as tg:
            consumers = [tg.create_task(_consume(queue, tally)) for queue in queues]
            nowaits = [queue.put_nowait for queue in queues]
            for i in range(count):
                nowaits[i % workers](i)
            await tally.done.wait()
            for consumer in consumers:
                consumer.cancel()
        return Sample(clock() - start, tally.count)

    return sample


def _register() -> None:
    for name, clock in CLOCKS.items():
        rows: list[tuple[str, str, SampleFn, SampleFn]] = [
            (
                "queued",
                f"{MESSAGES:,} messages told to one idle actor first, then drained",
                ours_queued(clock),
                queue_queued(clock),
            ),
            (
                "flood/unbounded",
                f"{PRODUCERS} producers tell one actor {MESSAGES:,} messages",
                ours_flood(clock, None),
                queue_flood(clock, 0),
            ),
            (
                "flood/bounded",
                f"{PRODUCERS} producers send one actor {MESSAGES:,} messages, "
                f"capacity {BOUNDED}",
                ours_flood(clock, BOUNDED),
                queue_flood(clock, BOUNDED),
            ),
        ]
        for workers in (4, 16):
            rows.append(
                (
                    f"fan_out/{workers}",
                    f"one root tells {MESSAGES:,} messages in turn to {workers} "
                    "plain actors",
                    ours_fan_out(clock, workers),
                    queue_fan_out(clock, workers),
                )
            )
        for row, description, ours, queue in rows:
            register(
                Row(
                    f"throughput/{row}/{name}",
                    f"{description}; the whole job, system start and stop "
                    f"included, {name} clock",
                    MESSAGES,
                    QUICK,
                    (
                        Impl("ours", ours, ASYNCIO_LOOPS),
                        Impl("asyncio.Queue (light)", queue, ASYNCIO_LOOPS),
                    ),
                    unit="message",
                )
            )


_register()
