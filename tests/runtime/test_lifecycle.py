"""Lifecycle: the factory, on_start before the first message, on_stop after the
last one, for sync and async receive and hooks; join, is_alive."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorSystem, StopReason

from ._support import wait_all_blocked

pytestmark = pytest.mark.anyio


class SyncHooks(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def on_start(self) -> None:
        self.log.append("start")

    def on_stop(self) -> None:
        self.log.append("stop")


class AsyncHooks(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def on_start(self) -> None:
        await anyio.lowlevel.checkpoint()
        self.log.append("start")

    async def on_stop(self) -> None:
        await anyio.lowlevel.checkpoint()
        self.log.append("stop")


class SyncReceive(Actor):
    log: list[Any]

    def receive(self, message: Any) -> Any:
        self.log.append(message)
        return message


class AsyncReceive(Actor):
    log: list[Any]

    async def receive(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        self.log.append(message)
        return message


class SyncAll(SyncReceive, SyncHooks):
    pass


class AsyncAll(AsyncReceive, AsyncHooks):
    pass


class SyncReceiveAsyncHooks(SyncReceive, AsyncHooks):
    pass


class AsyncReceiveSyncHooks(AsyncReceive, SyncHooks):
    pass


KINDS = pytest.mark.parametrize(
    "kind", [SyncAll, AsyncAll, SyncReceiveAsyncHooks, AsyncReceiveSyncHooks]
)


@KINDS
async def test_on_start_runs_before_the_first_message_and_on_stop_after_the_last(
    kind: type[Actor],
) -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(kind, log)
        ref.tell("a")  # queued before the actor's task has even started
        ref.tell("b")
        assert await ref.ask("c") == "c"
        assert await ref.ask("d") == "d"
        ref.stop()
        assert await ref.join() is StopReason.NORMAL
        assert log == ["start", "a", "b", "c", "d", "stop"]


@KINDS
async def test_leaving_the_system_runs_on_stop_after_the_last_message(
    kind: type[Actor],
) -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(kind, log)
        assert await ref.ask("a") == "a"
    assert log == ["start", "a", "stop"]


async def test_the_factory_runs_in_spawn_and_on_start_in_the_actors_task() -> None:
    calls: list[str] = []

    def factory(log: list[Any], tag: str) -> SyncAll:
        calls.append(tag)
        return SyncAll(log)

    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(factory, log, "made")
        assert calls == ["made"]  # made before spawn returned
        assert log == []  # started later, in the actor's own task
        assert await ref.ask("x") == "x"
        assert log == ["start", "x"]


class GatedStart(Actor):
    def __init__(self, log: list[Any], gate: anyio.Event) -> None:
        self.log = log
        self.gate = gate

    async def on_start(self) -> None:
        self.log.append("start begins")
        await self.gate.wait()
        self.log.append("start ends")

    def receive(self, message: Any) -> Any:
        self.log.append(message)
        return message


async def test_messages_wait_until_an_async_on_start_has_finished() -> None:
    log: list[Any] = []
    gate = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(GatedStart, log, gate)
        ref.tell("a")
        await wait_all_blocked()
        assert log == ["start begins"]
        gate.set()
        assert await ref.ask("b") == "b"
        assert log == ["start begins", "start ends", "a", "b"]


class KnowsItself(Actor):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_start(self) -> None:
        context = self.context
        self.seen = [context.self_ref, context.name, context.path, context.system]

    def receive(self, message: Any) -> Any:
        return self.seen


async def test_the_context_is_ready_in_on_start() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(KnowsItself, name="me")
        assert await ref.ask("who") == [ref, "me", "/user/me", system]


class StopsBadly(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        return message

    def on_stop(self) -> None:
        self.log.append("on_stop")
        raise RuntimeError("on_stop broke")


async def test_a_failing_on_stop_is_logged_and_the_actor_still_stops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(StopsBadly, log, name="bad")
        assert await ref.ask(1) == 1
        ref.stop()
        assert await ref.join() is StopReason.NORMAL
        assert log == ["on_stop"]
        assert not ref.is_alive
    assert any(
        "on_stop failed" in r.getMessage() and r.levelno == logging.ERROR
        for r in caplog.records
    )


async def test_is_alive_until_stop_is_requested() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(SyncAll, log)
        assert ref.is_alive  # even before its task has started
        await ref.ask("x")
        assert ref.is_alive
        ref.stop()
        assert not ref.is_alive  # at once, before it has finished stopping
        await ref.join()
        assert not ref.is_alive


async def test_join_serves_many_waiters_and_returns_at_once_when_ended() -> None:
    results: list[object] = []
    async with ActorSystem() as system:
        ref = system.spawn(SyncAll, [])

        async def join() -> None:
            results.append(await ref.join())

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(join)
            await wait_all_blocked()
            assert results == []
            ref.stop()
        assert results == [StopReason.NORMAL] * 3
        assert await ref.join() is StopReason.NORMAL


async def test_join_of_a_stopped_child_says_its_parent_stopped_it() -> None:
    log: list[Any] = []

    class Parent(SyncAll):
        def receive(self, message: Any) -> Any:
            return self.context.spawn(SyncAll, log, name="child")

    async with ActorSystem() as system:
        parent = system.spawn(Parent, [], name="parent")
        child = await parent.ask("spawn")
        # The reply can come before the child's task first runs (an actor
        # stopped before it starts never runs on_start): let it start.
        await wait_all_blocked()
        parent.stop()
        assert await parent.join() is StopReason.NORMAL
        assert await child.join() is StopReason.PARENT
        assert log == ["start", "stop"]


async def test_join_after_the_system_exits_says_the_system_stopped_it() -> None:
    log: list[Any] = []

    class Parent(SyncAll):
        def on_start(self) -> None:
            self.child = self.context.spawn(SyncAll, log, name="child")

        def receive(self, message: Any) -> Any:
            return self.child

    async with ActorSystem() as system:
        parent = system.spawn(Parent, [], name="parent")
        child = await parent.ask("child")
    assert await parent.join() is StopReason.SYSTEM
    assert await child.join() is StopReason.SYSTEM


async def test_a_stop_during_on_start_lets_it_finish_then_runs_on_stop() -> None:
    log: list[Any] = []
    gate = anyio.Event()

    class Gated(GatedStart):
        def on_stop(self) -> None:
            self.log.append("stop")

    async with ActorSystem() as system:
        ref = system.spawn(Gated, log, gate)
        ref.tell("never handled")
        await wait_all_blocked()
        ref.stop()
        gate.set()
        assert await ref.join() is StopReason.NORMAL
        assert log == ["start begins", "start ends", "stop"]
        assert [d.message for d in system.dead_letters.recent] == ["never handled"]
