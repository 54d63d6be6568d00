"""Actor rows: our actors beside the same workload written on the tools a
user would pick instead.

* ``queued``: 100,000 messages are told to one idle actor first (nothing runs
  meanwhile), then it drains them. Unit: one message.
* ``flood/unbounded``, ``flood/bounded``: 4 producer tasks share 100,000
  messages to one actor; bounded means capacity 64. Our producers ``tell``
  where the row is unbounded and ``await send`` (backpressure) where it is
  bounded. Unit: one message.
* ``fan_out/workers/{4,16}/{round_robin,shared_queue}``: one root tells
  100,000 messages to a pool of W workers. The others: W queues fed in turn
  (round robin), or one queue W consumers share. Unit: one message.
* ``fan_out/workers/{4,16}/actors``: the same with W plain actors (no pool)
  the root tells in turn; the others as in ``round_robin``. Unit: one message.
* ``ping_pong/pairs/{1,4}``: N pairs bounce a message, 20,000 round trips per
  pair (our actors ``tell`` each other). Unit: one round trip.
* ``ask``: one task asks one actor 20,000 times in turn (``await ref.ask``,
  default timeout). Unit: one round trip.
* ``fan_out_slow/workers/4/{round_robin,shared_queue}``: 64 jobs of 10 ms
  (``anyio.sleep``) told at once to a pool of 4 idle workers; the other is 4
  tasks sharing one anyio memory stream. Its point is parallelism, not CPU:
  it always times with ``time.perf_counter()``, whatever ``--clock`` says (the
  ideal is 64 / 4 * 10 ms = 0.16 s). Unit: one job.

The others, in the same process (see ``_actor_tasks`` and ``_actor_pykka``):
asyncio.Queue tasks (asyncio, uvloop), anyio memory object streams (every
backend), Trio memory channels (trio), Pykka actors (threads: run once per
round and shown on every backend's table, labelled ``pykka (threads)``). The
fan_out, ping_pong and ask rows also have each task-based flavour *light*
(``asyncio.Queue (light)``, ``anyio (light)``, ``trio (light)``): non-waiting
sends into unbounded queues, and a future (asyncio) or an Event plus a result
slot (anyio, Trio) per ask; the table's ``vs fastest baseline`` column divides
ours by the fastest implementation of each round.

Every handler or consumer does the same bookkeeping per message (one
:class:`Tally` increment and comparison) and every sample reports what its
consumers counted, which the harness checks against what was sent. Setting up
(spawning, creating tasks and queues) is timed; entering and leaving the
ActorSystem is not (the task-based versions have nothing like it).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from time import perf_counter
from typing import Any

import anyio

from actors import Actor, ActorRef, ActorSystem, Routing

from .._clock import now
from .._registry import ASYNCIO_LOOPS, TRIO_ONLY, Impl, Row, Sample, SampleFn, register
from ._actor_pykka import NAME as PYKKA
from ._actor_pykka import (
    pykka_ask,
    pykka_fan_out,
    pykka_flood,
    pykka_ping_pong,
    pykka_queued,
)
from ._actor_tasks import (
    ANYIO,
    Tally,
    queue_ask,
    queue_ask_light,
    queue_fan_out,
    queue_flood,
    queue_ping_pong,
    queue_queued,
    shares,
    streams_ask,
    streams_ask_light,
    streams_fan_out,
    streams_flood,
    streams_ping_pong,
    streams_queued,
    trio_flavour,
)
from ._systems import Counter

__all__: list[str] = []

MESSAGES = 100_000  #: messages per sample of queued, flood and fan_out
ROUND_TRIPS = 20_000  #: round trips per sample of ask, and per pair of ping_pong
PRODUCERS = 4  #: producer tasks of the flood rows
BOUNDED = 64  #: the capacity of flood/bounded
QUICK = 1_000  #: messages per sample with --quick (round trips: QUICK // 5)
SLOW_JOBS = 64  #: jobs per sample of fan_out_slow (16 with --quick)
SLOW_WORKERS = 4  #: workers (consumer tasks) of fan_out_slow
SLOW_SECONDS = 0.01  #: how long one job of fan_out_slow waits


# -- our actors ----------------------------------------------------------------


class Echo(Actor):
    """Replies to every ask with the message."""

    def receive(self, message: Any) -> Any:
        return message


class Ponger(Actor):
    """Tells every message back to its pinger."""

    def __init__(self, pinger: ActorRef[Any]) -> None:
        self.pinger = pinger

    def receive(self, message: Any) -> None:
        self.pinger.tell(message)


class Pinger(Actor):
    """Starts its ponger and serves the first ping; counts every pong on the
    tally and pings again until it has had ``rounds``."""

    def __init__(self, rounds: int, tally: Tally) -> None:
        self.left = rounds
        self.tally = tally

    def on_start(self) -> None:
        self.ponger = self.context.spawn(Ponger, self.context.self_ref)
        self.ponger.tell(0)

    def receive(self, message: Any) -> None:
        tally = self.tally
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()
        self.left -= 1
        if self.left:
            self.ponger.tell(message)


async def ours_queued(count: int) -> Sample:
    tally = Tally(count)
    async with ActorSystem() as system:
        ref = system.spawn(Counter, tally)
        start = now()
        tell = ref.tell
        for i in range(count):
            tell(i)
        await tally.done.wait()
        elapsed = now() - start
    return Sample(elapsed, tally.count)


async def _tell(ref: ActorRef[Any], count: int) -> None:
    tell = ref.tell
    for i in range(count):
        tell(i)


async def _send(ref: ActorRef[Any], count: int) -> None:
    send = ref.send
    for i in range(count):
        await send(i)


def ours_flood(producers: int, capacity: int | None) -> SampleFn:
    produce = _tell if capacity is None else _send

    async def sample(count: int) -> Sample:
        tally = Tally(count)
        async with ActorSystem() as system:
            start = now()
            ref = system.spawn(Counter, tally, capacity=capacity)
            async with anyio.create_task_group() as tg:
                for share in shares(count, producers):
                    tg.start_soon(produce, ref, share)
                await tally.done.wait()
                elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


def ours_fan_out(workers: int, routing: Routing) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        async with ActorSystem() as system:
            start = now()
            pool = system.spawn_pool(Counter, workers, tally, routing=routing)
            tell = pool.tell
            for i in range(count):
                tell(i)
            await tally.done.wait()
            elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


def ours_fan_out_actors(workers: int) -> SampleFn:
    """W plain actors (no pool) the root tells in turn."""

    async def sample(count: int) -> Sample:
        tally = Tally(count)
        async with ActorSystem() as system:
            start = now()
            tells = [system.spawn(Counter, tally).tell for _ in range(workers)]
            for i in range(count):
                tells[i % workers](i)
            await tally.done.wait()
            elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


def ours_ping_pong(pairs: int) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        async with ActorSystem() as system:
            start = now()
            for rounds in shares(count, pairs):
                system.spawn(Pinger, rounds, tally)
            await tally.done.wait()
            elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


async def ours_ask(count: int) -> Sample:
    tally = Tally(count)
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        start = now()
        ask = ref.ask
        for i in range(count):
            if await ask(i) == i:
                tally.count += 1
        elapsed = now() - start
    return Sample(elapsed, tally.count)


class Sleeper(Actor):
    """A slow job: waits SLOW_SECONDS, then counts it on the sample's tally."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    async def receive(self, message: Any) -> None:
        await anyio.sleep(SLOW_SECONDS)
        tally = self.tally
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()


def ours_fan_out_slow(routing: Routing) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        async with ActorSystem() as system:
            pool = system.spawn_pool(Sleeper, SLOW_WORKERS, tally, routing=routing)
            await anyio.sleep(0.05)  # every worker has started and is idle
            start = perf_counter()
            tell = pool.tell
            for i in range(count):
                tell(i)
            await tally.done.wait()
            elapsed = perf_counter() - start
        return Sample(elapsed, tally.count)

    return sample


async def _sleep_consume(receive: Any, tally: Tally) -> None:
    async with receive:
        async for _ in receive:
            await anyio.sleep(SLOW_SECONDS)
            tally.count += 1
            if tally.count == tally.expected:
                tally.done.set()


async def streams_fan_out_slow(count: int) -> Sample:
    tally = Tally(count)
    send, receive = anyio.create_memory_object_stream[int](math.inf)
    async with anyio.create_task_group() as tg:
        for _ in range(SLOW_WORKERS):
            tg.start_soon(_sleep_consume, receive.clone(), tally)
        receive.close()
        await anyio.sleep(0.05)  # every consumer waits
        start = perf_counter()
        with send:
            for i in range(count):
                send.send_nowait(i)
        await tally.done.wait()
        elapsed = perf_counter() - start
    return Sample(elapsed, tally.count)


# -- the rows ---------------------------------------------------------------------


#: Pykka is a peer from the test extra: without it, its column is left out.
_PYKKA_MISSING = importlib.util.find_spec("pykka") is None
if _PYKKA_MISSING:
    print(
        "benchmarks: the pykka column is left out: pykka is not installed: "
        'pip install pykka, or the test extra: pip install -e ".[test]"',
        file=sys.stderr,
    )


def _impls(
    ours: SampleFn,
    queue: SampleFn,
    anyio_: SampleFn,
    trio: SampleFn,
    pykka: SampleFn,
    light: tuple[SampleFn, SampleFn, SampleFn] | None = None,
) -> tuple[Impl, ...]:
    """The row's implementations; ``light``: the light queue, anyio and trio
    variants, each listed after its plain one."""
    impls = [
        Impl("ours", ours),
        Impl("asyncio.Queue", queue, ASYNCIO_LOOPS),
        Impl("anyio", anyio_),
        Impl("trio", trio, TRIO_ONLY),
        Impl(PYKKA, pykka),
    ]
    if _PYKKA_MISSING:
        impls.pop()
    if light is not None:
        queue_light, anyio_light, trio_light = light
        impls[2:2] = [Impl("asyncio.Queue (light)", queue_light, ASYNCIO_LOOPS)]
        impls[4:4] = [Impl("anyio (light)", anyio_light)]
        impls[6:6] = [Impl("trio (light)", trio_light, TRIO_ONLY)]
    return tuple(impls)


def _register() -> None:
    register(
        Row(
            "queued",
            f"{MESSAGES:,} messages told to one idle actor first, then drained",
            MESSAGES,
            QUICK,
            _impls(
                ours_queued,
                queue_queued,
                streams_queued(lambda: ANYIO),
                streams_queued(trio_flavour),
                pykka_queued,
            ),
            unit="message",
        )
    )
    for bound, capacity in (("unbounded", None), ("bounded", BOUNDED)):
        register(
            Row(
                f"flood/{bound}",
                f"{PRODUCERS} producers flood one actor with {MESSAGES:,} messages"
                + (f" (capacity {capacity}, send)" if capacity else " (tell)"),
                MESSAGES,
                QUICK,
                _impls(
                    ours_flood(PRODUCERS, capacity),
                    queue_flood(PRODUCERS, capacity or 0),
                    streams_flood(lambda: ANYIO, PRODUCERS, capacity or float("inf")),
                    streams_flood(trio_flavour, PRODUCERS, capacity or float("inf")),
                    pykka_flood(PRODUCERS, capacity),
                ),
                unit="message",
            )
        )
    for workers in (4, 16):
        routing: Routing
        for routing in ("round_robin", "shared_queue"):
            shared = routing == "shared_queue"
            register(
                Row(
                    f"fan_out/workers/{workers}/{routing}",
                    f"one root tells {MESSAGES:,} messages to a {routing} pool of "
                    f"{workers} workers",
                    MESSAGES,
                    QUICK,
                    _impls(
                        ours_fan_out(workers, routing),
                        queue_fan_out(workers, shared),
                        streams_fan_out(lambda: ANYIO, workers, shared),
                        streams_fan_out(trio_flavour, workers, shared),
                        pykka_fan_out(workers),
                        light=(
                            queue_fan_out(workers, shared, light=True),
                            streams_fan_out(lambda: ANYIO, workers, shared, True),
                            streams_fan_out(trio_flavour, workers, shared, True),
                        ),
                    ),
                    unit="message",
                )
            )
        register(
            Row(
                f"fan_out/workers/{workers}/actors",
                f"one root tells {MESSAGES:,} messages in turn to {workers} plain "
                "actors (no pool)",
                MESSAGES,
                QUICK,
                _impls(
                    ours_fan_out_actors(workers),
                    queue_fan_out(workers, False),
                    streams_fan_out(lambda: ANYIO, workers, False),
                    streams_fan_out(trio_flavour, workers, False),
                    pykka_fan_out(workers),
                    light=(
                        queue_fan_out(workers, False, light=True),
                        streams_fan_out(lambda: ANYIO, workers, False, True),
                        streams_fan_out(trio_flavour, workers, False, True),
                    ),
                ),
                unit="message",
            )
        )
    for routing in ("round_robin", "shared_queue"):
        register(
            Row(
                f"fan_out_slow/workers/{SLOW_WORKERS}/{routing}",
                f"{SLOW_JOBS} jobs of {SLOW_SECONDS * 1000:.0f} ms told at once to a "
                f"{routing} pool of {SLOW_WORKERS} idle workers; wall time",
                SLOW_JOBS,
                SLOW_JOBS // 4,
                (
                    Impl("ours", ours_fan_out_slow(routing)),
                    Impl("anyio", streams_fan_out_slow),
                ),
                unit="job",
            )
        )
    for pairs in (1, 4):
        register(
            Row(
                f"ping_pong/pairs/{pairs}",
                f"{pairs} pair(s) bounce a message, {ROUND_TRIPS:,} round trips "
                "per pair",
                ROUND_TRIPS * pairs,
                QUICK // 5 * pairs,
                _impls(
                    ours_ping_pong(pairs),
                    queue_ping_pong(pairs),
                    streams_ping_pong(lambda: ANYIO, pairs),
                    streams_ping_pong(trio_flavour, pairs),
                    pykka_ping_pong(pairs),
                    light=(
                        queue_ping_pong(pairs, light=True),
                        streams_ping_pong(lambda: ANYIO, pairs, light=True),
                        streams_ping_pong(trio_flavour, pairs, light=True),
                    ),
                ),
                unit="round trip",
            )
        )
    register(
        Row(
            "ask",
            f"{ROUND_TRIPS:,} asks to one actor in turn",
            ROUND_TRIPS,
            QUICK // 5,
            _impls(
                ours_ask,
                queue_ask,
                streams_ask(lambda: ANYIO),
                streams_ask(trio_flavour),
                pykka_ask,
                light=(
                    queue_ask_light,
                    streams_ask_light(lambda: ANYIO),
                    streams_ask_light(trio_flavour),
                ),
            ),
            unit="round trip",
        )
    )


_register()
