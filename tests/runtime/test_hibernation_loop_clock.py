"""Hibernation on the event loop's clock: a loop timer on asyncio, one tick
task per system on Trio (here on a ``MockClock``, virtual time), none while
no actor holds a task."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from actors import Actor, ActorSystem
from actors._hibernation import HIBERNATION_TASK_NAME, Hibernation
from actors.testing import wait_all_blocked

pytestmark = pytest.mark.anyio


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


def _tick_tasks() -> int:
    return sum(t.name == HIBERNATION_TASK_NAME for t in anyio.get_running_tasks())


@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
)
async def test_trio_runs_one_tick_task_while_an_actor_holds_a_task() -> None:
    async with ActorSystem(hibernate_after=1.0) as system:
        assert _tick_tasks() == 0
        refs = [system.spawn(Echo) for _ in range(10)]
        for ref in refs:
            ref.tell("x")
        await wait_all_blocked()
        assert _tick_tasks() == 1  # one for the ten
        start = anyio.current_time()
        await anyio.sleep(2.5)  # virtual: two ticks pass, at 1 and 2 s
        assert system._runtime.hibernation is not None
        assert system._runtime.hibernation.tasked == {}
        assert _tick_tasks() == 0
        assert anyio.current_time() - start == 2.5
        assert await refs[3].ask("again") == "again"  # resumed, same actor
        await wait_all_blocked()  # it parks again: the tick comes back
        assert _tick_tasks() == 1


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_asyncio_hibernates_on_a_loop_timer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emptied = anyio.Event()
    leave = Hibernation.leave

    def leave_and_tell(self: Hibernation, cell: Any) -> None:
        leave(self, cell)
        if not self.tasked:
            emptied.set()

    monkeypatch.setattr(Hibernation, "leave", leave_and_tell)
    async with ActorSystem(hibernate_after=0.01) as system:
        ref = system.spawn(Echo)
        assert await ref.ask(1) == 1
        with anyio.fail_after(10):
            await emptied.wait()  # it left: idle for two ticks
        hibernation = system._runtime.hibernation
        assert hibernation is not None
        assert hibernation.ticks >= 2
        assert hibernation._handle is None  # no timer left armed
        assert await ref.ask(2) == 2
