"""The durable producer queue: messages are in the journal before ``send``
returns; a producer made again on the same journal (its process died, or it
was stopped) keeps its epoch and numbering and resends what was not
confirmed, which the consumer deduplicates; confirmed events are cleaned up;
a failing journal fails the producer, never silently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from actors import ActorSystem
from actors.delivery import (
    ConsumerController,
    DurableProducerQueue,
    ProducerController,
    ProducerFailed,
)
from actors.delivery._protocol import Request
from actors.persistence import (
    Codec,
    EventsRejected,
    JournalError,
    MemoryJournal,
    SequenceConflict,
    SqliteJournal,
)
from actors.testing import wait_all_blocked

from ._links import Consumer, Effects, Faults, Link

pytestmark = pytest.mark.anyio


class Order(msgspec.Struct, frozen=True):
    n: int


def codec() -> Codec:
    return Codec(Order)


async def test_a_message_is_in_the_journal_when_send_returns(
    actor_system: ActorSystem[Any],
) -> None:
    journal = MemoryJournal()
    effects = Effects()
    effects.gate = anyio.Event()
    controller = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, effects)
    )
    queue = DurableProducerQueue(journal, codec())
    producer = await ProducerController.start(
        actor_system, "p", consumer=controller.ref, queue=queue
    )
    with anyio.fail_after(10):
        await producer.send(Order(1))
    events = await journal.read_events("delivery-producer|p", 1)
    assert [e.manifest for e in events] == ["actors.delivery.Sent@1"]
    effects.gate.set()
    with anyio.fail_after(10):
        await producer.wait_confirmed()
        while len(await journal.read_events("delivery-producer|p", 1)) < 2:
            await wait_all_blocked()
    events = await journal.read_events("delivery-producer|p", 1)
    assert events[-1].manifest == "actors.delivery.Confirmed@1"


async def test_a_producer_made_again_resends_what_was_not_confirmed_once(
    actor_system: ActorSystem[Any], tmp_path: Path
) -> None:
    # The first producer's confirmations never come back (its link drops
    # every answer): the consumer handles 1-5, the journal confirms none.
    async with SqliteJournal(tmp_path / "q.db") as journal:
        effects = Effects()
        controller = ConsumerController.spawn(
            actor_system, actor_system.spawn(Consumer, effects)
        )
        first = await ProducerController.start(
            actor_system, "p", queue=DurableProducerQueue(journal, codec())
        )
        deaf = actor_system.spawn(Link, first.ref, Faults(1, drop=1.0))
        link = actor_system.spawn(Link, controller.ref, Faults(2))
        link.tell(("rewrite", "producer", deaf))
        first.register_consumer(link)
        # The first Hello is answered only through the deaf link: demand comes
        # from a Request told straight to the producer, as a consumer would.
        await wait_all_blocked()
        assert first.demand == 0
        first.channel.on_request(Request("p", first.epoch, link, 0, 16))
        for n in range(1, 6):
            await first.send(Order(n))
        with anyio.fail_after(10):
            await effects.wait_count(5)
        assert first.confirmed_seq_nr == 0
        first.stop()

        second = await ProducerController.start(
            actor_system,
            "p",
            consumer=controller.ref,
            queue=DurableProducerQueue(journal, codec()),
        )
        assert second.epoch == first.epoch
        assert second.statistics().unconfirmed == 5
        assert await second.send(Order(6)) == 6
        with anyio.fail_after(10):
            await second.wait_confirmed()
        assert [m.n for _, _, m in effects.seen] == [1, 2, 3, 4, 5, 6]
        # The consumer's confirmation of 1-5 reached the new producer: they
        # were not handled again.
        assert controller.statistics().delivered == 6


async def test_confirmed_events_are_cleaned_up_and_the_numbering_goes_on(
    actor_system: ActorSystem[Any],
) -> None:
    journal = MemoryJournal()
    controller = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, Effects()), window=8
    )
    queue = DurableProducerQueue(journal, codec(), cleanup_every=4)
    producer = await ProducerController.start(
        actor_system, "p", consumer=controller.ref, queue=queue
    )
    with anyio.fail_after(20):
        for n in range(100):
            await producer.send(Order(n))
        await producer.wait_confirmed()
        await wait_all_blocked()
    producer.stop()
    left = await journal.read_events("delivery-producer|p", 1)
    assert 1 <= len(left) < 40
    again = await ProducerController.start(
        actor_system,
        "p",
        consumer=controller.ref,
        queue=DurableProducerQueue(journal, codec()),
    )
    assert again.epoch == producer.epoch
    assert again.statistics().unconfirmed == 0
    assert await again.send(Order(100)) == 101


async def test_a_failing_journal_fails_the_producer(
    actor_system: ActorSystem[Any],
) -> None:
    journal = MemoryJournal()
    controller = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, Effects())
    )
    producer = await ProducerController.start(
        actor_system,
        "p",
        consumer=controller.ref,
        queue=DurableProducerQueue(journal, codec()),
    )
    await producer.send(Order(1))
    journal.faults.fail_next_write()
    with anyio.fail_after(10):
        with pytest.raises(JournalError):
            await producer.send(Order(2))
        with pytest.raises(ProducerFailed) as failed:
            await producer.send(Order(3))
    assert isinstance(failed.value.__cause__, JournalError)


async def test_an_unencodable_message_is_rejected_and_uses_no_number(
    actor_system: ActorSystem[Any],
) -> None:
    controller = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, Effects())
    )
    producer = await ProducerController.start(
        actor_system,
        "p",
        consumer=controller.ref,
        queue=DurableProducerQueue(MemoryJournal(), codec()),
    )
    with anyio.fail_after(10):
        with pytest.raises(EventsRejected):
            await producer.send("not registered")
        assert await producer.send(Order(1)) == 1


async def test_two_producers_of_one_id_cannot_both_write(
    actor_system: ActorSystem[Any], tmp_path: Path
) -> None:
    async with SqliteJournal(tmp_path / "q.db") as journal:
        controller = ConsumerController.spawn(
            actor_system, actor_system.spawn(Consumer, Effects())
        )
        one = await ProducerController.start(
            actor_system,
            "p",
            consumer=controller.ref,
            queue=DurableProducerQueue(journal, codec()),
        )
        two = await ProducerController.start(
            actor_system,
            "p",
            consumer=controller.ref,
            queue=DurableProducerQueue(journal, codec()),
        )
        with anyio.fail_after(10):
            await one.send(Order(1))
            with pytest.raises(SequenceConflict):
                await two.send(Order(2))


async def test_a_queue_serves_one_producer() -> None:
    queue = DurableProducerQueue(MemoryJournal(), codec())
    await queue.load("p")
    with pytest.raises(RuntimeError, match="one producer"):
        await queue.load("p")
    with pytest.raises(TypeError, match="journal"):
        DurableProducerQueue(object(), codec())  # type: ignore[arg-type]
