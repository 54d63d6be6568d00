"""system.stop() (Akka's terminate): from an actor or from outside, every
actor stops, the async with block ends as a normal exit, and wait_exited()
returns once every actor has stopped."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, StopReason, SystemNotRunning

from ._support import Recorder, wait_all_blocked

pytestmark = pytest.mark.anyio


class Quitter(Actor):
    """Stops the whole system when told "quit"; journals its stop."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def on_stop(self) -> None:
        self.log.append("quitter stopped")

    def receive(self, message: Any) -> Any:
        if message == "quit":
            self.context.system.stop()  # returns at once
            self.log.append("stop returned")
        return None


async def test_stop_from_an_actor_ends_a_body_waiting_in_wait_exited() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        other = system.spawn(Recorder, log)
        system.spawn(Quitter, log).tell("quit")
        await system.wait_exited()
        log.append("body goes on")
        assert not other.is_alive
        assert await other.join() is StopReason.SYSTEM
    assert log == ["stop returned", "quitter stopped", "body goes on"]


async def test_stop_cancels_a_body_doing_something_else_and_exits_normally() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        system.spawn(Quitter, log).tell("quit")
        await anyio.sleep_forever()
    assert log == ["stop returned", "quitter stopped"]
    assert not system.running


async def test_stop_from_the_body_and_wait_exited_from_another_task() -> None:
    seen: list[str] = []
    async with anyio.create_task_group() as tg:
        system = ActorSystem()
        entered = anyio.Event()

        async def waiter() -> None:
            await entered.wait()
            await system.wait_exited()
            seen.append("exited")

        tg.start_soon(waiter)
        async with system:
            entered.set()
            ref = system.spawn(Recorder, [])
            await wait_all_blocked()
            system.stop()
            system.stop()  # twice: nothing more
            await ref.join()
            await system.wait_exited()
            seen.append("body")
    assert sorted(seen) == ["body", "exited"]


async def test_spawning_after_stop_raises_system_not_running() -> None:
    async with ActorSystem() as system:
        system.stop()
        with pytest.raises(SystemNotRunning, match="stopping"):
            system.spawn(Recorder, [])
        with pytest.raises(SystemNotRunning, match="stopping"):
            system.spawn_pool(Recorder, 2, [])
        await system.wait_exited()


async def test_after_the_exit_wait_exited_returns_and_stop_does_nothing() -> None:
    async with ActorSystem() as system:
        system.spawn(Recorder, [])
    await system.wait_exited()
    system.stop()
    with pytest.raises(SystemNotRunning):
        await ActorSystem().wait_exited()


async def test_an_actor_waiting_for_its_own_systems_exit_is_refused() -> None:
    class Waits(Actor):
        async def receive(self, message: Any) -> Any:
            try:
                await self.context.system.wait_exited()
            except RuntimeError as exc:
                return str(exc)
            return None

    async with ActorSystem() as system:
        answer = await system.spawn(Waits).ask("wait")
    assert "would wait forever" in answer
