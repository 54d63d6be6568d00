"""A local consumer actor gets its deliveries in batches (the lane of
``actors/delivery/_handover.py``), several in flight: order and
once-only handling still hold when its handler fails, answers with an
``ErrorReply``, stashes a delivery (confirmed only once handled after the
unstash, as Akka's explicit confirmation), or the consumer stops with
batches queued or a delivery stashed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem, ErrorReply
from actors.delivery import ConsumerController, Delivery, ProducerController
from actors.testing import wait_all_blocked

pytestmark = pytest.mark.anyio


class Record:
    """What the consumer did, shared with the test (it outlives restarts)."""

    def __init__(self, failures: int = 0, fail_at: int = 3) -> None:
        self.seen: list[int] = []
        self.attempts: list[int] = []
        self.failures = failures
        self.fail_at = fail_at
        self.gate = anyio.Event()
        self.error_reply = False


class Picky(Actor[Delivery[int]]):
    """Waits for the gate at the first message; fails (or answers with an
    ``ErrorReply``) at ``fail_at`` while failures are left."""

    def __init__(self, record: Record) -> None:
        self.record = record

    async def receive(self, delivery: Delivery[int]) -> Any:
        record = self.record
        record.attempts.append(delivery.message)
        if delivery.message == 0:
            await record.gate.wait()
        if delivery.message == record.fail_at and record.failures > 0:
            record.failures -= 1
            if record.error_reply:
                return ErrorReply(RuntimeError("not yet"))
            raise RuntimeError("not yet")
        record.seen.append(delivery.message)
        return delivery.message


async def _queued(
    system: ActorSystem[Any], record: Record, count: int
) -> tuple[ProducerController[Any], ConsumerController]:
    """A producer that sent ``count`` messages, one batch each (it yields
    between sends), all queued behind the consumer's first message."""
    consumer = system.spawn(Picky, record)
    controller = ConsumerController.spawn(
        system, consumer, window=count, retry_interval=0.01
    )
    producer = await ProducerController.start(system, "p", consumer=controller.ref)
    for n in range(count):
        await producer.send(n)
        await wait_all_blocked()  # each goes out alone, as its own batch
    return producer, controller


async def test_a_failure_holds_every_later_batch_until_the_failed_message_succeeds(
    actor_system: ActorSystem[Any],
) -> None:
    record = Record(failures=2)
    producer, controller = await _queued(actor_system, record, 8)
    # Messages 1-7 are queued in the consumer's mailbox, each a batch, while
    # 0 waits: 3 fails twice, and nothing after it may run before it passed.
    record.gate.set()
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert record.seen == list(range(8))
    assert record.attempts == [0, 1, 2, 3, 3, 3, 4, 5, 6, 7]
    stats = controller.statistics()
    assert stats.delivered == 8 and stats.handler_failures == 2


async def test_an_error_reply_is_retried_in_order_without_failing_the_consumer(
    actor_system: ActorSystem[Any],
) -> None:
    record = Record(failures=1)
    record.error_reply = True
    producer, controller = await _queued(actor_system, record, 6)
    record.gate.set()
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert record.seen == list(range(6))
    assert record.attempts == [0, 1, 2, 3, 3, 4, 5]
    assert controller.statistics().handler_failures == 1


async def test_each_reply_reaches_the_producers_ask_with_batches_in_flight(
    actor_system: ActorSystem[Any],
) -> None:
    record = Record()
    record.gate.set()
    consumer = actor_system.spawn(Picky, record)
    controller = ConsumerController.spawn(actor_system, consumer, window=16)
    producer = await ProducerController.start(
        actor_system, "p", consumer=controller.ref
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            replies: dict[int, int] = {}

            async def ask(n: int) -> None:
                replies[n] = await producer.ask(n)

            for n in range(12):
                tg.start_soon(ask, n)
    assert replies == {n: n for n in range(12)}
    assert sorted(record.seen) == list(range(12))  # each once (asked in any order)


async def test_a_consumer_that_stops_with_batches_queued_stops_its_controller(
    actor_system: ActorSystem[Any],
) -> None:
    record = Record()
    producer, controller = await _queued(actor_system, record, 5)
    dead: list[object] = []
    actor_system.dead_letters.subscribe(lambda letter: dead.append(letter.message))
    assert controller.consumer is not None
    controller.consumer.stop()  # after 0, which it is handling
    record.gate.set()
    with anyio.fail_after(10):
        await controller.ref.join()
    # 0 was handled and confirmed; 1-4 never ran: dead letters, unconfirmed.
    assert record.seen == [0]
    assert controller.confirmed("p") == 1
    assert [d.message for d in dead if isinstance(d, Delivery)] == [1, 2, 3, 4]
    assert producer.statistics().unconfirmed >= 4


async def test_a_consumer_with_a_delivery_timeout_is_asked_per_message(
    actor_system: ActorSystem[Any],
) -> None:
    record = Record(failures=1)
    record.gate.set()
    consumer = actor_system.spawn(Picky, record)
    controller = ConsumerController.spawn(
        actor_system, consumer, delivery_timeout=10.0, retry_interval=0.01
    )
    producer = await ProducerController.start(
        actor_system, "p", consumer=controller.ref
    )
    for n in range(6):
        await producer.send(n)
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert record.seen == list(range(6))
    assert controller.statistics().handler_failures == 1


class Stasher(Actor[Any]):
    """Stashes each delivery of ``record.fail_at`` on while ``holding``
    (Akka's consumer confirms explicitly: a stashed message is not handled);
    ``"go"`` unstashes them, ``"stop"`` stops it."""

    def __init__(self, record: Record) -> None:
        self.record = record
        self.holding = True

    def receive(self, message: Any) -> Any:
        record = self.record
        if message == "go":
            self.holding = False
            self.unstash_all()
            return None
        if message == "stop":
            self.context.stop()
            return None
        record.attempts.append(message.message)
        if self.holding and message.message >= record.fail_at:
            self.stash()
            return "stashed"  # not a confirmation: it was set aside
        record.seen.append(message.message)
        return message.message


async def _stashing(
    system: ActorSystem[Any], stash_at: int, batches: list[int]
) -> tuple[Record, ActorRef[Any], ProducerController[Any], ConsumerController]:
    record = Record(fail_at=stash_at)
    consumer = system.spawn(Stasher, record)
    controller = ConsumerController.spawn(system, consumer, window=64)
    producer = await ProducerController.start(system, "p", consumer=controller.ref)
    n = 0
    for size in batches:
        for _ in range(size):  # without yielding: one batch
            await producer.send(n)
            n += 1
        await wait_all_blocked()
    return record, consumer, producer, controller


async def test_a_stashed_delivery_is_confirmed_once_handled_after_unstash(
    actor_system: ActorSystem[Any],
) -> None:
    # Message 2 of the first batch is stashed: 3 and 4 after it and the
    # later batches wait, none confirmed, until the consumer unstashes.
    record, consumer, producer, controller = await _stashing(actor_system, 2, [5, 3])
    assert record.attempts == [0, 1, 2]
    assert record.seen == [0, 1]
    assert controller.confirmed("p") == 2
    consumer.tell("go")
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert record.seen == list(range(8))  # each once, in order
    assert record.attempts == [0, 1, 2, *range(2, 8)]
    stats = controller.statistics()
    assert stats.delivered == 8 and stats.handler_failures == 0


async def test_a_consumer_that_stops_with_a_delivery_stashed_leaves_it_unconfirmed(
    actor_system: ActorSystem[Any],
) -> None:
    dead: list[object] = []
    actor_system.dead_letters.subscribe(lambda letter: dead.append(letter.message))
    record, consumer, producer, controller = await _stashing(actor_system, 1, [3, 2])
    consumer.tell("stop")
    with anyio.fail_after(10):
        await controller.ref.join()
    # 0 was handled; the stashed 1, the rest of its batch and the held batch
    # are unconfirmed (the producer resends them to the next consumer).
    assert record.seen == [0]
    assert controller.confirmed("p") == 1
    assert [d.message for d in dead if isinstance(d, Delivery)] == [1, 2]
    assert producer.statistics().unconfirmed >= 4
