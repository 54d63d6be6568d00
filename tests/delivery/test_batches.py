"""The batched protocol: a producer that accepts many messages without
yielding sends them as one ``Sequenced``, with its ref only when the
consumer first answered; a consumer controller checks a batch as a whole
(numbers, lengths, a known producer) and drops the part of it that
was handled already, and the wire refuses a batch longer than
``MAX_BATCH``."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from actors import Actor, ActorRef, ActorSystem
from actors.delivery import ConsumerController, Delivery, ProducerController
from actors.delivery._protocol import MAX_BATCH, Hello, Request, Sequenced
from actors.nats import NatsServer
from actors.remote import DecodeError
from actors.testing.remote import Cluster

from ._links import Effects, Faults, Link

pytestmark = pytest.mark.anyio


class Recorder(Actor[Any]):
    """Keeps every protocol message it gets, for the test to read."""

    def __init__(self, seen: list[Any], changed: list[anyio.Event]) -> None:
        self.seen = seen
        self.changed = changed

    def receive(self, message: Any) -> None:
        self.seen.append(message)
        self.changed[0].set()
        self.changed[0] = anyio.Event()


class Tap(Actor[Any]):
    """Forwards to ``target`` and keeps a copy of each ``Sequenced``."""

    def __init__(self, target: ActorRef[Any], taken: list[Sequenced]) -> None:
        self.target = target
        self.taken = taken

    def receive(self, message: Any) -> None:
        if type(message) is Sequenced:
            self.taken.append(message)
        self.target.tell(message)


async def _wait(seen: list[Any], changed: list[anyio.Event], what: type) -> Any:
    with anyio.fail_after(10):
        while True:
            for message in seen:
                if type(message) is what:
                    seen.remove(message)
                    return message
            await changed[0].wait()


def _handler(effects: Effects) -> Any:
    def handle(delivery: Delivery[Any]) -> None:
        effects.add(delivery)

    return handle


async def test_messages_accepted_without_yielding_travel_as_one_batch(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    controller = ConsumerController.spawn(
        actor_system, handler=_handler(effects), window=64
    )
    taken: list[Sequenced] = []
    # producer -> tap (keeps each batch) -> link -> controller, and the
    # answers back through a link naming the tap as the consumer.
    to_consumer = actor_system.spawn(Link, controller.ref, Faults(0))
    tap = actor_system.spawn(Tap, to_consumer, taken)
    producer = await ProducerController.start(actor_system, "p")
    to_producer = actor_system.spawn(Link, producer.ref, Faults(0))
    to_consumer.tell(("rewrite", "producer", to_producer))
    to_producer.tell(("rewrite", "consumer", tap))
    producer.register_consumer(tap)
    with anyio.fail_after(10):
        while producer.demand < 64:
            await producer.channel.wait_changed()
    for n in range(40):  # within the demand: none of them yields
        await producer.send(n)
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert [m for _, _, m in effects.seen] == list(range(40))
    assert [(b.seq_nr, b.count) for b in taken] == [(1, 40)]
    # The first batch after the consumer answered carries the producer's ref.
    assert taken[0].producer == producer.ref
    for n in range(40, 50):
        await producer.send(n)
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert [(b.seq_nr, b.count) for b in taken[1:]] == [(41, 10)]
    assert taken[1].producer is None  # known from Hello: not sent again
    assert [m for _, _, m in effects.seen] == list(range(50))


async def test_a_batch_is_checked_whole_and_its_seen_part_dropped(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    controller = ConsumerController.spawn(
        actor_system, handler=_handler(effects), window=8
    )
    seen: list[Any] = []
    changed = [anyio.Event()]
    producer = actor_system.spawn(Recorder, seen, changed)

    def batch(first: int, items: list[Any], **fields: Any) -> Sequenced:
        return Sequenced("p", "e1", first, 0, messages=items, **fields)

    controller.ref.tell(Hello("p", "e1", producer, 0))
    request = await _wait(seen, changed, Request)
    assert (request.confirmed, request.up_to) == (0, 8)
    controller.ref.tell(batch(1, ["a", "b", "c"]))
    controller.ref.tell(batch(2, ["b", "c", "d", "e"]))  # overlaps: b, c seen
    controller.ref.tell(batch(1, ["a"]))  # all seen: a duplicate
    controller.ref.tell(batch(7, ["g"]))  # a gap (f missing): dropped
    controller.ref.tell(batch(6, ["f"], job_ids=[1, 2]))  # lengths disagree
    controller.ref.tell(batch(6, []))  # empty
    controller.ref.tell(batch(6, ["f", "g", "h"]))
    with anyio.fail_after(10):
        await controller.wait_confirmed("p", 8)
    assert [m for _, _, m in effects.seen] == list("abcdefgh")
    assert [s for _, s, _ in effects.seen] == list(range(1, 9))
    stats = controller.statistics()
    assert stats.delivered == 8
    assert stats.duplicates == 3  # b, c, and the second a
    assert stats.out_of_order == 1
    assert stats.bad_input == 2  # the two malformed batches


async def test_a_batch_of_an_unknown_producer_without_its_ref_is_dropped(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    controller = ConsumerController.spawn(actor_system, handler=_handler(effects))
    seen: list[Any] = []
    changed = [anyio.Event()]
    producer = actor_system.spawn(Recorder, seen, changed)
    # No Hello came, and no ref to answer to: nothing handled, counted.
    controller.ref.tell(Sequenced("q", "e", 1, 0, messages=["x"]))
    # A resend carries the ref: it is handled and confirmed to that ref.
    controller.ref.tell(Sequenced("q", "e", 1, 0, producer, messages=["x"]))
    with anyio.fail_after(10):
        await effects.wait_count(1)
    request = await _wait(seen, changed, Request)
    assert request.confirmed == 1
    assert effects.seen == [("q", 1, "x")]
    assert controller.statistics().bad_input == 1


async def test_the_wire_refuses_a_batch_longer_than_max_batch(
    nats_server: NatsServer,
) -> None:
    async with Cluster(nats_server.url, 1, names=("a",)) as (a,):
        effects = Effects()
        ConsumerController.spawn(a, handler=_handler(effects), name="c")
        codec = a.remote.codec
        fits = Sequenced(
            "p", "e", 1, 0, None, ["x"] * MAX_BATCH, [msgspec.Raw(b"\xa0")] * MAX_BATCH
        )
        tag, body = codec.encode(fits)
        assert codec.decode(tag, body).count == MAX_BATCH
        over = msgspec.structs.replace(
            fits, tags=[*fits.tags, "x"], bodies=[*fits.bodies, fits.bodies[0]]
        )
        tag, body = codec.encode(over)
        with pytest.raises(DecodeError, match="length"):
            codec.decode(tag, body)
