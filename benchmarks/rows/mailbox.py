"""Mailbox rows: the mailbox beside asyncio.Queue, Trio and anyio.

* ``mailbox/ready/nowait``: one task ``try_send`` + ``receive_nowait``,
  ``count`` times, on a mailbox of capacity 64 (asyncio.Queue: ``put_nowait`` +
  ``get_nowait``; Trio: ``send_nowait`` + ``receive_nowait``). Nothing ever
  waits. Unit: one message (one send and one receive).
* ``mailbox/4P1C/bounded`` and ``mailbox/4P1C/unbounded``: 4 producer tasks
  share ``count`` messages into one consumer task, which takes batches of up to
  64. Bounded means capacity 64.

What each implementation writes, as a user of that tool would:

* ``ours``: bounded producers ``await mailbox.send(m)`` (returns without
  yielding while a unit is free), unbounded ones ``mailbox.try_send(m)``; the
  consumer calls ``receive_many(64)`` until ``EndOfMailbox``, which the
  mailbox raises once the producers are done and it is closed.
* ``asyncio.Queue`` (asyncio, uvloop): ``await put(m)`` / ``put_nowait(m)``;
  the consumer ``await get()``, then ``get_nowait()`` until 64 or
  ``QueueEmpty``. Python 3.11's queue has no close: the producers are awaited,
  then a sentinel is put.
* ``trio`` (trio) and ``anyio`` (every backend): a memory channel / memory
  object stream, each producer on its own clone of the send side, ``await
  send(m)`` / ``send_nowait(m)``; the consumer ``await receive()``, then
  ``receive_nowait()`` until 64 or nothing is ready, until the end of the
  stream.

Bounded and unbounded differ in the producers' send only where the tool has
both (a waiting send for backpressure, the non-waiting one when nothing can be
full), so every implementation of a row does the same thing. The consumer
counts what it received (one addition per batch) and the harness checks the
count. Creating the tasks is timed, the event loop's start and end are not.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import anyio

from actors.mailbox import EndOfMailbox, Mailbox

from .._clock import now
from .._registry import ASYNCIO_LOOPS, TRIO_ONLY, Impl, Row, Sample, SampleFn, register

__all__: list[str] = []

BATCH = 64  #: the batch limit of the consumer
BOUNDED = 64  #: the capacity of the bounded row and of the ready-path row
PRODUCERS = 4
MESSAGES = 100_000  #: messages per sample
QUICK = 1_000  #: messages per sample with --quick

_STOP = -1  #: asyncio.Queue's end-of-work sentinel (messages are 0, 1, 2, ...)


def _shares(count: int, parts: int) -> list[int]:
    per, extra = divmod(count, parts)
    return [per + (p < extra) for p in range(parts)]


# -- ready path -------------------------------------------------------------------
#
# A loop that finishes has received ``count`` messages: every receive either
# returned one or raised. No counter in the loop, so the row times only the queue.


async def _ours_ready(count: int) -> Sample:
    mailbox: Mailbox[int] = Mailbox(BOUNDED)
    try_send, receive_nowait = mailbox.try_send, mailbox.receive_nowait
    start = now()
    for i in range(count):
        try_send(i)
        receive_nowait()
    elapsed = now() - start
    mailbox.close()
    return Sample(elapsed, count)


async def _queue_ready(count: int) -> Sample:
    queue: asyncio.Queue[int] = asyncio.Queue(BOUNDED)
    put_nowait, get_nowait = queue.put_nowait, queue.get_nowait
    start = now()
    for i in range(count):
        put_nowait(i)
        get_nowait()
    return Sample(now() - start, count)


async def _trio_ready(count: int) -> Sample:
    import trio

    send, receive = trio.open_memory_channel[int](BOUNDED)
    send_nowait, receive_nowait = send.send_nowait, receive.receive_nowait
    start = now()
    for i in range(count):
        send_nowait(i)
        receive_nowait()
    elapsed = now() - start
    send.close()
    receive.close()
    return Sample(elapsed, count)


# -- ours: 4 producers, one consumer ----------------------------------------------


async def _ours_send(mailbox: Mailbox[int], count: int) -> None:
    send = mailbox.send
    for i in range(count):
        await send(i)


async def _ours_try_send(mailbox: Mailbox[int], count: int) -> None:
    try_send = mailbox.try_send
    for i in range(count):
        try_send(i)


async def _ours_consume(mailbox: Mailbox[int], counts: list[int]) -> None:
    received = 0
    receive_many = mailbox.receive_many
    try:
        while True:
            batch = await receive_many(BATCH)
            received += len(batch)
    except EndOfMailbox:
        pass
    counts.append(received)


def _ours_flow(capacity: int | None) -> SampleFn:
    produce = _ours_try_send if capacity is None else _ours_send

    async def sample(count: int) -> Sample:
        mailbox: Mailbox[int] = Mailbox(capacity)
        counts: list[int] = []
        start = now()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_ours_consume, mailbox, counts)
            async with anyio.create_task_group() as producers:
                for share in _shares(count, PRODUCERS):
                    producers.start_soon(produce, mailbox, share)
            mailbox.close()
        return Sample(now() - start, sum(counts))

    return sample


# -- asyncio.Queue tasks ----------------------------------------------------------


async def _queue_put(queue: asyncio.Queue[int], count: int) -> None:
    put = queue.put
    for i in range(count):
        await put(i)


async def _queue_put_nowait(queue: asyncio.Queue[int], count: int) -> None:
    put_nowait = queue.put_nowait
    for i in range(count):
        put_nowait(i)


async def _queue_consume(queue: asyncio.Queue[int]) -> int:
    # What a user writes for batches: one awaiting get, then get_nowait.
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


def _queue_flow(capacity: int | None) -> SampleFn:
    produce = _queue_put_nowait if capacity is None else _queue_put

    async def sample(count: int) -> Sample:
        queue: asyncio.Queue[int] = asyncio.Queue(capacity or 0)
        start = now()
        async with asyncio.TaskGroup() as tg:
            consumer = tg.create_task(_queue_consume(queue))
            await asyncio.gather(
                *(produce(queue, share) for share in _shares(count, PRODUCERS))
            )
            await queue.put(_STOP)
        elapsed = now() - start
        return Sample(elapsed, consumer.result())

    return sample


# -- Trio memory channels and anyio memory object streams (the same names) ------


async def _stream_send(send: Any, count: int) -> None:
    with send:
        send_ = send.send
        for i in range(count):
            await send_(i)


async def _stream_send_nowait(send: Any, count: int) -> None:
    with send:
        send_nowait = send.send_nowait
        for i in range(count):
            send_nowait(i)


async def _stream_consume(
    receive: Any,
    end: type[Exception],
    would_block: type[Exception],
    counts: list[int],
) -> None:
    # What a user writes for batches: one awaiting receive, then receive_nowait.
    received = 0
    receive_, receive_nowait = receive.receive, receive.receive_nowait
    done = (would_block, end)
    with receive:
        try:
            while True:
                batch = [await receive_()]
                try:
                    while len(batch) < BATCH:
                        batch.append(receive_nowait())
                except done:
                    pass
                received += len(batch)
        except end:
            pass
    counts.append(received)


def _anyio_open(capacity: float) -> tuple[Any, Any]:
    return anyio.create_memory_object_stream[int](capacity)


def _trio_open(capacity: float) -> tuple[Any, Any]:
    import trio

    return trio.open_memory_channel[int](capacity)


def _stream_flow(flavour: str, capacity: int | None) -> SampleFn:
    produce = _stream_send_nowait if capacity is None else _stream_send

    async def sample(count: int) -> Sample:
        open_: Callable[[float], tuple[Any, Any]]
        task_group: Callable[[], Any]
        end: type[Exception]
        would_block: type[Exception]
        if flavour == "trio":
            import trio

            open_, task_group = _trio_open, trio.open_nursery
            end, would_block = trio.EndOfChannel, trio.WouldBlock
        else:
            open_, task_group = _anyio_open, anyio.create_task_group
            end, would_block = anyio.EndOfStream, anyio.WouldBlock
        send, receive = open_(math.inf if capacity is None else capacity)
        counts: list[int] = []
        start = now()
        async with task_group() as tg:
            tg.start_soon(_stream_consume, receive, end, would_block, counts)
            for share in _shares(count, PRODUCERS):
                tg.start_soon(produce, send.clone(), share)
            send.close()
        return Sample(now() - start, sum(counts))

    return sample


# -- the rows ---------------------------------------------------------------------


def _register() -> None:
    register(
        Row(
            "mailbox/ready/nowait",
            f"one task: try_send + receive_nowait, capacity {BOUNDED} (asyncio.Queue: "
            "put_nowait + get_nowait; trio: send_nowait + receive_nowait)",
            MESSAGES,
            QUICK,
            (
                Impl("ours", _ours_ready),
                Impl("asyncio.Queue", _queue_ready, ASYNCIO_LOOPS),
                Impl("trio", _trio_ready, TRIO_ONLY),
            ),
            unit="message",
        )
    )
    for bound, capacity in (("bounded", BOUNDED), ("unbounded", None)):
        how = (
            f"capacity {capacity}, await send"
            if capacity is not None
            else "unbounded, try_send"
        )
        register(
            Row(
                f"mailbox/{PRODUCERS}P1C/{bound}",
                f"{PRODUCERS} producers share {MESSAGES:,} messages into one "
                f"consumer ({how}); the consumer takes batches of up to {BATCH} "
                "(ours: receive_many)",
                MESSAGES,
                QUICK,
                (
                    Impl("ours", _ours_flow(capacity)),
                    Impl("asyncio.Queue", _queue_flow(capacity), ASYNCIO_LOOPS),
                    Impl("anyio", _stream_flow("anyio", capacity)),
                    Impl("trio", _stream_flow("trio", capacity), TRIO_ONLY),
                ),
            )
        )


_register()
