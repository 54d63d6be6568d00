"""ask: the reply, or a clear error (AskTimeout, ActorStopped, the handler's own
exception); no ask ever hangs on a stopped actor; asking oneself fails at once."""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass
from typing import Any, assert_type

import anyio
import anyio.lowlevel
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    AskSelfError,
    AskTimeout,
    Directive,
    OneForOne,
    Request,
)

from ._support import Recorder, hold, wait_all_blocked

pytestmark = pytest.mark.anyio


@dataclass
class Double(Request[int]):
    n: int


class Doubler(Actor):
    def receive(self, message: Any) -> Any:
        match message:
            case Double(n):
                return 2 * n
        return None


async def test_ask_returns_the_handlers_return_value() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Doubler)
        reply = await ref.ask(Double(21))
        assert_type(reply, int)  # Request[int] types the reply (checked by mypy)
        assert reply == 42
        assert await ref.ask("anything else") is None  # None is a reply too


async def test_ask_without_a_reply_in_time_raises_ask_timeout() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)
        release = await hold(ref)
        with pytest.raises(AskTimeout) as info:
            await ref.ask("late", timeout=0.01)
        assert isinstance(info.value, TimeoutError)
        assert ref.path in str(info.value)
        release.set()
        # The actor still handles it later; the reply nobody awaits is counted.
        assert await ref.ask("barrier") == "barrier"
        assert log == ["hold", "late", "barrier"]
        assert [tuple(d) for d in system.dead_letters.recent] == [
            (ref, "late", "ask abandoned")
        ]


async def test_the_ask_timeout_covers_waiting_for_mailbox_room() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [], capacity=1)
        release = await hold(ref)
        ref.tell("fills the mailbox")
        with pytest.raises(AskTimeout):
            await ref.ask("never gets in", timeout=0.01)
        release.set()
        assert await ref.ask("barrier") == "barrier"


@pytest.mark.parametrize("timeout", [0, -1.0, math.nan])
async def test_ask_with_a_timeout_not_above_zero_raises_value_error(
    timeout: float,
) -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        with pytest.raises(ValueError, match="timeout"):
            await ref.ask("x", timeout=timeout)


async def test_ask_with_a_timeout_that_is_not_a_number_raises_type_error() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        with pytest.raises(TypeError, match="timeout"):
            await ref.ask("x", timeout="1")  # type: ignore[call-overload]


def explode(message: object) -> None:
    raise ValueError(f"cannot handle {message!r}")


class Faulty(Actor):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            explode(message)
        return message


class AsyncFaulty(Actor):
    async def receive(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        if message == "boom":
            explode(message)
        return message


@pytest.mark.parametrize("kind", [Faulty, AsyncFaulty])
async def test_ask_raises_the_handlers_exception_with_its_actor_side_traceback(
    kind: type[Actor],
) -> None:
    async with ActorSystem() as system:
        ref = system.spawn(kind)
        with pytest.raises(ValueError, match="cannot handle 'boom'") as info:
            await ref.ask("boom")
        # Whether re-raised or chained, the actor's frames show in the report.
        report = "".join(traceback.format_exception(info.value))
        assert "in explode" in report and "in receive" in report
        assert "in test_ask_raises_the_handlers_exception_with_its" in report
        assert [tuple(d) for d in system.dead_letters.recent] == [
            (ref, "boom", "handler failed")
        ]
        # The failure was supervised (restarted by default): the actor answers.
        assert await ref.ask("ok") == "ok"
        assert system.failures == 1 and system.restarts == 1


class AsksOthers(Actor):
    async def receive(self, message: Any) -> Any:
        target, question = message
        return await target.ask(question, timeout=60)


async def test_an_actor_can_ask_another_from_its_handler() -> None:
    async with ActorSystem() as system:
        doubler = system.spawn(Doubler)
        asker = system.spawn(AsksOthers)
        assert await asker.ask((doubler, Double(4))) == 8


async def test_ask_to_a_stopped_actor_raises_actor_stopped() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        ref.stop()
        with pytest.raises(ActorStopped):
            await ref.ask("x")
        await ref.join()
        with pytest.raises(ActorStopped, match=ref.path):
            await ref.ask("x")


async def test_every_ask_queued_when_the_actor_stops_raises_actor_stopped() -> None:
    log: list[Any] = []
    outcomes: dict[int, object] = {}
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)
        release = await hold(ref)

        async def ask(n: int) -> None:
            try:
                outcomes[n] = await ref.ask(n, timeout=60)
            except ActorStopped as exc:
                outcomes[n] = exc

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(ask, n)
            await wait_all_blocked()  # all five are queued behind the hold
            ref.stop()
            release.set()
        assert sorted(outcomes) == list(range(5))
        assert all(type(o) is ActorStopped for o in outcomes.values())
        assert log == ["hold"]
        assert system.dead_letters.count == 5
        assert {d.message for d in system.dead_letters.recent} == set(range(5))
        assert {d.reason for d in system.dead_letters.recent} == {"actor stopped"}


async def test_asks_waiting_for_mailbox_room_raise_actor_stopped_at_once() -> None:
    outcomes: list[object] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [], capacity=1)
        release = await hold(ref)
        ref.tell("fills the mailbox")

        async def ask() -> None:
            try:
                outcomes.append(await ref.ask("waits", timeout=60))
            except ActorStopped as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(ask)
            await wait_all_blocked()
            ref.stop()  # while the actor is still inside its handler
        assert [type(o) for o in outcomes] == [ActorStopped] * 3
        release.set()
        await ref.join()


class StopsItself(Actor):
    def receive(self, message: Any) -> Any:
        self.context.stop()
        return f"{message} handled"


async def test_an_ask_whose_handler_stops_the_actor_still_gets_its_reply() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(StopsItself)
        assert await ref.ask("last") == "last handled"
        await ref.join()


async def test_an_ask_in_flight_when_its_actor_is_cancelled_raises_stopped() -> None:
    # The system exits with an error while the actor is stuck in the handler:
    # after shutdown_timeout its task is cancelled mid-message. The ask, made
    # from a task outside the system, must fail, not hang.
    outcome: list[object] = []
    asked = anyio.Event()
    refs: list[Any] = []
    system_ready = anyio.Event()

    async def asker() -> None:
        await system_ready.wait()
        try:
            outcome.append(await refs[0].ask("stuck", timeout=60))
        except ActorStopped as exc:
            outcome.append(exc)

    class Stuck(Actor):
        async def receive(self, message: Any) -> Any:
            asked.set()
            await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        tg.start_soon(asker)
        with pytest.raises(RuntimeError, match="body failed"):
            async with ActorSystem(shutdown_timeout=0.01) as system:
                refs.append(system.spawn(Stuck))
                system_ready.set()
                await asked.wait()
                raise RuntimeError("body failed")
    assert [type(o) for o in outcome] == [ActorStopped]
    assert [tuple(d) for d in system.dead_letters.recent] == [
        (refs[0], "stuck", "actor stopped")
    ]


async def test_asks_queued_behind_a_failure_that_stops_the_actor_fail() -> None:
    class FaultyRecorder(Recorder):
        async def receive(self, message: Any) -> Any:
            if message == "boom":
                explode(message)
            return await super().receive(message)

    outcomes: dict[str, object] = {}
    strategy = OneForOne(decider={ValueError: Directive.STOP})
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(FaultyRecorder, [])
        release = await hold(ref)

        async def ask(message: str) -> None:
            try:
                outcomes[message] = await ref.ask(message, timeout=60)
            except Exception as exc:
                outcomes[message] = exc

        async with anyio.create_task_group() as tg:
            for message in ("first", "boom", "after", "later"):
                tg.start_soon(ask, message)
                await wait_all_blocked()  # queued in this order
            release.set()
        assert outcomes["first"] == "first"
        assert type(outcomes["boom"]) is ValueError
        assert type(outcomes["after"]) is ActorStopped
        assert type(outcomes["later"]) is ActorStopped
        assert isinstance(await ref.join(), ValueError)


class AsksItself(Actor):
    def __init__(self) -> None:
        self.handled = 0

    async def receive(self, message: Any) -> Any:
        self.handled += 1
        if message == "ask yourself":
            ask = self.context.self_ref.ask("ping", timeout=60)
            # It fails on its very first step: no waiting, no deadlock.
            try:
                ask.send(None)
            except AskSelfError as exc:
                return exc
            finally:
                ask.close()
            raise AssertionError("asking oneself did not fail at once")
        if message == "ask yourself, uncaught":
            await self.context.self_ref.ask("ping")
        return self.handled


async def test_asking_oneself_fails_at_once_and_the_actor_keeps_running() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(AsksItself)
        error = await ref.ask("ask yourself", timeout=60)
        assert isinstance(error, AskSelfError)
        assert ref.path in str(error)
        assert await ref.ask("count") == 2  # same instance, state kept
        assert ref.is_alive


async def test_an_uncaught_ask_self_error_is_a_supervised_failure() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(AsksItself)
        with pytest.raises(AskSelfError):
            await ref.ask("ask yourself, uncaught", timeout=60)
        assert await ref.ask("count") == 1  # restarted: a fresh instance
        assert ref.is_alive
