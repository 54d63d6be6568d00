"""Demand is granted once per batch: the confirmations a consumer
controller makes while its handler runs without yielding travel as one
``Request`` (the confirmation and the demand as they are at the end), not
one per half window; a handler that yields gets the grant due sent before
it yields, so the producer sends the next half meanwhile. Demand is never
less than before: every grant carries ``confirmed + window``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem
from actors.delivery import ConsumerController, Delivery
from actors.delivery._protocol import Hello, Request, Sequenced
from actors.testing import ManualClock, wait_all_blocked

from ._links import Effects
from .test_batches import Recorder, _handler

pytestmark = pytest.mark.anyio

WINDOW = 16


class Sync(Actor[Delivery[Any]]):
    def __init__(self, effects: Effects) -> None:
        self.effects = effects

    def receive(self, delivery: Delivery[Any]) -> None:
        self.effects.add(delivery)


class Yielding(Sync):
    async def receive(self, delivery: Delivery[Any]) -> None:  # type: ignore[override]
        await anyio.lowlevel.checkpoint()
        self.effects.add(delivery)


def _controller(system: ActorSystem[Any], kind: str, effects: Effects) -> Any:
    if kind == "handler":
        return ConsumerController.spawn(
            system, handler=_handler(effects), window=WINDOW
        )
    actor = Sync if kind == "actor" else Yielding
    return ConsumerController.spawn(system, system.spawn(actor, effects), window=WINDOW)


async def _grants_for_one_batch(system: ActorSystem[Any], kind: str) -> list[Request]:
    """The Requests a consumer controller sends for one full-window batch,
    after the one answering ``Hello``."""
    effects = Effects()
    controller = _controller(system, kind, effects)
    seen: list[Any] = []
    changed = [anyio.Event()]
    producer = system.spawn(Recorder, seen, changed)
    controller.ref.tell(Hello("p", "e", producer, 0))
    with anyio.fail_after(10):
        while not any(type(m) is Request for m in seen):
            await changed[0].wait()
    seen.clear()
    controller.ref.tell(Sequenced("p", "e", 1, 0, messages=list(range(WINDOW))))
    with anyio.fail_after(10):
        await controller.wait_confirmed("p", WINDOW)
    await wait_all_blocked()
    assert [d for _, _, d in effects.seen] == list(range(WINDOW))
    return [m for m in seen if type(m) is Request]


# The system's clock is a ManualClock (manual_time) in the two tests below:
# on the real one, a loaded machine lets the flush timer (a few ms) fire in
# the middle of the batch and report what was confirmed by then.


@pytest.mark.parametrize("kind", ["handler", "actor"])
async def test_a_batch_handled_without_yielding_is_confirmed_by_one_grant(
    actor_system: ActorSystem[Any], manual_time: ManualClock, kind: str
) -> None:
    grants = await _grants_for_one_batch(actor_system, kind)
    assert [(g.confirmed, g.up_to) for g in grants] == [(WINDOW, 2 * WINDOW)]


async def test_a_yielding_handler_gets_the_half_window_grant_sent_before_it_yields(
    actor_system: ActorSystem[Any], manual_time: ManualClock
) -> None:
    grants = await _grants_for_one_batch(actor_system, "yielding")
    half = WINDOW // 2
    assert [(g.confirmed, g.up_to) for g in grants] == [
        (half, half + WINDOW),
        (WINDOW, 2 * WINDOW),
    ]


async def test_a_burst_of_duplicate_batches_is_answered_by_one_grant(
    actor_system: ActorSystem[Any], manual_time: ManualClock
) -> None:
    effects = Effects()
    controller = _controller(actor_system, "handler", effects)
    seen: list[Any] = []
    changed = [anyio.Event()]
    producer = actor_system.spawn(Recorder, seen, changed)
    controller.ref.tell(Hello("p", "e", producer, 0))
    controller.ref.tell(Sequenced("p", "e", 1, 0, messages=list(range(4))))
    with anyio.fail_after(10):
        await controller.wait_confirmed("p", 4)
    await manual_time.advance(0.01)  # less than half a window: reported soon
    await wait_all_blocked()
    assert [(m.confirmed, m.up_to) for m in seen] == [(0, WINDOW), (4, 4 + WINDOW)]
    seen.clear()
    for _ in range(5):  # a resend's batches, all seen already
        controller.ref.tell(Sequenced("p", "e", 1, 0, messages=list(range(4))))
    await wait_all_blocked()
    assert seen == []  # due, not sent yet: one grant for the burst, soon
    await manual_time.advance(0.01)
    await wait_all_blocked()
    assert [(m.confirmed, m.up_to) for m in seen] == [(4, 4 + WINDOW)]
    assert controller.statistics().duplicates == 20
