"""JetStream persistence rows: durable actors on a ``JetStreamJournal``
beside nats-py publishing the same events to JetStream by hand.

* ``persistence/jetstream/tell/64``: 64 event-sourced actors on a
  ``JetStreamJournal`` (file storage, its own stream per sample) are told
  ``count / 64`` commands each at once; each actor persists one event per
  command, in order, each stored (acknowledged by the stream, conditional on
  the subject's last sequence, with a ``Nats-Msg-Id``) before it handles the
  next; timed until an ask queued behind the commands of every actor is
  answered. The other, ``nats-py publish_async``: one nats-py connection
  publishes the same ``count`` events (msgpack-encoded, to the same 64
  subjects, each with a ``Nats-Msg-Id``) with ``publish_async`` (up to its
  4,000 acknowledgements outstanding, no order between subjects, no
  condition), then waits for every acknowledgement: the fastest way nats-py
  stores them, without what a journal promises. The other, ``nats-py
  conditional``: what the journal does, by hand: 64 tasks, one per
  persistence id, each publishing its events one after the other with
  ``js.publish`` (a ``Nats-Msg-Id`` and the expected last subject sequence
  of its previous acknowledgement), each awaiting its acknowledgement.
  Unit: one stored event. nats-py is asyncio-only: on Trio only ``ours``
  runs.

One ``nats-server -js`` (a temporary store directory) serves every sample
of the process: started at the first sample (untimed), stopped at exit.
Spawning and recovering the actors and making the streams are not timed.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import msgspec

from actors import ActorSystem
from actors.nats import StreamConfig, connect
from actors.nats._protocol import new_nuid
from actors.persistence import JetStreamJournal

from .._clock import now
from .._registry import ASYNCIO_LOOPS, Impl, Row, Sample, register
from ._systems import missing, nats_url
from .persistence import Add, Added, Ledger

__all__: list[str] = []

ACTORS = 64
WRITES, QUICK_WRITES = ACTORS * 100, ACTORS * 2


async def ours_jetstream(count: int) -> Sample:
    per = count // ACTORS
    stored = 0
    url = nats_url(jetstream=True)
    async with (
        JetStreamJournal(url, stream=f"B{new_nuid(10)}") as journal,
        ActorSystem(journal=journal) as system,
    ):
        refs = [system.spawn(Ledger, f"ledger-{i}") for i in range(ACTORS)]
        for ref in refs:
            await ref.ask(None)  # recovered
        command = Add()
        start = now()
        for ref in refs:
            tell = ref.tell
            for _ in range(per):
                tell(command)
        for ref in refs:  # answered after its actor's commands
            stored += await ref.ask(None, timeout=300.0)
        elapsed = now() - start
    return Sample(elapsed, stored)


async def nats_py_publish_async(count: int) -> Sample:
    import nats

    per = count // ACTORS
    encode = msgspec.msgpack.Encoder().encode
    stream = f"B{new_nuid(10)}"
    client = await nats.connect(nats_url(jetstream=True))
    try:
        js = client.jetstream()
        # The stream as the journal makes it (our client: untimed setup).
        async with connect(nats_url(jetstream=True)) as nc:
            await nc.jetstream().add_stream(
                StreamConfig(stream, subjects=(f"{stream}.>",), allow_rollup_hdrs=True)
            )
        messages: list[tuple[str, bytes, dict[str, str]]] = []
        for n in range(1, per + 1):
            for i in range(ACTORS):
                messages.append(
                    (
                        f"{stream}.e.ledger-{i}",
                        encode(Added(n)),
                        {"Nats-Msg-Id": f"ledger-{i}:w:{n}"},
                    )
                )
        publish = js.publish_async
        start = now()
        futures: list[Any] = [
            await publish(subject, payload, headers=headers)
            for subject, payload, headers in messages
        ]
        await js.publish_async_completed()
        elapsed = now() - start
        stored = sum(1 for future in futures if not future.exception())
    finally:
        await client.close()
    return Sample(elapsed, stored)


async def nats_py_conditional(count: int) -> Sample:
    import nats

    per = count // ACTORS
    encode = msgspec.msgpack.Encoder().encode
    stream = f"B{new_nuid(10)}"
    stored = 0
    client = await nats.connect(nats_url(jetstream=True))
    try:
        js = client.jetstream()
        async with connect(nats_url(jetstream=True)) as nc:
            await nc.jetstream().add_stream(
                StreamConfig(stream, subjects=(f"{stream}.>",), allow_rollup_hdrs=True)
            )

        async def writer(index: int) -> None:
            nonlocal stored
            subject = f"{stream}.e.ledger-{index}"
            last = 0
            for n in range(1, per + 1):
                ack = await js.publish(
                    subject,
                    encode(Added(n)),
                    headers={
                        "Nats-Msg-Id": f"ledger-{index}:w:{n}",
                        "Nats-Expected-Last-Subject-Sequence": str(last),
                    },
                )
                last = ack.seq
                stored += 1

        start = now()
        async with anyio.create_task_group() as tg:
            for index in range(ACTORS):
                tg.start_soon(writer, index)
        elapsed = now() - start
    finally:
        await client.close()
    return Sample(elapsed, stored)


_why = missing(nats_py="the peer this row compares with")
if _why is not None:
    print(f"benchmarks: JetStream rows skipped: {_why}", file=sys.stderr)
else:
    register(
        Row(
            f"persistence/jetstream/tell/{ACTORS}",
            f"{ACTORS} event-sourced actors persist their told commands at once on "
            "a JetStreamJournal, vs nats-py publish_async of the same events and "
            "vs nats-py conditional publishes, one task per id",
            WRITES,
            QUICK_WRITES,
            (
                Impl("ours", ours_jetstream),
                Impl("nats-py publish_async", nats_py_publish_async, ASYNCIO_LOOPS),
                Impl("nats-py conditional", nats_py_conditional, ASYNCIO_LOOPS),
            ),
            unit="event",
        )
    )
