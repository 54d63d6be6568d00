"""on_restart(exc, message) gets the message whose handling failed (Akka's
preRestart(reason, message)); a one-argument override written before still
works, its signature read once per class."""

from __future__ import annotations

from typing import Any, ClassVar

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


class StaticHook(OldStyle):
    log: ClassVar[list[Any]] = []

    @staticmethod
    def on_restart(exc: BaseException | None, message: Any = None) -> None:
        StaticHook.log.append((type(exc).__name__, message))


class ClassHook(OldStyle):
    log: ClassVar[list[Any]] = []

    @classmethod
    def on_restart(cls, exc: BaseException | None, message: Any = None) -> None:
        cls.log.append((type(exc).__name__, message))


class KeywordHook(OldStyle):
    log: ClassVar[list[Any]] = []

    def on_restart(  # type: ignore[override]
        self, exc: BaseException | None, *, message: Any = None
    ) -> None:
        KeywordHook.log.append((type(exc).__name__, message))


# The signature is read as the runtime calls the hook (on an instance): a
# static or class method, or a keyword-only ``message``, gets the message too
# (not silently None).
@pytest.mark.parametrize("actor", [StaticHook, ClassHook, KeywordHook])
async def test_on_restart_as_a_static_or_class_method_or_keyword_gets_the_message(
    actor: Any,
) -> None:
    actor.log.clear()
    async with ActorSystem() as system:
        ref = system.spawn(actor, [])
        ref.tell("boom")
        assert await ref.ask("sync") == "sync"
    assert actor.log == [("ValueError", "boom")]


class FailsOnPipedResult(Remembers):
    def __init__(self, seen: list[Any], restarted: anyio.Event) -> None:
        super().__init__(seen)
        self.restarted = restarted

    def receive(self, message: Any) -> Any:
        if message == "start":

            async def work() -> int:
                return 42

            self.context.run(work, then=lambda result: ("piped", result.value))
            return None
        if isinstance(message, tuple) and message[0] == "piped":
            raise ValueError("piped")
        return super().receive(message)

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        super().on_restart(exc, message)
        self.restarted.set()


# A failure handling a piped result (context.run, context.ask) passes the
# message the handler got, never the runtime's internal signal.
async def test_on_restart_gets_the_piped_message_that_failed() -> None:
    seen: list[Any] = []
    restarted = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(FailsOnPipedResult, seen, restarted)
        ref.tell("start")
        await restarted.wait()
    assert seen == [("ValueError", "piped", ("piped", 42))]
