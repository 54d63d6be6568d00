"""The ``delivery/jobs/jetstream`` row: durable jobs through our
``WorkQueue`` on a ``JetStreamJournal`` beside a hand-written nats-py
JetStream work queue doing the same jobs.

* ``ours``: a ``WorkQueue`` with a ``DurableProducerQueue`` on a
  ``JetStreamJournal`` (file storage, a stream of its own per sample);
  ``count`` jobs (ints) are sent by 16 tasks at once, each ``send``
  returning once its job is stored (acknowledged by the stream), and 4 local
  workers (window 16) run them (the handler returns the job); timed until
  every job is done (confirmed by its worker).
* ``nats-py``: what a user writes by hand with nats-py: a stream with
  work-queue retention (file storage), 16 tasks publishing the jobs with
  ``js.publish`` (each awaiting its acknowledgement: stored), and 4 worker
  tasks on one durable pull consumer (explicit acks, ack wait 30 s) that
  fetch up to 16 jobs at a time, run the same handler on each and ``ack``
  it; timed until every job was acknowledged by its worker.
  ``nats-py, fetch 64``: the same with fetches of up to 64 jobs;
  ``nats-py, publish_async``: the same with each sender awaiting the future
  of ``js.publish_async`` (stored) instead of ``js.publish``. The "vs
  fastest baseline" column compares ours with the fastest of the three in
  each round.

Unit: one job. nats-py is asyncio-only: on Trio only ``ours`` runs. One
``nats-server -js`` (a temporary store directory) serves every sample of
the process (``persistence_jetstream``'s); making the streams and the
workers is not timed. The clock is the CPU time of this process by default:
the server's work (on the same cores) is not counted on either side; run it
with ``--clock wall`` too.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from actors import Actor, ActorSystem
from actors.delivery import Delivery, DurableProducerQueue, WorkerController, WorkQueue
from actors.nats._protocol import new_nuid
from actors.persistence import Codec, JetStreamJournal

from .._clock import now
from .._registry import ASYNCIO_LOOPS, Impl, Row, Sample, register
from ._systems import missing, nats_url

__all__: list[str] = []

JOBS, QUICK_JOBS = 2_000, 160
SENDERS, WORKERS, WINDOW = 16, 4, 16
#: The larger fetch of the second nats-py variant.
BIG_FETCH = 64
#: Seconds a sample waits for its last job.
GUARD = 120.0


def run(job: int) -> int:
    """The job's work, the same on both sides."""
    return job


class Job(Actor[Delivery[int]]):
    def receive(self, delivery: Delivery[int]) -> int:
        return run(delivery.message)


async def ours(count: int) -> Sample:
    each = count // SENDERS
    url = nats_url(jetstream=True)
    async with (
        JetStreamJournal(url, stream=f"J{new_nuid(10)}") as journal,
        ActorSystem() as system,
    ):
        queue: WorkQueue[int] = await WorkQueue.start(
            system, "jobs", durable=DurableProducerQueue(journal, Codec(int))
        )
        for _ in range(WORKERS):
            WorkerController.spawn(system, system.spawn(Job), queue.ref, window=WINDOW)

        async def sender() -> None:
            send = queue.send
            for n in range(each):
                await send(n)

        start = now()
        async with anyio.create_task_group() as tg:
            for _ in range(SENDERS):
                tg.start_soon(sender)
        with anyio.move_on_after(GUARD):
            await queue.wait_done()
        elapsed = now() - start
        done = queue.statistics().done
    return Sample(elapsed, done)


async def nats_py(count: int) -> Sample:
    return await _nats_py(count, WINDOW, False)


async def nats_py_fetch_64(count: int) -> Sample:
    return await _nats_py(count, BIG_FETCH, False)


async def nats_py_publish_async(count: int) -> Sample:
    return await _nats_py(count, WINDOW, True)


async def _nats_py(count: int, fetch: int, publish_async: bool) -> Sample:
    import nats
    from nats.js.api import AckPolicy, ConsumerConfig, RetentionPolicy, StorageType

    each = count // SENDERS
    stream = f"J{new_nuid(10)}"
    subject = f"{stream}.jobs"
    client = await nats.connect(nats_url(jetstream=True))
    done = 0
    finished = anyio.Event()
    try:
        js = client.jetstream()
        await js.add_stream(
            name=stream,
            subjects=[subject],
            retention=RetentionPolicy.WORK_QUEUE,
            storage=StorageType.FILE,
        )
        config = ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0)
        subscriptions = [
            await js.pull_subscribe(subject, "workers", stream=stream, config=config)
            for _ in range(WORKERS)
        ]
        total = each * SENDERS

        async def sender() -> None:
            if publish_async:
                publish_async_ = js.publish_async
                for n in range(each):
                    await (await publish_async_(subject, str(n).encode()))
                return
            publish = js.publish
            for n in range(each):
                await publish(subject, str(n).encode())  # returns once stored

        async def worker(subscription: Any) -> None:
            nonlocal done
            while not finished.is_set():
                try:
                    messages = await subscription.fetch(fetch, timeout=1.0)
                except nats.errors.TimeoutError:
                    continue
                for message in messages:
                    run(int(message.data))
                    await message.ack()
                    done += 1
                if done >= total:
                    finished.set()

        start = now()
        async with anyio.create_task_group() as tg:
            for subscription in subscriptions:
                tg.start_soon(worker, subscription)
            async with anyio.create_task_group() as senders:
                for _ in range(SENDERS):
                    senders.start_soon(sender)
            with anyio.move_on_after(GUARD):
                await finished.wait()
            elapsed = now() - start
            finished.set()
            tg.cancel_scope.cancel()
    finally:
        await client.close()
    return Sample(elapsed, done)


_why = missing(nats_py="the peer this row compares with")
if _why is not None:
    print(f"benchmarks: delivery/jobs/jetstream skipped: {_why}", file=sys.stderr)
else:
    register(
        Row(
            "delivery/jobs/jetstream",
            f"{SENDERS} tasks send jobs to a durable WorkQueue on a "
            f"JetStreamJournal, {WORKERS} local workers run them; nats-py: a "
            "work-queue stream, js.publish, a pull consumer with explicit acks",
            JOBS - JOBS % SENDERS,
            QUICK_JOBS - QUICK_JOBS % SENDERS,
            (
                Impl("ours", ours),
                Impl("nats-py", nats_py, ASYNCIO_LOOPS),
                Impl("nats-py, fetch 64", nats_py_fetch_64, ASYNCIO_LOOPS),
                Impl("nats-py, publish_async", nats_py_publish_async, ASYNCIO_LOOPS),
            ),
            unit="job",
        )
    )
