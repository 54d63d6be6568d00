"""Backpressure end to end with a slow consumer on another node: the
producer is held back by the consumer's demand, so what is buffered
anywhere on the way (the producer's unconfirmed messages, the consumer
controller's mailbox, the consumer actor's mailbox) stays within the
consumer's window however many messages the producer tries to send.
Deterministic: counts of held messages, never a clock."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from actors import Actor, ActorRef
from actors.delivery import ConsumerController, Delivery, ProducerController
from actors.nats import NatsServer
from actors.testing.remote import Cluster

pytestmark = pytest.mark.anyio

WINDOW = 8
ATTEMPTS = 600
PAYLOAD = "x" * 1024


class Chunk(msgspec.Struct, frozen=True):
    n: int
    data: str


class Watched:
    """What the slow consumer saw, and the most held on the way at each
    message it handled."""

    def __init__(self) -> None:
        self.handled: list[int] = []
        self.most_unconfirmed = 0
        self.most_queued = 0
        self.gate = anyio.Event()
        self.first = anyio.Event()
        self.producer: ProducerController[Any] | None = None
        self.refs: list[ActorRef[Any]] = []


class Slow(Actor[Delivery[Chunk]]):
    """Handles one chunk per call, yielding a few times (a slow consumer);
    waits at the gate before the first one."""

    def __init__(self, watched: Watched) -> None:
        self.watched = watched

    async def receive(self, delivery: Delivery[Chunk]) -> None:
        watched = self.watched
        watched.first.set()
        await watched.gate.wait()
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        assert watched.producer is not None
        watched.most_unconfirmed = max(
            watched.most_unconfirmed, watched.producer.statistics().unconfirmed
        )
        queued = sum(ref.statistics().queued_messages for ref in watched.refs)
        watched.most_queued = max(watched.most_queued, queued)
        watched.handled.append(delivery.message.n)


async def test_a_slow_remote_consumer_holds_the_producer_to_its_window(
    nats_server: NatsServer,
) -> None:
    async with Cluster(nats_server.url, 2, names=("a", "b"), types=[Chunk]) as (a, b):
        watched = Watched()
        slow = b.spawn(Slow, watched)
        controller = ConsumerController.spawn(b, slow, window=WINDOW, name="slow")
        watched.refs = [slow, controller.ref]
        ref = await a.remote.lookup("b", "/user/slow")
        producer = await ProducerController.start(a, "p", consumer=ref)
        watched.producer = producer
        sent = 0

        async def flood() -> None:
            nonlocal sent
            for n in range(ATTEMPTS):
                await producer.send(Chunk(n, PAYLOAD))
                sent += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(flood)
            with anyio.fail_after(20):
                await watched.first.wait()
                while producer.demand > 0:
                    await producer.channel.wait_changed()
            # The consumer holds its first message: the producer accepted
            # the window and no more, and waits.
            stats = producer.statistics()
            assert (sent, stats.accepted, stats.unconfirmed) == (WINDOW,) * 3
            assert stats.demand == 0
            queued = controller.ref.statistics().queued_messages
            assert queued + slow.statistics().queued_messages <= WINDOW
            watched.gate.set()
        with anyio.fail_after(60):
            await producer.wait_confirmed()
    assert watched.handled == list(range(ATTEMPTS))  # each once, in order
    # Never more held than the window, at any message handled.
    assert watched.most_unconfirmed <= WINDOW
    assert watched.most_queued <= WINDOW
