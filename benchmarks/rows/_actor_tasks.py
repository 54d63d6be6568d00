"""The actor rows written the way a user would without us: tasks and queues.

Three flavours of the same code:

* ``asyncio.Queue`` tasks (asyncio and uvloop): ``asyncio.TaskGroup``,
  ``await put`` / ``await get`` (``put_nowait`` where the row enqueues first),
  a future per request for ``ask``. asyncio.Queue has no close, so tasks that
  would wait forever are cancelled once the work is done, as users do.
* anyio memory object streams (every backend): an anyio task group,
  ``await send`` / ``await receive`` (``send_nowait`` where the row enqueues
  first), a one-slot reply stream per request for ``ask``; closing the send
  side ends the consumers.
* Trio memory channels (trio): the same code on ``trio.open_memory_channel``
  in a nursery (Trio's API has the same names as anyio's).

Each flavour also comes *light* (``light=True``; the implementation is named
``"<tool> (light)"``): the lightest idiomatic code for the row, never slower
than the plain one. Where a queue is unbounded, senders use the non-waiting
call (``put_nowait``, ``send_nowait``: our ``tell`` does not yield either), and
``ask`` takes the cheapest one-shot reply the tool has: a future per request
made by ``loop.create_future`` that the server task resolves (asyncio), or an
``Event`` plus a result slot per request (Trio's ``trio.Event``, anyio's
``anyio.Event``) instead of a memory stream pair per request. Tables compare
the subject with the fastest of all of them (``vs fastest baseline``).

Every consumer does the same bookkeeping per message as our actors'
handlers: one :class:`Tally` increment and one comparison.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, Self

import anyio

from .._clock import now
from .._registry import Sample, SampleFn

__all__ = [
    "ANYIO",
    "Flavour",
    "Tally",
    "queue_ask",
    "queue_ask_light",
    "queue_fan_out",
    "queue_flood",
    "queue_ping_pong",
    "queue_queued",
    "shares",
    "streams_ask",
    "streams_ask_light",
    "streams_fan_out",
    "streams_flood",
    "streams_ping_pong",
    "streams_queued",
    "trio_flavour",
]


class Tally:
    """What the consumers of one sample received; ``done`` at ``expected``."""

    __slots__ = ("count", "done", "expected")

    def __init__(self, expected: int) -> None:
        self.count = 0
        self.expected = expected
        self.done = anyio.Event()


def shares(count: int, parts: int) -> list[int]:
    """``count`` split into ``parts`` near-equal shares."""
    per, extra = divmod(count, parts)
    return [per + (p < extra) for p in range(parts)]


# -- asyncio.Queue tasks -----------------------------------------------------------


async def _queue_consume(queue: asyncio.Queue[Any], tally: Tally) -> None:
    get = queue.get
    while True:
        await get()
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()


async def _queue_produce(queue: asyncio.Queue[Any], count: int) -> None:
    put = queue.put
    for i in range(count):
        await put(i)


async def queue_queued(count: int) -> Sample:
    tally = Tally(count)
    queue: asyncio.Queue[int] = asyncio.Queue()
    async with asyncio.TaskGroup() as tg:
        consumer = tg.create_task(_queue_consume(queue, tally))
        start = now()
        put_nowait = queue.put_nowait
        for i in range(count):
            put_nowait(i)
        await tally.done.wait()
        elapsed = now() - start
        consumer.cancel()
    return Sample(elapsed, tally.count)


def queue_flood(producers: int, capacity: int) -> SampleFn:
    async def sample(count: int) -> Sample:
        tally = Tally(count)
        queue: asyncio.Queue[int] = asyncio.Queue(capacity)
        async with asyncio.TaskGroup() as tg:
            start = now()
            consumer = tg.create_task(_queue_consume(queue, tally))
            for share in shares(count, producers):
                tg.create_task(_queue_produce(queue, share))
            await tally.done.wait()
            elapsed = now() - start
            consumer.cancel()
        return Sample(elapsed, tally.count)

    return sample


def queue_fan_out(workers: int, shared: bool, light: bool = False) -> SampleFn:
    """W consumers fed in turn (W queues) or sharing one queue; ``light``:
    the root uses ``put_nowait`` (the queues are unbounded)."""

    async def sample(count: int) -> Sample:
        tally = Tally(count)
        queues: list[asyncio.Queue[int]] = [
            asyncio.Queue() for _ in range(1 if shared else workers)
        ]
        async with asyncio.TaskGroup() as tg:
            start = now()
            consumers = [
                tg.create_task(_queue_consume(queues[w % len(queues)], tally))
                for w in range(workers)
            ]
            if light:
                if shared:
                    put_nowait = queues[0].put_nowait
                    for i in range(count):
                        put_nowait(i)
                else:
                    nowaits = [queue.put_nowait for queue in queues]
                    for i in range(count):
                        nowaits[i % workers](i)
            elif shared:
                put = queues[0].put
                for i in range(count):
                    await put(i)
            else:
                puts = [queue.put for queue in queues]
                for i in range(count):
                    await puts[i % workers](i)
            await tally.done.wait()
            elapsed = now() - start
            for consumer in consumers:
                consumer.cancel()
        return Sample(elapsed, tally.count)

    return sample


async def _queue_pong(inbox: asyncio.Queue[int], outbox: asyncio.Queue[int]) -> None:
    get, put = inbox.get, outbox.put
    while True:
        await put(await get())


async def _queue_pong_nowait(
    inbox: asyncio.Queue[int], outbox: asyncio.Queue[int]
) -> None:
    get, put_nowait = inbox.get, outbox.put_nowait
    while True:
        put_nowait(await get())


async def _queue_ping_nowait(
    inbox: asyncio.Queue[int], outbox: asyncio.Queue[int], rounds: int, tally: Tally
) -> None:
    get, put_nowait = inbox.get, outbox.put_nowait
    for i in range(rounds):
        put_nowait(i)
        await get()
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()


async def _queue_ping(
    inbox: asyncio.Queue[int], outbox: asyncio.Queue[int], rounds: int, tally: Tally
) -> None:
    get, put = inbox.get, outbox.put
    for i in range(rounds):
        await put(i)
        await get()
        tally.count += 1
        if tally.count == tally.expected:
            tally.done.set()


def queue_ping_pong(pairs: int, light: bool = False) -> SampleFn:
    """N pairs of tasks bounce a message over two queues each; ``light``:
    ``put_nowait`` (the queues are unbounded)."""
    pong = _queue_pong_nowait if light else _queue_pong
    ping = _queue_ping_nowait if light else _queue_ping

    async def sample(count: int) -> Sample:
        tally = Tally(count)
        async with asyncio.TaskGroup() as tg:
            start = now()
            pongers = []
            for rounds in shares(count, pairs):
                pings: asyncio.Queue[int] = asyncio.Queue()
                pongs: asyncio.Queue[int] = asyncio.Queue()
                pongers.append(tg.create_task(pong(pings, pongs)))
                tg.create_task(ping(pongs, pings, rounds, tally))
            await tally.done.wait()
            elapsed = now() - start
            for ponger in pongers:
                ponger.cancel()
        return Sample(elapsed, tally.count)

    return sample


async def _queue_serve(
    requests: asyncio.Queue[tuple[int, asyncio.Future[int]]],
) -> None:
    get = requests.get
    while True:
        message, reply = await get()
        reply.set_result(message)


async def queue_ask(count: int) -> Sample:
    """A future per request (``loop.create_future``) the server task resolves;
    the request is sent with ``await put``."""
    tally = Tally(count)
    requests: asyncio.Queue[tuple[int, asyncio.Future[int]]] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    async with asyncio.TaskGroup() as tg:
        server = tg.create_task(_queue_serve(requests))
        start = now()
        put, create_future = requests.put, loop.create_future
        for i in range(count):
            reply: asyncio.Future[int] = create_future()
            await put((i, reply))
            if await reply == i:
                tally.count += 1
        elapsed = now() - start
        server.cancel()
    return Sample(elapsed, tally.count)


async def queue_ask_light(count: int) -> Sample:
    """:func:`queue_ask` with ``put_nowait`` (the request queue is unbounded)."""
    tally = Tally(count)
    requests: asyncio.Queue[tuple[int, asyncio.Future[int]]] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    async with asyncio.TaskGroup() as tg:
        server = tg.create_task(_queue_serve(requests))
        start = now()
        put_nowait, create_future = requests.put_nowait, loop.create_future
        for i in range(count):
            reply: asyncio.Future[int] = create_future()
            put_nowait((i, reply))
            if await reply == i:
                tally.count += 1
        elapsed = now() - start
        server.cancel()
    return Sample(elapsed, tally.count)


# -- anyio memory object streams and Trio memory channels -----------------------


class _Closing(Protocol):
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc_info: object) -> None: ...


class _Sender(_Closing, Protocol):
    async def send(self, item: Any, /) -> None: ...
    def send_nowait(self, item: Any, /) -> None: ...
    def clone(self) -> Self: ...


class _Receiver(_Closing, Protocol):
    async def receive(self) -> Any: ...
    def clone(self) -> Self: ...


class Flavour(NamedTuple):
    """One library's streams: anyio's, or Trio's (the same method names)."""

    #: makes a (send, receive) pair of the given capacity
    create: Callable[[float], tuple[Any, Any]]
    end: type[Exception]  #: raised by receive once every sender closed
    #: the library's task group (anyio's, or a Trio nursery)
    task_group: Callable[[], Any]
    event: Callable[[], Any]  #: the library's one-shot event (``set``, ``wait``)


ANYIO = Flavour(
    lambda capacity: anyio.create_memory_object_stream[Any](capacity),
    anyio.EndOfStream,
    anyio.create_task_group,
    anyio.Event,
)


def trio_flavour() -> Flavour:
    import trio

    return Flavour(
        trio.open_memory_channel, trio.EndOfChannel, trio.open_nursery, trio.Event
    )


async def _consume(receive: _Receiver, end: type[Exception], tally: Tally) -> None:
    receive_ = receive.receive
    with receive:
        try:
            while True:
                await receive_()
                tally.count += 1
                if tally.count == tally.expected:
                    tally.done.set()
        except end:
            pass


async def _produce(send: _Sender, count: int) -> None:
    send_ = send.send
    with send:
        for i in range(count):
            await send_(i)


def streams_queued(flavour: Callable[[], Flavour]) -> SampleFn:
    async def sample(count: int) -> Sample:
        create, end, task_group, _ = flavour()
        tally = Tally(count)
        send, receive = create(math.inf)
        async with task_group() as tg:
            tg.start_soon(_consume, receive, end, tally)
            start = now()
            send_nowait = send.send_nowait
            for i in range(count):
                send_nowait(i)
            await tally.done.wait()
            elapsed = now() - start
            send.close()
        return Sample(elapsed, tally.count)

    return sample


def streams_flood(
    flavour: Callable[[], Flavour], producers: int, capacity: float
) -> SampleFn:
    async def sample(count: int) -> Sample:
        create, end, task_group, _ = flavour()
        tally = Tally(count)
        send, receive = create(capacity)
        async with task_group() as tg:
            start = now()
            tg.start_soon(_consume, receive, end, tally)
            for share in shares(count, producers):
                tg.start_soon(_produce, send.clone(), share)
            send.close()
            await tally.done.wait()
            elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


def streams_fan_out(
    flavour: Callable[[], Flavour], workers: int, shared: bool, light: bool = False
) -> SampleFn:
    """W consumers fed in turn (W streams) or sharing one stream; ``light``:
    the root uses ``send_nowait`` (the streams are unbounded)."""

    async def sample(count: int) -> Sample:
        create, end, task_group, _ = flavour()
        tally = Tally(count)
        async with task_group() as tg:
            start = now()
            if shared:
                send, receive = create(math.inf)
                for _ in range(workers):
                    tg.start_soon(_consume, receive.clone(), end, tally)
                receive.close()
                with send:
                    if light:
                        send_nowait = send.send_nowait
                        for i in range(count):
                            send_nowait(i)
                    else:
                        send_ = send.send
                        for i in range(count):
                            await send_(i)
            else:
                sends = []
                for _ in range(workers):
                    send, receive = create(math.inf)
                    tg.start_soon(_consume, receive, end, tally)
                    sends.append(send)
                if light:
                    nowaits = [send.send_nowait for send in sends]
                    for i in range(count):
                        nowaits[i % workers](i)
                else:
                    methods = [send.send for send in sends]
                    for i in range(count):
                        await methods[i % workers](i)
                for send in sends:
                    send.close()
            await tally.done.wait()
            elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


async def _pong(receive: _Receiver, send: _Sender, end: type[Exception]) -> None:
    receive_, send_ = receive.receive, send.send
    with receive, send:
        try:
            while True:
                await send_(await receive_())
        except end:
            pass


async def _ping(receive: _Receiver, send: _Sender, rounds: int, tally: Tally) -> None:
    receive_, send_ = receive.receive, send.send
    with receive, send:
        for i in range(rounds):
            await send_(i)
            await receive_()
            tally.count += 1
            if tally.count == tally.expected:
                tally.done.set()


async def _pong_nowait(receive: _Receiver, send: _Sender, end: type[Exception]) -> None:
    receive_, send_nowait = receive.receive, send.send_nowait
    with receive, send:
        try:
            while True:
                send_nowait(await receive_())
        except end:
            pass


async def _ping_nowait(
    receive: _Receiver, send: _Sender, rounds: int, tally: Tally
) -> None:
    receive_, send_nowait = receive.receive, send.send_nowait
    with receive, send:
        for i in range(rounds):
            send_nowait(i)
            await receive_()
            tally.count += 1
            if tally.count == tally.expected:
                tally.done.set()


def streams_ping_pong(
    flavour: Callable[[], Flavour], pairs: int, light: bool = False
) -> SampleFn:
    """N pairs of tasks bounce a message over two streams each; ``light``:
    ``send_nowait`` (the streams are unbounded)."""
    pong = _pong_nowait if light else _pong
    ping = _ping_nowait if light else _ping

    async def sample(count: int) -> Sample:
        create, end, task_group, _ = flavour()
        tally = Tally(count)
        async with task_group() as tg:
            start = now()
            for rounds in shares(count, pairs):
                ping_send, ping_receive = create(math.inf)
                pong_send, pong_receive = create(math.inf)
                tg.start_soon(pong, ping_receive, pong_send, end)
                tg.start_soon(ping, pong_receive, ping_send, rounds, tally)
            await tally.done.wait()
            elapsed = now() - start
        return Sample(elapsed, tally.count)

    return sample


async def _serve(requests: _Receiver, end: type[Exception]) -> None:
    receive = requests.receive
    with requests:
        try:
            while True:
                message, reply = await receive()
                with reply:
                    await reply.send(message)
        except end:
            pass


def streams_ask(flavour: Callable[[], Flavour]) -> SampleFn:
    async def sample(count: int) -> Sample:
        create, end, task_group, _ = flavour()
        tally = Tally(count)
        requests, inbox = create(math.inf)
        async with task_group() as tg:
            tg.start_soon(_serve, inbox, end)
            start = now()
            send = requests.send
            for i in range(count):
                reply_send, reply_receive = create(1)
                await send((i, reply_send))
                with reply_receive:
                    if await reply_receive.receive() == i:
                        tally.count += 1
            elapsed = now() - start
            requests.close()
        return Sample(elapsed, tally.count)

    return sample


class _Request:
    """One ask of the light variant: the message, the reply's slot, an event."""

    __slots__ = ("done", "message", "reply")

    def __init__(self, message: int, done: Any) -> None:
        self.message = message
        self.reply: int | None = None
        self.done = done


async def _serve_events(requests: _Receiver, end: type[Exception]) -> None:
    receive = requests.receive
    with requests:
        try:
            while True:
                request = await receive()
                request.reply = request.message
                request.done.set()
        except end:
            pass


def streams_ask_light(flavour: Callable[[], Flavour]) -> SampleFn:
    """An ``Event`` plus a result slot per request (no reply stream), the
    request sent with ``send_nowait`` (the request stream is unbounded)."""

    async def sample(count: int) -> Sample:
        create, end, task_group, event = flavour()
        tally = Tally(count)
        requests, inbox = create(math.inf)
        async with task_group() as tg:
            tg.start_soon(_serve_events, inbox, end)
            start = now()
            send_nowait = requests.send_nowait
            for i in range(count):
                request = _Request(i, event())
                send_nowait(request)
                await request.done.wait()
                if request.reply == i:
                    tally.count += 1
            elapsed = now() - start
            requests.close()
        return Sample(elapsed, tally.count)

    return sample
