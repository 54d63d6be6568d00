"""Channel rows: the channel core beside anyio, asyncio.Queue and Trio.

* ``channel/ready/nowait`` and ``channel/ready/await``: one task sends an item
  and receives it back, ``count`` times; the ready path (nothing ever waits).
  ``nowait`` is ``send_nowait`` + ``receive_nowait`` (asyncio.Queue:
  ``put_nowait`` + ``get_nowait``); ``await`` is ``await send`` +
  ``await receive`` (``await put`` + ``await get``). Unit: one pair.
* ``channel/{P}P{C}C/{bounded,unbounded}/{receive,receive_many}``: P producer
  tasks share ``count`` items and send them with the natural blocking send;
  C consumer tasks receive until the end of the stream, with ``receive()`` or
  in batches of up to 64. Bounded means capacity 64.

Batches: ``ours`` calls ``receive_many(64)``; the others do what a user would
write without it: one awaiting receive, then non-waiting receives until 64 or
nothing is ready (asyncio.Queue: ``await get()``, then ``get_nowait()``).
asyncio.Queue has no close on Python 3.11, so its producers are awaited and then
one sentinel per consumer is put (the usual idiom); every other implementation
closes its send clones. Every implementation starts its consumers first, then
its producers, in its own idiomatic task group (anyio's, ``asyncio.TaskGroup``,
a Trio nursery).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple, Protocol, Self, TypeVar

import anyio

from actors.channel import MemoryObjectReceiveStream as OursReceiveStream
from actors.channel import create_memory_object_stream as ours_create

from .._clock import now
from .._registry import ASYNCIO_LOOPS, TRIO_ONLY, Impl, Row, Sample, SampleFn, register

__all__: list[str] = []

BATCH = 64  #: the batch limit of the receive_many rows
BOUNDED = 64  #: the capacity of the bounded rows and of the ready-path rows
ITEMS = 16_384  #: items per sample of the producer/consumer rows
READY_NOWAIT_PAIRS = 200_000  #: pairs per sample, ready path without waiting
READY_AWAIT_PAIRS = 50_000  #: pairs per sample, ready path with await
QUICK = 512  #: items (pairs) per sample with --quick

TOPOLOGIES = ((1, 1), (1, 8), (8, 1), (8, 8))  #: (producers, consumers)
CAPACITIES = (("bounded", BOUNDED), ("unbounded", math.inf))


# -- the shapes shared by ours, anyio and Trio ------------------------------


class _Sender(Protocol):
    async def send(self, item: int, /) -> None: ...
    def send_nowait(self, item: int, /) -> None: ...
    def clone(self) -> Self: ...
    def close(self) -> None: ...


class _Receiver(Protocol):
    async def receive(self) -> int: ...
    def receive_nowait(self) -> int: ...
    def clone(self) -> Self: ...
    def close(self) -> None: ...


R = TypeVar("R", bound=_Receiver)


class _Errors(NamedTuple):
    """The exceptions one library raises (anyio's, or Trio's)."""

    end: type[Exception]  #: every sender closed and nothing left
    would_block: type[Exception]  #: nothing ready


ANYIO_ERRORS = _Errors(anyio.EndOfStream, anyio.WouldBlock)
Consumer = Callable[[R, _Errors, list[int]], Coroutine[Any, Any, None]]
Create = Callable[[float], tuple[_Sender, R]]


def _ours(capacity: float) -> tuple[_Sender, OursReceiveStream[int]]:
    return ours_create[int](capacity)


def _anyio(capacity: float) -> tuple[_Sender, _Receiver]:
    return anyio.create_memory_object_stream[int](capacity)


def _trio_channel(capacity: float) -> tuple[_Sender, _Receiver]:
    import trio

    return trio.open_memory_channel[int](capacity)


def _trio_errors() -> _Errors:
    import trio

    return _Errors(trio.EndOfChannel, trio.WouldBlock)


# -- ready path ---------------------------------------------------------------
#
# A loop that finishes has received ``count`` items: every receive either
# returned one or raised. No counter in the loop, so the row times only the
# channel.


def _ready_nowait(create: Create[_Receiver]) -> SampleFn:
    async def sample(count: int) -> Sample:
        send, receive = create(BOUNDED)
        send_nowait, receive_nowait = send.send_nowait, receive.receive_nowait
        start = now()
        for i in range(count):
            send_nowait(i)
            receive_nowait()
        elapsed = now() - start
        send.close()
        receive.close()
        return Sample(elapsed, count)

    return sample


def _ready_await(create: Create[_Receiver]) -> SampleFn:
    async def sample(count: int) -> Sample:
        send, receive = create(BOUNDED)
        send_, receive_ = send.send, receive.receive
        start = now()
        for i in range(count):
            await send_(i)
            await receive_()
        elapsed = now() - start
        send.close()
        receive.close()
        return Sample(elapsed, count)

    return sample


async def _queue_ready_nowait(count: int) -> Sample:
    queue: asyncio.Queue[int] = asyncio.Queue(BOUNDED)
    put_nowait, get_nowait = queue.put_nowait, queue.get_nowait
    start = now()
    for i in range(count):
        put_nowait(i)
        get_nowait()
    return Sample(now() - start, count)


async def _queue_ready_await(count: int) -> Sample:
    queue: asyncio.Queue[int] = asyncio.Queue(BOUNDED)
    put, get = queue.put, queue.get
    start = now()
    for i in range(count):
        await put(i)
        await get()
    return Sample(now() - start, count)


# -- producers and consumers (anyio's API, or Trio's: the same names) ---------


async def _produce(send: _Sender, count: int) -> None:
    try:
        send_ = send.send
        for i in range(count):
            await send_(i)
    finally:
        send.close()


async def _consume(receive: _Receiver, errors: _Errors, counts: list[int]) -> None:
    received = 0
    receive_ = receive.receive
    try:
        while True:
            await receive_()
            received += 1
    except errors.end:
        pass
    finally:
        receive.close()
    counts.append(received)


async def _consume_drain(
    receive: _Receiver, errors: _Errors, counts: list[int]
) -> None:
    # What a user writes for batches without receive_many.
    received = 0
    receive_, receive_nowait = receive.receive, receive.receive_nowait
    done = (errors.would_block, errors.end)
    try:
        while True:
            batch = [await receive_()]
            try:
                while len(batch) < BATCH:
                    batch.append(receive_nowait())
            except done:
                pass
            received += len(batch)
    except errors.end:
        pass
    finally:
        receive.close()
    counts.append(received)


async def _consume_many(
    receive: OursReceiveStream[int], errors: _Errors, counts: list[int]
) -> None:
    received = 0
    receive_many = receive.receive_many
    try:
        while True:
            batch = await receive_many(BATCH)
            received += len(batch)
    except errors.end:
        pass
    finally:
        receive.close()
    counts.append(received)


def _shares(count: int, producers: int) -> list[int]:
    per, extra = divmod(count, producers)
    return [per + (p < extra) for p in range(producers)]


def _anyio_flow(
    create: Create[R],
    consume: Consumer[R],
    producers: int,
    consumers: int,
    capacity: float,
) -> SampleFn:
    async def sample(count: int) -> Sample:
        send, receive = create(capacity)
        counts: list[int] = []
        start = now()
        async with anyio.create_task_group() as tg:
            for _ in range(consumers):
                tg.start_soon(consume, receive.clone(), ANYIO_ERRORS, counts)
            for share in _shares(count, producers):
                tg.start_soon(_produce, send.clone(), share)
            send.close()
            receive.close()
        return Sample(now() - start, sum(counts))

    return sample


def _trio_flow(
    consume: Consumer[_Receiver], producers: int, consumers: int, capacity: float
) -> SampleFn:
    async def sample(count: int) -> Sample:
        import trio

        errors = _trio_errors()
        send, receive = _trio_channel(capacity)
        counts: list[int] = []
        start = now()
        async with trio.open_nursery() as nursery:
            for _ in range(consumers):
                nursery.start_soon(consume, receive.clone(), errors, counts)
            for share in _shares(count, producers):
                nursery.start_soon(_produce, send.clone(), share)
            send.close()
            receive.close()
        return Sample(now() - start, sum(counts))

    return sample


# -- asyncio.Queue tasks --------------------------------------------------------

_STOP = -1  #: the sentinel that ends a consumer (items are 0, 1, 2, ...)


async def _queue_produce(queue: asyncio.Queue[int], count: int) -> None:
    put = queue.put
    for i in range(count):
        await put(i)


async def _queue_consume(queue: asyncio.Queue[int]) -> int:
    received = 0
    get = queue.get
    while (await get()) != _STOP:
        received += 1
    return received


async def _queue_consume_drain(queue: asyncio.Queue[int]) -> int:
    received = 0
    get, get_nowait = queue.get, queue.get_nowait
    while True:
        item = await get()
        if item == _STOP:
            return received
        batch = [item]
        try:
            while len(batch) < BATCH:
                item = get_nowait()
                if item == _STOP:
                    return received + len(batch)
                batch.append(item)
        except asyncio.QueueEmpty:
            pass
        received += len(batch)


def _queue_flow(
    consume: Callable[[asyncio.Queue[int]], Coroutine[Any, Any, int]],
    producers: int,
    consumers: int,
    capacity: float,
) -> SampleFn:
    async def sample(count: int) -> Sample:
        queue: asyncio.Queue[int] = asyncio.Queue(
            0 if capacity == math.inf else int(capacity)
        )
        start = now()
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(consume(queue)) for _ in range(consumers)]
            await asyncio.gather(
                *(_queue_produce(queue, share) for share in _shares(count, producers))
            )
            for _ in range(consumers):
                await queue.put(_STOP)
        elapsed = now() - start
        return Sample(elapsed, sum(task.result() for task in tasks))

    return sample


# -- the rows -------------------------------------------------------------------


def _register_ready() -> None:
    register(
        Row(
            "channel/ready/nowait",
            "one task: send_nowait + receive_nowait (asyncio.Queue: put_nowait + "
            "get_nowait), nothing ever waits",
            READY_NOWAIT_PAIRS,
            QUICK,
            (
                Impl("ours", _ready_nowait(_ours)),
                Impl("anyio", _ready_nowait(_anyio)),
                Impl("asyncio.Queue", _queue_ready_nowait, ASYNCIO_LOOPS),
                Impl("trio", _ready_nowait(_trio_channel), TRIO_ONLY),
            ),
            unit="pair",
        )
    )
    register(
        Row(
            "channel/ready/await",
            "one task: await send + await receive (asyncio.Queue: await put + "
            "await get), nothing ever waits",
            READY_AWAIT_PAIRS,
            QUICK,
            (
                Impl("ours", _ready_await(_ours)),
                Impl("anyio", _ready_await(_anyio)),
                Impl("asyncio.Queue", _queue_ready_await, ASYNCIO_LOOPS),
                Impl("trio", _ready_await(_trio_channel), TRIO_ONLY),
            ),
            unit="pair",
        )
    )


def _register_flows() -> None:
    for producers, consumers in TOPOLOGIES:
        for bound, capacity in CAPACITIES:
            shape = f"{producers}P{consumers}C"
            what = (
                f"{producers} producer(s) send {ITEMS:,} items in all to "
                f"{consumers} consumer(s), {bound}"
                + (f" (capacity {BOUNDED})" if bound == "bounded" else "")
            )
            topology = (producers, consumers, capacity)
            register(
                Row(
                    f"channel/{shape}/{bound}/receive",
                    what + "; consumers call receive()",
                    ITEMS,
                    QUICK,
                    (
                        Impl("ours", _anyio_flow(_ours, _consume, *topology)),
                        Impl("anyio", _anyio_flow(_anyio, _consume, *topology)),
                        Impl(
                            "asyncio.Queue",
                            _queue_flow(_queue_consume, *topology),
                            ASYNCIO_LOOPS,
                        ),
                        Impl("trio", _trio_flow(_consume, *topology), TRIO_ONLY),
                    ),
                )
            )
            register(
                Row(
                    f"channel/{shape}/{bound}/receive_many",
                    what + f"; consumers take batches of up to {BATCH}",
                    ITEMS,
                    QUICK,
                    (
                        Impl("ours", _anyio_flow(_ours, _consume_many, *topology)),
                        Impl("anyio", _anyio_flow(_anyio, _consume_drain, *topology)),
                        Impl(
                            "asyncio.Queue",
                            _queue_flow(_queue_consume_drain, *topology),
                            ASYNCIO_LOOPS,
                        ),
                        Impl("trio", _trio_flow(_consume_drain, *topology), TRIO_ONLY),
                    ),
                )
            )


_register_ready()
_register_flows()
