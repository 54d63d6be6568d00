"""Non-blocking asks and background work from an actor (``context.ask``,
``context.run``): the outcome comes back as a message, the actor keeps
handling messages meanwhile, the work ends with the incarnation that started
it, and an outcome nobody can take is a dead letter."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorStopped,
    ActorSystem,
    AskTimeout,
    Request,
    Result,
)

from ._support import Hold, Recorder, hold, wait_all_blocked

pytestmark = pytest.mark.anyio


@dataclass
class Got:
    result: Result[Any]


@dataclass
class AskIt:
    target: ActorRef[Any]
    message: Any
    timeout: float = 5.0


class Asker(Actor):
    """Asks what it is told to ask (``AskIt``), journals everything else."""

    def __init__(self, log: list[Any], done: anyio.Event | None = None) -> None:
        self.log = log
        self.done = done

    def receive(self, message: Any) -> Any:
        if isinstance(message, AskIt):
            self.context.ask(message.target, message.message, message.timeout, then=Got)
            return None
        self.log.append(message)
        if isinstance(message, Got) and self.done is not None:
            self.done.set()
        return None


class Failing(Actor):
    def receive(self, message: Any) -> Any:
        raise KeyError(message)


async def test_context_ask_replies_while_the_actor_handles_other_messages() -> (
    None
):
    log: list[Any] = []
    target_log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Recorder, target_log)
        release = await hold(target)
        asker = system.spawn(Asker, log, done)
        asker.tell(AskIt(target, "question"))
        asker.tell("meanwhile")
        assert await asker.ask("sync point") is None  # handled while waiting
        assert log == ["meanwhile", "sync point"]
        release.set()
        await done.wait()
    assert log == ["meanwhile", "sync point", Got(Result("question"))]


async def test_the_handlers_exception_comes_back_as_the_results_error() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Failing)
        asker = system.spawn(Asker, log, done)
        asker.tell(AskIt(target, "x"))
        await done.wait()
    (got,) = log
    assert not got.result.ok
    assert isinstance(got.result.error, KeyError)
    with pytest.raises(KeyError):
        _ = got.result.value


async def test_an_ask_timeout_comes_back_as_a_failed_result() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Recorder, [])
        release = await hold(target)
        asker = system.spawn(Asker, log, done)
        asker.tell(AskIt(target, "late", timeout=0.01))
        await done.wait()
        release.set()
        # The target handles the late ask (and replies to nobody) before the
        # system stops it.
        await wait_all_blocked()
    (got,) = log
    assert isinstance(got.result.error, AskTimeout)
    # The reply the target made after the timeout is counted, not lost.
    assert [d.reason for d in system.dead_letters.recent] == ["ask abandoned"]


async def test_an_ask_of_a_stopped_actor_comes_back_as_actor_stopped() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Recorder, [])
        target.stop()
        await target.join()
        asker = system.spawn(Asker, log, done)
        asker.tell(AskIt(target, "x"))
        await done.wait()
    assert isinstance(log[0].result.error, ActorStopped)


class Plain(Actor):
    """Asks without ``then``: receive gets the Result itself."""

    def __init__(
        self, target: ActorRef[Any], out: list[Any], done: anyio.Event
    ) -> None:
        self.target = target
        self.out = out
        self.done = done

    def on_start(self) -> None:
        self.context.ask(self.target, 41)

    def receive(self, message: Any) -> Any:
        self.out.append(message)
        self.done.set()


async def test_without_then_receive_gets_the_result_itself() -> None:
    out: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Recorder, [])
        system.spawn(Plain, target, out, done)
        await done.wait()
    assert out == [Result(41)]
    assert out[0].ok and out[0].value == 41


class SelfAsker(Actor):
    def __init__(self, out: list[Any], done: anyio.Event) -> None:
        self.out = out
        self.done = done

    def receive(self, message: Any) -> Any:
        if message == "start":
            self.context.ask(
                self.context.self_ref, "ping", then=lambda r: ("pong", r.value)
            )
            return None
        if message == "ping":
            return "ping answered"
        self.out.append(message)
        self.done.set()
        return None


async def test_an_actor_can_ask_itself_through_its_context() -> None:
    out: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(SelfAsker, out, done).tell("start")
        await done.wait()
    assert out == [("pong", "ping answered")]


async def test_context_ask_reaches_a_pool() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Recorder, 2, [])
        asker = system.spawn(Asker, log, done)
        asker.tell(AskIt(pool, "to the pool"))
        await done.wait()
    assert log == [Got(Result("to the pool"))]


@dataclass
class Double(Request[int]):
    n: int


class Doubler(Actor):
    def receive(self, message: Double) -> int:
        return message.n * 2


async def test_a_request_subclass_reply_comes_back() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        asker = system.spawn(Asker, log, done)
        asker.tell(AskIt(system.spawn(Doubler), Double(21)))
        await done.wait()
    assert log[0].result.value == 42


class Runner(Actor):
    """Runs the work it is told (a callable or an awaitable) in the
    background; journals the results. A ``Hold`` parks it; ``"boom"`` fails
    it."""

    def __init__(self, log: list[Any], done: anyio.Event | None = None) -> None:
        self.log = log
        self.done = done

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            self.log.append("hold")
            message.entered.set()
            await message.release.wait()
            return None
        if message == "boom":
            raise RuntimeError("boom")
        if isinstance(message, tuple) and message[0] == "run":
            self.context.run(message[1], then=lambda r: ("result", r))
            return None
        self.log.append(message)
        if self.done is not None and isinstance(message, tuple):
            self.done.set()
        return None


async def test_context_run_pipes_an_async_functions_value() -> None:
    log: list[Any] = []
    done = anyio.Event()

    async def work() -> str:
        await anyio.lowlevel.checkpoint()
        return "computed"

    async with ActorSystem() as system:
        system.spawn(Runner, log, done).tell(("run", work))
        await done.wait()
    assert log == [("result", Result("computed"))]


async def test_context_run_pipes_a_coroutine_objects_exception() -> None:
    log: list[Any] = []
    done = anyio.Event()

    async def work() -> str:
        raise ValueError("nope")

    async with ActorSystem() as system:
        system.spawn(Runner, log, done).tell(("run", work()))
        await done.wait()
    ((_, result),) = log
    assert isinstance(result.error, ValueError)


async def test_a_result_is_delivered_even_when_the_mailbox_is_full() -> None:
    log: list[Any] = []
    done = anyio.Event()
    gate = anyio.Event()

    async def work() -> str:
        await gate.wait()
        return "done"

    async with ActorSystem() as system:
        runner = system.spawn(Runner, log, done, capacity=1)
        runner.tell(("run", work))
        await wait_all_blocked()
        release = await hold(runner)
        runner.tell("fills the mailbox")
        assert runner.statistics().queued_messages == 1
        gate.set()  # the result comes while the mailbox is full
        await wait_all_blocked()
        assert runner.statistics().queued_signals == 1
        release.set()
        await done.wait()
    assert log == ["hold", "fills the mailbox", ("result", Result("done"))]


class Background(Actor):
    """Starts a job that never ends on its own; journals its cancellation and
    its own stop."""

    def __init__(self, log: list[Any], started: anyio.Event) -> None:
        self.log = log
        self.started = started

    def on_start(self) -> None:
        self.context.run(self.forever)

    async def forever(self) -> None:
        self.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.log.append("work ended")

    def on_stop(self) -> None:
        self.log.append("on_stop")

    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise RuntimeError("boom")
        self.log.append(message)


async def test_background_work_ends_before_on_stop_when_the_actor_stops() -> None:
    log: list[Any] = []
    started = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Background, log, started)
        await started.wait()
        ref.stop()
        await ref.join()
        assert log == ["work ended", "on_stop"]
    assert system.dead_letters.count == 0


async def test_background_work_ends_with_its_incarnation_on_restart() -> None:
    log: list[Any] = []
    started = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Background, log, started)
        await started.wait()
        started = anyio.Event()
        ref.tell("boom")
        assert await ref.ask("after") is None
        assert log[:3] == ["work ended", "on_stop", "after"]


async def test_an_outcome_queued_when_the_actor_stops_is_a_dead_letter() -> None:
    log: list[Any] = []
    gate = anyio.Event()

    async def work() -> str:
        await gate.wait()
        return "too late"

    async with ActorSystem() as system:
        runner = system.spawn(Runner, log)
        runner.tell(("run", work))
        release = await hold(runner)
        gate.set()
        await wait_all_blocked()  # the outcome is queued behind the hold
        runner.stop()
        release.set()
        await runner.join()
    assert log == ["hold"]
    (letter,) = system.dead_letters.recent
    assert letter.message == Result("too late")
    assert letter.reason == "actor stopped"


async def test_an_outcome_for_a_replaced_incarnation_is_a_dead_letter() -> None:
    log: list[Any] = []
    gate = anyio.Event()

    async def work() -> str:
        await gate.wait()
        return "stale"

    async with ActorSystem() as system:
        runner = system.spawn(Runner, log)
        runner.tell(("run", work))
        release = await hold(runner)
        runner.tell("boom")  # fails before the outcome reaches it
        gate.set()
        await wait_all_blocked()
        release.set()
        assert await runner.ask("after") is None
    assert log == ["hold", "after"]
    letters = [(d.message, d.reason) for d in system.dead_letters.recent]
    assert (Result("stale"), "incarnation ended") in letters


async def test_a_failing_then_is_a_failure_of_the_actor() -> None:
    async def work() -> int:
        return 1

    class Bad(Actor):
        def receive(self, message: Any) -> Any:
            if message == "go":
                self.context.run(work, then=lambda r: 1 / 0)
            return message

    async with ActorSystem() as system:
        ref = system.spawn(Bad)
        ref.tell("go")
        await wait_all_blocked()
        assert system.failures == 1
        assert await ref.ask("still here") == "still here"  # restarted
        assert system.restarts == 1


async def test_run_and_ask_refuse_bad_arguments() -> None:
    errors: list[BaseException] = []

    class Checker(Actor):
        def receive(self, message: Any) -> Any:
            ctx = self.context
            calls: list[Callable[[], None]] = [
                lambda: ctx.run(42),  # type: ignore[arg-type]
                lambda: ctx.run(anyio.lowlevel.checkpoint, then=3),  # type: ignore[arg-type]
                lambda: ctx.ask("not a ref", 1),  # type: ignore[arg-type]
                lambda: ctx.ask(ctx.self_ref, 1, timeout=0),
                lambda: ctx.ask(ctx.self_ref, 1, timeout="1"),  # type: ignore[arg-type]
            ]
            for call in calls:
                try:
                    call()
                except (TypeError, ValueError) as exc:
                    errors.append(exc)
            return len(errors)

    async with ActorSystem() as system:
        assert await system.spawn(Checker).ask("check") == 5
    kinds = [type(e) for e in errors]
    assert kinds == [TypeError, TypeError, TypeError, ValueError, TypeError]
    assert "then" in str(errors[1])


async def test_run_from_a_stopping_actor_raises_and_closes_the_coroutine() -> (
    None
):
    seen: list[BaseException] = []

    async def work() -> None:
        raise AssertionError("never runs")

    class Late(Actor):
        def on_stop(self) -> None:
            coro = work()
            try:
                self.context.run(coro)
            except ActorStopped as exc:
                seen.append(exc)
            # Closed: never left un-awaited.
            assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED

    async with ActorSystem() as system:
        ref = system.spawn(Late)
        await wait_all_blocked()
        ref.stop()
        await ref.join()
    assert len(seen) == 1
