"""Ask deadlines on Trio: one task per system, not a cancel scope per ask.

The asks of a system that share a timeout value share one list and one armed
deadline (actors/_deadlines.py); one task sleeps until the earliest armed
deadline and expires what is due. Each test runs on Trio's ``MockClock`` with
autojump: virtual time moves only when every task is blocked, so deadlines are
exact and nothing sleeps in real time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from actors import Actor, ActorSystem, AskTimeout
from actors._deadlines import DEADLINE_TASK_NAME, IDLE_KEPT, TrioDeadlines
from actors._envelope import EXPIRED, Ask

trio = pytest.importorskip("trio")
from trio.testing import MockClock  # noqa: E402

ASKS = 200


class Mute(Actor):
    """Replies after three yields (the asker has parked by then: an ask finds
    a reply made during the two checkpoints it makes on Trio before parking,
    linking no deadline), except to "hold", which blocks until released."""

    def __init__(self, release: trio.Event) -> None:
        self.release = release

    async def receive(self, message: Any) -> Any:
        if message == "hold":
            await self.release.wait()
        for _ in range(3):
            await trio.lowlevel.checkpoint()
        return message


def run(body: Callable[[], Awaitable[None]]) -> None:
    trio.run(body, clock=MockClock(autojump_threshold=0))


def deadlines_of(system: ActorSystem) -> TrioDeadlines:
    deadlines = system._runtime.deadlines
    assert isinstance(deadlines, TrioDeadlines)
    return deadlines


def deadline_tasks() -> int:
    root = trio.lowlevel.current_root_task()
    assert root is not None
    found = 0
    todo = [root]
    while todo:
        task = todo.pop()
        found += task.name == DEADLINE_TASK_NAME
        for nursery in task.child_nurseries:
            todo.extend(nursery.child_tasks)
    return found


def test_sequential_trio_asks_with_one_timeout_share_one_list_and_one_task() -> None:
    async def main() -> None:
        async with ActorSystem() as system:
            deadlines = deadlines_of(system)
            ref = system.spawn(Mute, trio.Event())
            for i in range(ASKS):
                assert await ref.ask(i, timeout=5.0) == i
            assert list(deadlines.queues) == [5.0]
            assert deadlines.tasks_started == 1
            assert deadline_tasks() == 1

    run(main)


def test_a_trio_ask_expires_exactly_at_its_deadline() -> None:
    async def main() -> None:
        release = trio.Event()
        async with ActorSystem() as system:
            ref = system.spawn(Mute, release)
            ref.tell("hold")
            start = trio.current_time()
            with pytest.raises(AskTimeout):
                await ref.ask("late", timeout=3.0)
            assert trio.current_time() - start == pytest.approx(3.0, abs=1e-6)
            release.set()

    run(main)


def test_an_earlier_deadline_wakes_the_sleeping_deadline_task() -> None:
    async def main() -> None:
        release = trio.Event()
        expired: list[tuple[float, float]] = []
        async with ActorSystem() as system:
            ref = system.spawn(Mute, release)
            ref.tell("hold")
            start = trio.current_time()

            async def ask(timeout: float) -> None:
                with pytest.raises(AskTimeout):
                    await ref.ask("late", timeout=timeout)
                expired.append((timeout, trio.current_time() - start))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask, 10.0)
                await trio.testing.wait_all_tasks_blocked()
                nursery.start_soon(ask, 1.0)  # the task sleeps until 10 s
            release.set()
        assert [t for t, _ in expired] == [1.0, 10.0]
        assert [e for _, e in expired] == pytest.approx([1.0, 10.0], abs=1e-6)

    run(main)


def test_the_trio_deadline_task_ends_once_its_idle_lists_are_released() -> None:
    async def main() -> None:
        async with ActorSystem() as system:
            deadlines = deadlines_of(system)
            ref = system.spawn(Mute, trio.Event())
            assert await ref.ask("x", timeout=1.0) == "x"
            assert deadline_tasks() == 1
            await trio.sleep(2.0)  # virtual: the list's timer fires, idle
            assert deadlines.queues == {}
            assert deadline_tasks() == 0
            assert await ref.ask("y", timeout=1.0) == "y"  # a new task
            assert deadlines.tasks_started == 2

    run(main)


def test_trio_asks_with_distinct_timeouts_keep_a_few_idle_lists_at_most() -> None:
    async def main() -> None:
        async with ActorSystem() as system:
            deadlines = deadlines_of(system)
            ref = system.spawn(Mute, trio.Event())
            for i in range(ASKS):
                assert await ref.ask(i, timeout=10.0 + i / 1000) == i
                assert len(deadlines.queues) <= IDLE_KEPT
            assert deadlines.tasks_started == 1

    run(main)


def test_cancelled_trio_asks_leave_no_ask_linked() -> None:
    async def main() -> None:
        release = trio.Event()
        async with ActorSystem() as system:
            deadlines = deadlines_of(system)
            ref = system.spawn(Mute, release)
            ref.tell("hold")
            await trio.testing.wait_all_tasks_blocked()
            for i in range(ASKS):
                with trio.CancelScope() as scope:
                    scope.cancel()
                    await ref.ask(i, timeout=10.0 + i / 1000)
            assert len(deadlines.queues) <= IDLE_KEPT
            assert all(q.head is None for q in deadlines.queues.values())
            release.set()

    run(main)


def test_exiting_the_system_does_not_wait_for_the_deadline_task() -> None:
    async def main() -> None:
        start = trio.current_time()
        async with ActorSystem() as system:
            ref = system.spawn(Mute, trio.Event())
            assert await ref.ask("x", timeout=600.0) == "x"
            assert deadline_tasks() == 1
        # The task slept until 600 s: autojump would have moved the clock.
        assert trio.current_time() - start < 600.0
        assert deadline_tasks() == 0

    run(main)


class _System:
    def dead_letter(self, cell: object, message: object, reason: str) -> None:
        raise AssertionError("nothing was handed over")


class _Cell:
    system = _System()


def test_an_ask_after_the_system_exited_still_expires_on_time() -> None:
    # Its deadline task has ended: the ask waits under a scope of its own.
    async def main() -> None:
        async with ActorSystem() as system:
            pass
        deadlines = deadlines_of(system)
        start = trio.current_time()
        ask = Ask("m", _Cell())  # type: ignore[arg-type]
        assert await deadlines.wait(ask, 2.0) is EXPIRED
        assert trio.current_time() - start == pytest.approx(2.0, abs=1e-6)
        assert ask.abandoned

    run(main)
