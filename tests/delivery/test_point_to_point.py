"""Point-to-point reliable delivery in one system: every accepted message
reaches the handler once and in order, through lost, duplicated and
reordered deliveries in both directions, handler failures, a new consumer,
and the consumer's demand bounding what is in flight."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.delivery import (
    ConsumerController,
    Delivery,
    ProducerController,
    ProducerFailed,
)
from actors.delivery._protocol import Request, Resend
from actors.testing import wait_all_blocked

from ._links import Consumer, Effects, Faults, Link

pytestmark = pytest.mark.anyio

FAST = 0.02  # resend interval of the fault tests, seconds


async def _pair(
    system: ActorSystem[Any], effects: Effects, window: int = 16, **options: Any
) -> tuple[ProducerController[Any], ConsumerController]:
    consumer = system.spawn(Consumer, effects)
    controller = ConsumerController.spawn(system, consumer, window=window)
    producer = await ProducerController.start(
        system, "p", consumer=controller.ref, **options
    )
    return producer, controller


async def test_every_message_reaches_the_handler_once_in_order(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    producer, controller = await _pair(actor_system, effects)
    numbers = [await producer.send(n) for n in range(200)]
    assert numbers == list(range(1, 201))
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert [m for _, _, m in effects.seen] == list(range(200))
    assert [s for _, s, _ in effects.seen] == list(range(1, 201))
    assert controller.confirmed("p") == 200
    stats = producer.statistics()
    assert stats.confirmed_seq_nr == 200 and stats.unconfirmed == 0


async def test_ask_returns_what_the_handler_returned_after_it_confirmed(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    producer, _ = await _pair(actor_system, effects)
    with anyio.fail_after(10):
        assert await producer.ask("job") == ("done", "job")
    assert effects.seen == [("p", 1, "job")]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_lost_duplicated_and_reordered_deliveries_reach_the_handler_once_in_order(
    actor_system: ActorSystem[Any], seed: int
) -> None:
    effects = Effects()
    # A handler that yields: the next batch comes while one is handled, so
    # the links' reordering makes gaps (a handler that never yields gets
    # whole windows, one at a time).
    effects.yields = True
    consumer = actor_system.spawn(Consumer, effects)
    controller = ConsumerController.spawn(actor_system, consumer, window=8)
    forward = Faults(seed, drop=0.15, duplicate=0.15, reorder=0.15)
    backward = Faults(seed + 100, drop=0.15, duplicate=0.15, reorder=0.15)
    to_consumer = actor_system.spawn(Link, controller.ref, forward)
    producer = await ProducerController.start(actor_system, "p", resend_interval=FAST)
    to_producer = actor_system.spawn(Link, producer.ref, backward)
    to_consumer.tell(("rewrite", "producer", to_producer))
    to_producer.tell(("rewrite", "consumer", to_consumer))
    producer.register_consumer(to_consumer)
    count = 300
    with anyio.fail_after(30):
        for n in range(count):
            await producer.send(n)
        await producer.wait_confirmed()
    assert [m for _, _, m in effects.seen] == list(range(count))
    stats = controller.statistics()
    assert stats.delivered == count
    # The faults did happen, and the controllers repaired them.
    assert forward.dropped and forward.duplicated and forward.reordered
    assert backward.dropped and backward.duplicated
    assert stats.duplicates > 0 and stats.out_of_order > 0
    assert producer.statistics().resent > 0


async def test_send_waits_while_the_consumer_has_not_asked_for_more(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    effects.gate = anyio.Event()
    producer, _ = await _pair(actor_system, effects, window=4)
    with anyio.fail_after(10):
        while producer.demand == 0:
            await producer.channel.wait_changed()
    assert producer.demand == 4
    for n in range(4):
        await producer.send(n)
    assert producer.demand == 0
    sent: list[int] = []
    async with anyio.create_task_group() as tg:

        async def one_more() -> None:
            sent.append(await producer.send(4))

        tg.start_soon(one_more)
        await wait_all_blocked()
        # The handler holds the first message: nothing confirmed, no demand.
        assert sent == [] and producer.statistics().unconfirmed == 4
        effects.gate.set()
    assert sent == [5]
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert [m for _, _, m in effects.seen] == [0, 1, 2, 3, 4]


async def test_a_failing_handler_gets_the_message_again_until_it_succeeds(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    effects.fail_next = 2
    consumer = actor_system.spawn(Consumer, effects)
    controller = ConsumerController.spawn(actor_system, consumer, retry_interval=0.01)
    producer = await ProducerController.start(
        actor_system, "p", consumer=controller.ref
    )
    await producer.send("a")
    await producer.send("b")
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert [m for _, _, m in effects.seen] == ["a", "b"]
    assert controller.statistics().handler_failures == 2


async def test_a_new_consumer_gets_every_unconfirmed_message(
    actor_system: ActorSystem[Any],
) -> None:
    first = Effects()
    first.gate = anyio.Event()  # the first consumer's handler hangs
    old = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, first), window=8
    )
    producer = await ProducerController.start(
        actor_system, "p", consumer=old.ref, resend_interval=FAST
    )
    for n in range(5):
        await producer.send(n)
    second = Effects()
    new = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, second), window=8
    )
    new.register_to(producer.ref)
    for n in range(5, 8):
        await producer.send(n)
    with anyio.fail_after(10):
        await producer.wait_confirmed()
    assert [m for _, _, m in second.seen] == list(range(8))
    # The old consumer's late confirmation is not the current consumer's.
    first.gate.set()
    with anyio.fail_after(10):
        await first.wait_count(1)
    await wait_all_blocked()
    assert producer.statistics().bad_input >= 1


async def test_a_new_producer_epoch_starts_the_consumer_afresh(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    consumer = actor_system.spawn(Consumer, effects)
    controller = ConsumerController.spawn(actor_system, consumer)
    first = await ProducerController.start(actor_system, "p", consumer=controller.ref)
    await first.send("a")
    await first.wait_confirmed()
    first.stop()
    # The same producer id, made again without a durable queue: numbering
    # starts at 1 in a new epoch, and its messages are new ones.
    second = await ProducerController.start(actor_system, "p", consumer=controller.ref)
    assert second.epoch != first.epoch
    assert await second.send("b") == 1
    with anyio.fail_after(10):
        await second.wait_confirmed()
    assert [m for _, _, m in effects.seen] == ["a", "b"]
    with pytest.raises(ProducerFailed):
        await first.send("c")


async def test_a_request_that_confirms_what_was_never_sent_is_ignored(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    effects.gate = anyio.Event()
    producer, controller = await _pair(actor_system, effects, window=4)
    await producer.send("a")
    channel = producer.channel
    bogus = [
        Request("p", producer.epoch, controller.ref, 50, 60),  # never sent
        Request("p", "other-epoch", controller.ref, 1, 10**9),
        Request("q", producer.epoch, controller.ref, 1, 10**9),
        Request("p", producer.epoch, producer.ref, 1, 10**9),  # not the consumer
        Resend("p", "other-epoch", controller.ref, 1),
    ]
    for message in bogus:
        producer.ref.tell(message)
    await wait_all_blocked()
    assert channel.bad_input == len(bogus)
    assert channel.confirmed == 0 and len(channel.unconfirmed) == 1
    # A consumer cannot make the producer hold more than max_unconfirmed.
    producer.ref.tell(Request("p", producer.epoch, controller.ref, 0, 10**9))
    await wait_all_blocked()
    assert channel.up_to == channel.max_unconfirmed
    effects.gate.set()
    with anyio.fail_after(10):
        await producer.wait_confirmed()


async def test_the_consumer_refuses_producers_beyond_its_table(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    consumer = actor_system.spawn(Consumer, effects)
    controller = ConsumerController.spawn(actor_system, consumer, max_producers=2)
    producers = [
        await ProducerController.start(actor_system, f"p{i}", consumer=controller.ref)
        for i in range(3)
    ]
    for producer in producers[:2]:
        await producer.send("x")
        await producer.wait_confirmed()
    await wait_all_blocked()
    assert producers[2].demand == 0  # never answered
    stats = controller.statistics()
    assert stats.producers == 2 and stats.bad_input >= 1


async def test_bad_arguments_are_refused_naming_them(
    actor_system: ActorSystem[Any],
) -> None:
    consumer = actor_system.spawn(Consumer, Effects())
    with pytest.raises(ValueError, match="window"):
        ConsumerController.spawn(actor_system, consumer, window=0)
    with pytest.raises(TypeError, match="consumer"):
        ConsumerController.spawn(actor_system, "nobody")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="producer_id"):
        await ProducerController.start(actor_system, "")
    with pytest.raises(ValueError, match="resend_interval"):
        await ProducerController.start(actor_system, "p", resend_interval=0)
    with pytest.raises(TypeError, match="spawner"):
        await ProducerController.start(object(), "p")  # type: ignore[arg-type]


async def test_a_delivery_carries_its_idempotency_key(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    producer, _ = await _pair(actor_system, effects)
    await producer.send("m")
    await producer.wait_confirmed()
    delivery = Delivery("m", "p", producer.epoch, 1)
    assert delivery.key == ("p", producer.epoch, 1)
    assert "seq_nr=1" in repr(delivery)


async def test_a_handler_in_the_controller_gets_each_message_once_in_order(
    actor_system: ActorSystem[Any],
) -> None:
    seen: list[int] = []
    failures = [2]

    def handle(delivery: Delivery[int]) -> int:
        if delivery.message == 3 and failures[0] > 0:
            failures[0] -= 1
            raise RuntimeError("not yet")
        seen.append(delivery.message)
        return delivery.message * 10

    controller = ConsumerController.spawn(
        actor_system, handler=handle, window=4, retry_interval=0.01
    )
    producer = await ProducerController.start(
        actor_system, "p", consumer=controller.ref
    )
    for n in range(10):
        await producer.send(n)
    with anyio.fail_after(10):
        assert await producer.ask(10) == 100
        await producer.wait_confirmed()
    assert seen == list(range(11))
    assert controller.statistics().handler_failures == 2
    with pytest.raises(TypeError, match="one of them"):
        ConsumerController.spawn(actor_system)
