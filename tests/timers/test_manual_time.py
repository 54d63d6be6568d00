"""Timer guarantees where exact time matters, on every backend: the system
runs on the test kit's ManualClock (the ``manual_time`` fixture), so firings
land exactly on their deadlines and the tests check times and counts. (On
Trio alone, test_mock_clock.py checks the same on Trio's MockClock.)"""

from __future__ import annotations

from typing import Any

import pytest

from actors import Actor, ActorSystem
from actors.testing import ManualClock, TestProbe

pytestmark = pytest.mark.anyio


class Clocked(Actor):
    """Tells the probe ``(clock time, message)`` for every message."""

    def __init__(self, probe: TestProbe[Any], clock: ManualClock) -> None:
        self.probe = probe
        self.clock = clock

    def receive(self, message: Any) -> None:
        self.probe.ref.tell((self.clock.now(), message))


@pytest.fixture
async def clocked(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> Any:
    """The timers of a Clocked actor reporting to ``probe``."""
    ref = actor_system.spawn(Clocked, probe, manual_time)
    return ref._cell.context.timers


async def test_a_single_timer_fires_once_at_its_delay(
    clocked: Any, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    clocked.start_single("k", "once", 2.5)
    await manual_time.advance(100)
    assert await probe.expect_message() == (2.5, "once")
    await probe.expect_no_message(0)


async def test_a_periodic_timer_fires_at_a_fixed_rate(
    clocked: Any, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    clocked.start_periodic("k", "tick", 1.0, initial_delay=0.5)
    await manual_time.advance(5)
    clocked.cancel("k")
    await manual_time.advance(100)
    assert await probe.receive_messages(5) == [(0.5 + n, "tick") for n in range(5)]
    await probe.expect_no_message(0)


async def test_an_earlier_timer_is_not_held_up_by_a_later_one(
    clocked: Any, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    clocked.start_single("late", "late", 100)
    await manual_time.advance(1)  # the timer task now sleeps until 100
    clocked.start_single("soon", "soon", 1)
    await manual_time.advance(200)
    assert await probe.receive_messages(2) == [(2, "soon"), (100, "late")]


async def test_replacing_a_key_restarts_its_delay(
    clocked: Any, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    clocked.start_single("k", "first", 10)
    await manual_time.advance(5)
    clocked.start_single("k", "second", 10)
    await manual_time.advance(100)
    assert await probe.expect_message() == (15, "second")
    await probe.expect_no_message(0)


@pytest.mark.no_dead_letters
async def test_a_stopped_actor_s_timers_never_fire(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    ref = actor_system.spawn(Clocked, probe, manual_time)
    ref._cell.context.timers.start_periodic("k", "tick", 1.0)
    await manual_time.advance(2)
    ref.stop()
    await ref.join()
    await manual_time.advance(10)
    assert await probe.receive_messages(2) == [(1, "tick"), (2, "tick")]
    await probe.expect_no_message(0)
    assert manual_time.pending == 0
