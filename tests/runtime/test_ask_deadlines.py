"""Ask timeouts: each ask expires at its own deadline, whatever its neighbours'.

On asyncio the asks of a system that share a timeout value share one loop timer
(actors/_deadlines.py); these tests pin the behaviour that must not change.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, AskTimeout

pytestmark = pytest.mark.anyio


class Mute(Actor):
    """Replies to "echo", never to "hold" (it blocks until released)."""

    def __init__(self, release: anyio.Event) -> None:
        self.release = release

    async def receive(self, message: Any) -> Any:
        if message == "hold":
            await self.release.wait()
        return message


async def test_asks_with_different_timeouts_expire_shortest_first() -> None:
    release = anyio.Event()
    expired: list[float] = []
    async with ActorSystem() as system:
        mute = system.spawn(Mute, release)
        blocked = system.spawn(Mute, release)
        blocked.tell("hold")  # everything asked of it waits

        async def ask(timeout: float) -> None:
            with pytest.raises(AskTimeout):
                await blocked.ask("echo", timeout=timeout)
            expired.append(timeout)

        async with anyio.create_task_group() as tg:
            for timeout in (0.3, 0.05, 0.15, 0.05):
                tg.start_soon(ask, timeout)
            # Asks that are answered meanwhile, with the same timeouts, leave
            # the others' deadlines alone.
            for timeout in (0.3, 0.05, 0.15):
                assert await mute.ask("echo", timeout=timeout) == "echo"
        release.set()
    assert expired == [0.05, 0.05, 0.15, 0.3]


async def test_many_answered_asks_leave_no_pending_deadline_behind() -> None:
    release = anyio.Event()
    async with ActorSystem() as system:
        echo = system.spawn(Mute, release)
        for i in range(2_000):
            assert await echo.ask(i, timeout=5.0 + (i % 3) * 0.01) == i
        deadlines = system._runtime.deadlines
        if deadlines is not None:  # asyncio: every answered ask was unlinked
            assert all(queue.head is None for queue in deadlines.queues.values())
        # An ask after the old deadlines passed still expires on time.
        blocked = system.spawn(Mute, release)
        blocked.tell("hold")
        with pytest.raises(AskTimeout):
            await blocked.ask("echo", timeout=0.05)
        release.set()
