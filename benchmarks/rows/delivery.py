"""The ``delivery`` rows: reliable delivery beside what it is built on.

* ``delivery/reliable/16B``: a producer controller on one node sends
  ``count`` 16-byte messages (``await producer.send(payload)``: numbered,
  held until confirmed, sent within the consumer's demand, in batches) to
  a consumer controller on another node, which hands them to a counting
  actor in batches through its mailbox (a ``Delivery`` each, no ask per
  message) and confirms them (a ``Request`` per half window, the default
  256). The other, ``remote send``: the same
  payloads with ``await ref.send(payload)`` straight to the counting actor
  (at-most-once, no confirmation). ``ours, handler``: the consumer
  controller calls a handler function in its own actor instead of asking a
  consumer actor (no ask per message). Both nodes are in this process, joined
  through one ``nats-server``. The clock runs from the first send to the
  last message handled. Unit: one message. The ratio is what
  at-least-once with dedup and flow control costs (the goal: at least 0.5).
* ``delivery/jobs/sqlite``: a ``WorkQueue`` with a durable queue on a
  ``SqliteJournal`` (``synchronous=FULL``) in this process; ``count`` jobs
  are sent by 16 tasks at once (each ``send`` returns once its job is
  stored), and 4 local workers (window 16) run them; timed until every job
  is done (its ``Done`` event stored). The other, ``in memory``: the same
  queue without a durable queue. Unit: one job. The writes wait on fsync,
  which the default CPU clock does not count: run it with ``--clock wall``
  too.

* ``delivery/slow_consumer/1KiB``: memory, not time: a producer controller
  tries to send ``count`` 1 KiB messages to a consumer controller on
  another node whose actor is slow (it yields 20 times per message); the
  cells read the **peak bytes allocated** (``tracemalloc``, both nodes: they
  share this process) above what was allocated before the first send, per
  message sent, until the last is handled. A bounded buffer keeps the peak
  flat, so the figure falls as ``count`` grows (``--quick`` sends a tenth).
  The other, ``remote send``: ``await ref.send`` of the same payloads
  straight to the slow actor (bounded by the node's share of its mailbox).
  Every clock is ignored.

Starting the server and the systems, and looking the actors up, is not
timed. Without the ``nats-server`` binary the reliable row is not
registered (a note on stderr says why).
"""

from __future__ import annotations

import gc
import sys
import tempfile
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from actors import Actor, ActorSystem
from actors.delivery import (
    ConsumerController,
    Delivery,
    DurableProducerQueue,
    ProducerController,
    WorkerController,
    WorkQueue,
)
from actors.nats import find_nats_server
from actors.persistence import Codec, SqliteJournal

from .._clock import now
from .._registry import Impl, Row, Sample, register
from ._actor_tasks import Tally
from ._systems import Counter, two_nodes
from .remote import GUARD

__all__: list[str] = []

PAYLOAD = b"x" * 16
MESSAGES, QUICK_MESSAGES = 20_000, 1_000
JOBS, QUICK_JOBS = 2_000, 320
#: Seconds the jobs sample waits for the last job (fsyncs on a busy disk).
JOBS_GUARD = 120.0
SENDERS, WORKERS = 16, 4


async def reliable(count: int) -> Sample:
    return await _reliable(count, False)


async def reliable_handler(count: int) -> Sample:
    return await _reliable(count, True)


async def _reliable(count: int, handler: bool) -> Sample:
    tally = Tally(count)
    async with two_nodes() as (a, b):
        if handler:

            def count_one(delivery: Delivery[bytes]) -> None:
                tally.count += 1
                if tally.count == tally.expected:
                    tally.done.set()

            ConsumerController.spawn(b, handler=count_one, name="consumer")
        else:
            ConsumerController.spawn(b, b.spawn(Counter, tally), name="consumer")
        ref = await a.remote.lookup("b", "/user/consumer")
        producer = await ProducerController.start(a, "bench", consumer=ref)
        send = producer.send
        start = now()
        for _ in range(count):
            await send(PAYLOAD)
        with anyio.move_on_after(GUARD):
            await tally.done.wait()
        elapsed = now() - start
    return Sample(elapsed, tally.count)


async def remote_send(count: int) -> Sample:
    tally = Tally(count)
    async with two_nodes() as (a, b):
        b.spawn(Counter, tally, name="counter")
        ref = await a.remote.lookup("b", "/user/counter")
        send = ref.send
        start = now()
        for _ in range(count):
            await send(PAYLOAD)
        with anyio.move_on_after(GUARD):
            await tally.done.wait()
        elapsed = now() - start
    return Sample(elapsed, tally.count)


SLOW_MESSAGES, QUICK_SLOW = 4_000, 400
#: Checkpoints the slow consumer makes per message.
SLOWNESS = 20


class SlowCounter(Counter):
    """A counter that yields ``SLOWNESS`` times per message first."""

    async def receive(self, message: Any) -> None:  # type: ignore[override]
        for _ in range(SLOWNESS):
            await anyio.lowlevel.checkpoint()
        super().receive(message)


async def _slow(count: int, reliable: bool) -> Sample:
    tally = Tally(count)
    payload = b"x" * 1024
    async with two_nodes() as (a, b):
        slow = b.spawn(SlowCounter, tally, name="slow")
        send: Callable[[Any], Awaitable[object]]
        if reliable:
            ConsumerController.spawn(b, slow, name="consumer")
            ref = await a.remote.lookup("b", "/user/consumer")
            send = (await ProducerController.start(a, "bench", consumer=ref)).send
        else:
            send = (await a.remote.lookup("b", "/user/slow")).send
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            for _ in range(count):
                await send(payload)
            with anyio.move_on_after(GUARD * 4):
                await tally.done.wait()
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    # Bytes reported as seconds * 1e-9: the table's "ns" cells read bytes.
    return Sample(peak * 1e-9, tally.count)


async def slow_reliable(count: int) -> Sample:
    return await _slow(count, True)


async def slow_remote_send(count: int) -> Sample:
    return await _slow(count, False)


class Job(Actor[Delivery[int]]):
    def receive(self, delivery: Delivery[int]) -> int:
        return delivery.message


async def _jobs(count: int, durable: bool) -> Sample:
    with tempfile.TemporaryDirectory() as tmp:
        journal = SqliteJournal(Path(tmp) / "jobs.db")
        async with journal, ActorSystem() as system:
            queue: WorkQueue[int] = await WorkQueue.start(
                system,
                "bench",
                durable=DurableProducerQueue(journal, Codec(int)) if durable else None,
            )
            for _ in range(WORKERS):
                WorkerController.spawn(system, system.spawn(Job), queue.ref, window=16)
            each = count // SENDERS

            async def sender() -> None:
                for n in range(each):
                    await queue.send(n)

            start = now()
            async with anyio.create_task_group() as tg:
                for _ in range(SENDERS):
                    tg.start_soon(sender)
            with anyio.move_on_after(JOBS_GUARD):
                await queue.wait_done()
            elapsed = now() - start
            done = queue.statistics().done
    return Sample(elapsed, done)


async def durable_jobs(count: int) -> Sample:
    return await _jobs(count, True)


async def memory_jobs(count: int) -> Sample:
    return await _jobs(count, False)


register(
    Row(
        "delivery/jobs/sqlite",
        f"{SENDERS} tasks send jobs to a durable WorkQueue (SQLite, FULL), "
        f"{WORKERS} local workers run them; in memory: the same queue, not durable",
        JOBS - JOBS % SENDERS,
        QUICK_JOBS - QUICK_JOBS % SENDERS,
        (Impl("ours", durable_jobs), Impl("in memory", memory_jobs)),
        unit="job",
    )
)

try:
    find_nats_server()
except FileNotFoundError as exc:
    print(f"benchmarks: delivery/reliable rows skipped: {exc}", file=sys.stderr)
else:
    register(
        Row(
            "delivery/reliable/16B",
            "a producer controller sends 16-byte messages to a consumer "
            "controller on another node (confirmed, deduplicated, by demand); "
            "remote send: await ref.send to the actor, at-most-once",
            MESSAGES,
            QUICK_MESSAGES,
            (
                Impl("ours", reliable),
                Impl("ours, handler", reliable_handler),
                Impl("remote send", remote_send),
            ),
            unit="message",
        )
    )
    register(
        Row(
            "delivery/slow_consumer/1KiB",
            "peak bytes allocated per 1 KiB message a producer controller sends "
            "to a slow consumer on another node (bounded by its demand); remote "
            "send: await ref.send to the slow actor",
            SLOW_MESSAGES,
            QUICK_SLOW,
            (Impl("ours", slow_reliable), Impl("remote send", slow_remote_send)),
            unit="message",
        )
    )
