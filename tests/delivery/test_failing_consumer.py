"""What the reliable-delivery how-to says of a consumer whose handling fails
again and again: as a top-level actor under the default strategy its fourth
failure in a row shuts the system down; under a parent whose strategy allows
the retries, or as a ``handler=``, the message is retried until it succeeds."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem, Backoff, OneForOne
from actors.delivery import ConsumerController, Delivery, ProducerController

pytestmark = pytest.mark.anyio

FAILURES = 5  # more than the default intensity of 3 restarts within 5 s


class Flaky(Actor[Delivery[str]]):
    """Fails the first FAILURES deliveries it gets, then confirms."""

    def __init__(self, tries: list[str]) -> None:
        self.tries = tries

    def receive(self, delivery: Delivery[str]) -> str:
        self.tries.append(delivery.message)
        if len(self.tries) <= FAILURES:
            raise ConnectionError("the database is down")
        return "stored"


class Patient(Actor[Any]):
    """A parent that allows its children many restarts, spaced out."""

    supervisor_strategy = OneForOne(
        max_restarts=100, within=10.0, backoff=Backoff(min_delay=0.001, max_delay=0.01)
    )

    def receive(self, tries: list[str]) -> ActorRef[Delivery[str]]:
        return self.context.spawn(Flaky, tries)


async def test_a_top_level_consumer_failing_again_and_again_shuts_the_system_down() -> (
    None
):
    tries: list[str] = []
    with anyio.fail_after(10):
        with pytest.raises(ConnectionError):
            async with ActorSystem() as system:
                consumer = ConsumerController.spawn(
                    system, system.spawn(Flaky, tries), retry_interval=0.01
                )
                producer = await ProducerController.start(
                    system, "p", consumer=consumer.ref
                )
                await producer.send("job")
                await anyio.sleep_forever()
    assert len(tries) == 4  # three restarts allowed, the fourth failure escalates


async def test_a_consumer_under_a_patient_parent_is_retried_until_it_succeeds(
    actor_system: ActorSystem[Any],
) -> None:
    tries: list[str] = []
    flaky = await actor_system.spawn(Patient).ask(tries)
    consumer = ConsumerController.spawn(actor_system, flaky, retry_interval=0.01)
    producer = await ProducerController.start(actor_system, "p", consumer=consumer.ref)
    with anyio.fail_after(10):
        assert await producer.ask("job") == "stored"
    assert tries == ["job"] * (FAILURES + 1)
    assert actor_system.escalations == 0


async def test_a_handler_failing_again_and_again_is_retried_without_failing_an_actor(
    actor_system: ActorSystem[Any],
) -> None:
    tries: list[str] = []

    def handle(delivery: Delivery[str]) -> str:
        tries.append(delivery.message)
        if len(tries) <= FAILURES:
            raise ConnectionError("the database is down")
        return "stored"

    consumer = ConsumerController.spawn(
        actor_system, handler=handle, retry_interval=0.01
    )
    producer = await ProducerController.start(actor_system, "p", consumer=consumer.ref)
    with anyio.fail_after(10):
        assert await producer.ask("job") == "stored"
    assert tries == ["job"] * (FAILURES + 1)
    assert actor_system.failures == 0
