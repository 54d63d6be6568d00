"""on_restart(exc, message) gets the message whose handling failed (Akka's
preRestart(reason, message)); a one-argument override written before still
works, its signature read once per class."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, OneForAll

pytestmark = pytest.mark.anyio


class Remembers(Actor):

    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    def receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "boom":
            raise ValueError(message[1])
        return message

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        self.seen.append((type(exc).__name__, str(exc), message))


async def test_on_restart_gets_the_told_or_asked_message_that_failed() -> None:
    seen: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Remembers, seen)
        ref.tell(("boom", "told"))
        with pytest.raises(ValueError):
            await ref.ask(("boom", "asked"))
        assert await ref.ask("sync") == "sync"
    assert seen == [
        ("ValueError", "told", ("boom", "told")),
        ("ValueError", "asked", ("boom", "asked")),
    ]


class OldStyle(Actor):
    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return message

    def on_restart(self, exc: BaseException | None) -> None:  # type: ignore[override]
        self.seen.append(str(exc))


async def test_a_one_argument_on_restart_still_gets_the_exception() -> None:
    seen: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(OldStyle, seen)
        ref.tell("boom")
        assert await ref.ask("sync") == "sync"
    assert seen == ["boom"]
    # Read once, when the class was made, not at each restart.
    assert OldStyle._actors_restart_message is False
    assert Remembers._actors_restart_message is True


class Variadic(OldStyle):
    def on_restart(self, *args: Any) -> None:
        self.seen.append(args)


async def test_an_on_restart_taking_any_arguments_gets_both() -> None:
    seen: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Variadic, seen)
        ref.tell("boom")
        assert await ref.ask("sync") == "sync"
    [(exc, message)] = seen
    assert isinstance(exc, ValueError) and message == "boom"


class FailsToStart(Remembers):
    def on_start(self) -> None:
        starts = [s for s in self.seen if s == "start"]
        self.seen.append("start")
        if not starts:
            raise ValueError("first start")


async def test_a_failed_start_restarts_without_a_message() -> None:
    seen: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(FailsToStart, seen)
        assert await ref.ask("sync") == "sync"
    assert seen == ["start", ("ValueError", "first start", None)]


class Parent(Actor):
    supervisor_strategy = OneForAll()

    def __init__(self, seen: list[Any], ready: anyio.Event) -> None:
        self.failing = self.context.spawn(Remembers, seen, name="failing")
        self.sibling = self.context.spawn(Remembers, seen, name="sibling")
        ready.set()

    def receive(self, message: Any) -> Any:
        return self.failing if message == "failing" else self.sibling


async def test_a_sibling_restarted_by_one_for_all_gets_no_message() -> None:
    seen: list[Any] = []
    ready = anyio.Event()
    async with ActorSystem() as system:
        parent = system.spawn(Parent, seen, ready)
        failing = await parent.ask("failing")
        sibling = await parent.ask("sibling")
        failing.tell(("boom", "x"))
        await failing.ask("sync")
        await sibling.ask("sync")
    assert sorted(seen, key=repr) == sorted(
        [("ValueError", "x", ("boom", "x")), ("ValueError", "x", None)], key=repr
    )
