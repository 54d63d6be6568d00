"""Timer guarantees where exact time matters, on Trio with a ``MockClock`` that
jumps ahead whenever every task is idle: firings land exactly on their
deadlines, so the tests can check times and counts, not just order."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from actors import Actor, ActorSystem

from ._support import service, timer_tasks

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> Any:
    """Trio only, with virtual time (a fresh clock per test)."""
    return ("trio", {"clock": MockClock(autojump_threshold=0)})


class Clocked(Actor):
    """Logs ``(virtual seconds since start, message)`` for every message."""

    def __init__(self, log: list[tuple[float, Any]], start: float) -> None:
        self.log = log
        self.start = start

    def receive(self, message: Any) -> None:
        self.log.append((anyio.current_time() - self.start, message))


async def test_a_single_timer_fires_once_at_its_delay() -> None:
    log: list[tuple[float, Any]] = []
    async with ActorSystem() as system:
        start = anyio.current_time()
        ref = system.spawn(Clocked, log, start)
        ref._cell.context.timers.start_single("k", "once", 2.5)
        await anyio.sleep(100)
    assert log == [(2.5, "once")]


async def test_a_periodic_timer_fires_at_a_fixed_rate() -> None:
    log: list[tuple[float, Any]] = []
    async with ActorSystem() as system:
        start = anyio.current_time()
        ref = system.spawn(Clocked, log, start)
        timers = ref._cell.context.timers
        timers.start_periodic("k", "tick", 1.0, initial_delay=0.5)
        await anyio.sleep(5)
        timers.cancel("k")
        await anyio.sleep(100)
    assert log == [(0.5 + n, "tick") for n in range(5)]


async def test_an_earlier_timer_is_not_held_up_by_a_later_one() -> None:
    log: list[tuple[float, Any]] = []
    async with ActorSystem() as system:
        start = anyio.current_time()
        ref = system.spawn(Clocked, log, start)
        timers = ref._cell.context.timers
        timers.start_single("late", "late", 100)
        await anyio.sleep(1)  # the timer task now sleeps until 100
        timers.start_single("soon", "soon", 1)
        await anyio.sleep(200)
    assert log == [(2, "soon"), (100, "late")]


async def test_replacing_a_key_restarts_its_delay() -> None:
    log: list[tuple[float, Any]] = []
    async with ActorSystem() as system:
        start = anyio.current_time()
        ref = system.spawn(Clocked, log, start)
        timers = ref._cell.context.timers
        timers.start_single("k", "first", 10)
        await anyio.sleep(5)
        timers.start_single("k", "second", 10)
        await anyio.sleep(100)
    assert log == [(15, "second")]


async def test_a_slow_actor_finds_one_queued_firing_per_key() -> None:
    # Interval 1 s, handler 10 s: every handler ends with exactly one firing
    # queued (the first due after it began), and the next starts at once.
    log: list[tuple[float, int]] = []

    class Slow(Actor):
        async def receive(self, message: Any) -> None:
            await anyio.sleep(10)
            queued = self.context._cell.mailbox.statistics().queued_signals
            log.append((anyio.current_time() - start, queued))

    async with ActorSystem() as system:
        start = anyio.current_time()
        ref = system.spawn(Slow)
        ref._cell.context.timers.start_periodic("tick", "tick", 1.0)
        await anyio.sleep(45)
        ref.stop()
    assert log == [(11, 1), (21, 1), (31, 1), (41, 1), (51, 1)]


async def test_many_timers_run_on_one_timer_task() -> None:
    actors = 200
    counts: dict[int, int] = {}

    class Many(Actor):
        def __init__(self, index: int) -> None:
            self.index = index

        def receive(self, message: Any) -> None:
            counts[self.index] = counts.get(self.index, 0) + 1

    async with ActorSystem() as system:
        refs = [system.spawn(Many, index) for index in range(actors)]
        for index, ref in enumerate(refs):
            ref._cell.context.timers.start_periodic(
                "tick", "tick", 1.0, initial_delay=(index + 1) / (2 * actors)
            )
        await anyio.sleep(10)  # firings from 0.0025 to 9.5: ten per actor
        assert timer_tasks() == 1
        for ref in refs:
            ref.stop()
    assert counts == dict.fromkeys(range(actors), 10)
    assert service(system).tasks_started == 1


async def test_restarting_a_key_again_and_again_keeps_the_heap_small() -> None:
    # Cancelled entries stay in the heap until they come up, unless they
    # outnumber the live ones: then the heap is compacted.
    log: list[tuple[float, Any]] = []
    async with ActorSystem() as system:
        start = anyio.current_time()
        ref = system.spawn(Clocked, log, start)
        timers = ref._cell.context.timers
        timers.start_periodic("steady", "steady", 1000)
        for n in range(10_000):
            timers.start_single("idle", n, 60)  # an idle timeout, re-armed
        heap = service(system)._heap
        assert len(heap) <= 2 * 64 + 2
        await anyio.sleep(61)
        timers.cancel("steady")
    assert log == [(60, 9_999)]
