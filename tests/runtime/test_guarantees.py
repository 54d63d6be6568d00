"""Regression tests of the runtime's promises: nothing lost, nothing wedged, one
bad actor never takes the system down by accident. Each is named after the
guarantee it protects."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    Directive,
    MailboxFull,
    OneForAll,
    OneForOne,
    StrayCancellation,
    SystemNotRunning,
)

from ._support import Recorder, hold

pytestmark = pytest.mark.anyio


# -- None is a message like any other ---------------------------------------


async def test_a_told_none_is_handled_and_an_asked_none_is_replied() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)
        ref.tell(None)
        await ref.send(None)
        assert await ref.ask(None) is None
    assert log == [None, None, None]
    assert system.dead_letters.count == 0


async def test_a_queued_none_becomes_a_dead_letter_when_its_actor_stops() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        release = await hold(ref)
        ref.tell(None)
        ref.stop()
        release.set()
        await ref.join()
    assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
        (None, "actor stopped")
    ]


class FailsOnNone(Actor):
    def receive(self, message: Any) -> Any:
        if message is None:
            raise ValueError("no None here")
        return message


async def test_a_none_whose_handler_fails_is_a_dead_letter() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(FailsOnNone)
        ref.tell(None)
        assert await ref.ask("after") == "after"  # restarted, still serving
    assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
        (None, "handler failed")
    ]


# -- an async receive behind an ordinary decorator ---------------------------


def logged(method: Callable[..., Any]) -> Callable[..., Any]:
    """A functools.wraps decorator as logging and retry decorators are: a sync
    wrapper that returns whatever the method returns (here a coroutine)."""

    @functools.wraps(method)
    def wrapper(self: Any, message: Any) -> Any:
        return method(self, message)

    return wrapper


class Decorated(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    @logged
    async def receive(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        self.log.append(message)
        return message * 2

    @logged
    async def on_terminated(self, message: Any) -> None:
        self.log.append("terminated")


async def test_an_async_receive_behind_a_sync_decorator_is_awaited() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Decorated, log)
        ref.tell(1)
        await ref.send(2)
        assert await ref.ask(3) == 6
    assert log == [1, 2, 3]
    assert system.dead_letters.count == 0


# -- a stray cancellation is a handler failure, not a teardown ---------------


async def stray_cancellation() -> BaseException:
    """A cancellation exception caught inside a cancel scope that is then left:
    raised later, it was not meant for the task that raises it (as one from
    awaiting a future another task cancelled)."""
    caught: BaseException | None = None
    with anyio.CancelScope() as scope:
        scope.cancel()
        try:
            await anyio.lowlevel.checkpoint()
        except anyio.get_cancelled_exc_class() as exc:
            caught = exc
    assert caught is not None
    return caught


class RaisesStray(Actor):
    def __init__(self, starts: list[int]) -> None:
        starts.append(1)

    async def receive(self, message: Any) -> Any:
        if message == "stray":
            raise await stray_cancellation()
        return message


async def test_a_stray_cancellation_in_a_handler_is_a_supervised_failure() -> None:
    starts: list[int] = []
    with anyio.fail_after(10):
        async with ActorSystem() as system:
            ref = system.spawn(RaisesStray, starts)
            with pytest.raises(StrayCancellation) as info:
                await ref.ask("stray")
            assert isinstance(info.value.__cause__, anyio.get_cancelled_exc_class())
            assert await ref.ask("still here") == "still here"
            assert ref.is_alive
    assert starts == [1, 1]  # restarted once, as after any failure
    assert system.failures == 1


async def test_a_stray_cancellation_in_a_hook_is_a_supervised_failure() -> None:
    class StartsStray(Actor):
        attempts = 0

        async def on_start(self) -> None:
            StartsStray.attempts += 1
            if StartsStray.attempts == 1:
                raise await stray_cancellation()

        def receive(self, message: Any) -> Any:
            return message

    with anyio.fail_after(10):
        async with ActorSystem() as system:
            ref = system.spawn(StartsStray)
            assert await ref.ask("up") == "up"
    assert StartsStray.attempts == 2


# -- supervision never waits forever -----------------------------------------


class Sibling(Actor):
    def __init__(self, name: str, others: dict[str, Any], log: list[str]) -> None:
        self.name = name
        self.others = others
        self.log = log

    def on_restart(self, exc: BaseException | None) -> None:
        self.log.append(f"restart {self.name}")
        if self.name == "a":
            # Stops the suspended sibling b in the same step as this start
            # completes: the supervisor then moves on to start b.
            self.others["b"].stop()

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise RuntimeError("boom")
        return message


class GroupParent(Actor):
    supervisor_strategy = OneForAll(max_restarts=100, within=60.0)

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.children: dict[str, Any] = {}

    def on_start(self) -> None:
        for name in ("a", "b"):
            self.children[name] = self.context.spawn(
                Sibling, name, self.children, self.log, name=name
            )

    def receive(self, message: Any) -> Any:
        return self.children[message]


async def test_a_sibling_stopped_while_suspended_never_wedges_its_supervisor() -> None:
    # Run it many times: on Trio the order of the runnable tasks is random, so
    # both orders of "b stops" and "the supervisor starts b" are reached.
    for _ in range(20):
        log: list[str] = []
        with anyio.fail_after(10):
            async with ActorSystem() as system:
                parent = system.spawn(GroupParent, log)
                a = await parent.ask("a")
                b = await parent.ask("b")
                a.tell("fail")
                assert await b.join() is not None
                assert await a.ask("ok") == "ok"  # the group restart finished
                assert await parent.ask("a") == a
        assert "restart a" in log


# -- leaving the system always ends -------------------------------------------


class StopsSlowly(Actor):
    def __init__(self, started: anyio.Event, stopping: anyio.Event) -> None:
        self.started = started
        self.stopping = stopping

    def on_start(self) -> None:
        self.started.set()

    async def on_stop(self) -> None:
        self.stopping.set()
        await anyio.sleep_forever()

    def receive(self, message: Any) -> Any:
        return message


async def test_shutdown_timeout_bounds_an_on_stop_that_never_returns() -> None:
    started, stopping = anyio.Event(), anyio.Event()
    with anyio.fail_after(10):
        async with ActorSystem(shutdown_timeout=0.05) as system:
            ref = system.spawn(StopsSlowly, started, stopping)
            ref.tell("queued?")
            await started.wait()
    assert stopping.is_set()
    assert not ref.is_alive


async def test_an_exit_by_exception_bounds_an_on_stop_that_never_returns() -> None:
    started, stopping = anyio.Event(), anyio.Event()
    with anyio.fail_after(10), pytest.raises(KeyError):
        async with ActorSystem(shutdown_timeout=0.05) as system:
            system.spawn(StopsSlowly, started, stopping)
            await started.wait()
            raise KeyError("body failed")
    assert stopping.is_set()


async def test_a_cancelled_block_cancels_the_actors_at_once() -> None:
    started, stopping = anyio.Event(), anyio.Event()
    with anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            async with ActorSystem() as system:
                ref = system.spawn(StopsSlowly, started, stopping)
                await started.wait()
                scope.cancel()
                await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert not stopping.is_set()  # cancelled at once: no graceful stop
    assert not ref.is_alive
    with pytest.raises(SystemNotRunning):
        ref.tell("late")


async def test_a_cancelled_block_cancels_an_idle_actor_at_once() -> None:
    # An idle actor holds no task: the stop the cancellation brings starts its
    # last run, which is cancelled as a running actor's (no graceful stop).
    started, stopping = anyio.Event(), anyio.Event()
    with anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            async with ActorSystem() as system:
                ref = system.spawn(StopsSlowly, started, stopping)
                await started.wait()
                await anyio.wait_all_tasks_blocked()  # idle: its run has ended
                scope.cancel()
                await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert not stopping.is_set()
    assert not ref.is_alive


async def test_a_native_asyncio_cancellation_cancels_the_actors_at_once() -> None:
    import sniffio

    if sniffio.current_async_library() != "asyncio":
        pytest.skip("native Task.cancel() is asyncio's")
    import asyncio

    started, stopping = anyio.Event(), anyio.Event()

    async def body() -> None:
        async with ActorSystem() as system:
            system.spawn(StopsSlowly, started, stopping)
            await started.wait()
            await anyio.sleep_forever()

    with anyio.fail_after(10):
        task = asyncio.ensure_future(body())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert not stopping.is_set()


async def test_a_cancellation_during_a_graceful_exit_cancels_the_hooks() -> None:
    started, stopping = anyio.Event(), anyio.Event()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def run() -> None:
                with scope:
                    async with ActorSystem() as system:
                        system.spawn(StopsSlowly, started, stopping)
                        await started.wait()
                # leaving: on_stop blocks, until the scope is cancelled

            tg.start_soon(run)
            await stopping.wait()
            scope.cancel()
    assert scope.cancelled_caught


async def test_an_actor_sending_to_its_own_full_mailbox_fails_fast() -> None:
    class SelfSender(Actor):
        async def receive(self, message: Any) -> Any:
            if message == "go":
                me = self.context.self_ref
                me.tell("fills it")
                try:
                    await me.send("one too many")
                except MailboxFull as exc:
                    return str(exc)
            return None

    with anyio.fail_after(10):
        async with ActorSystem() as system:
            ref = system.spawn(SelfSender, capacity=1)
            error = await ref.ask("go")
    assert "its own full mailbox" in error


async def test_a_failing_task_group_start_leaves_the_scope_stack_intact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = anyio.create_task_group

    def broken_task_group() -> Any:
        tg = real()

        def start_soon(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("start_soon failed")

        tg.start_soon = start_soon  # type: ignore[method-assign]
        return tg

    monkeypatch.setattr(anyio, "create_task_group", broken_task_group)
    system = ActorSystem()
    with pytest.raises(RuntimeError, match="start_soon failed"):
        await system.__aenter__()
    monkeypatch.undo()
    assert not system.running
    # The cancel scope stack is intact: scopes still work in this task.
    with anyio.move_on_after(0.01) as scope:
        await anyio.sleep_forever()
    assert scope.cancelled_caught
    async with ActorSystem() as other:
        assert await other.spawn(Recorder, []).ask(1) == 1


# -- a user's exception is user data -----------------------------------------


@dataclass(frozen=True)
class FrozenError(Exception):
    code: int


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")

    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


class Raises(Actor):
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def receive(self, message: Any) -> Any:
        if message == "raise":
            raise self.error
        return message


@pytest.mark.parametrize(
    "error", [FrozenError(7), UnprintableError()], ids=["frozen", "unprintable"]
)
async def test_an_odd_exception_is_delivered_to_the_asker_untouched(
    error: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem() as system:
        ref = system.spawn(Raises, error)
        for _ in range(3):
            with pytest.raises(type(error)) as info:
                await ref.ask("raise")
            assert info.value is error
        assert await ref.ask("fine") == "fine"
    assert system.failures == 3


async def test_a_reused_exception_gets_one_note_however_often_it_is_raised() -> None:
    error = ValueError("shared")
    resume = OneForOne(decider={ValueError: Directive.RESUME})
    async with ActorSystem(strategy=resume) as system:
        ref = system.spawn(Raises, error)
        for _ in range(20):
            with pytest.raises(ValueError):
                await ref.ask("raise")
    assert error.__notes__ == [f"raised by actor {ref.path} while handling an ask"]


# -- clear errors for bad input, at the call ----------------------------------


async def test_telling_a_signal_names_the_rule_not_a_missing_method() -> None:
    from actors import Terminated

    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        forged = Terminated(ref, None)
        for call in (lambda: ref.tell(forged),):
            with pytest.raises(TypeError, match="runtime signal") as info:
                call()
            assert "send_signal" not in str(info.value)
        with pytest.raises(TypeError, match="runtime signal"):
            await ref.send(forged)
        with pytest.raises(TypeError, match="runtime signal"):
            await ref.ask(forged)


async def test_unwatch_of_a_non_ref_raises_type_error() -> None:
    class Unwatcher(Actor):
        def receive(self, message: Any) -> Any:
            try:
                self.context.unwatch(message)
            except TypeError as exc:
                return str(exc)
            return None

    async with ActorSystem() as system:
        error = await system.spawn(Unwatcher).ask("x")
    assert error == "unwatch() takes an ActorRef, not str"


async def test_system_exit_in_a_handler_surfaces_and_is_not_a_runtime_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Exits(Actor):
        def receive(self, message: Any) -> Any:
            raise SystemExit(3)

    caplog.set_level(logging.INFO, logger="actors")
    with anyio.fail_after(10), pytest.raises(SystemExit) as info:
        async with ActorSystem() as system:
            ref = system.spawn(Exits)
            ref.tell("bye")
            await anyio.sleep_forever()
    assert info.value.code == 3
    assert not any("crashed in the runtime" in r.getMessage() for r in caplog.records)
    assert any("raised SystemExit" in r.getMessage() for r in caplog.records)


async def test_a_bad_telemetry_argument_raises_type_error() -> None:
    with pytest.raises(TypeError, match=r"^telemetry must be a Telemetry or None"):
        ActorSystem(telemetry="yes")  # type: ignore[arg-type]


def test_a_wrong_supervisor_strategy_class_attribute_is_refused_with_the_class() -> (
    None
):
    # When the class is defined (issue 22: it failed only at the first child
    # failure, failing the parent), naming the attribute and the type wanted.
    with pytest.raises(TypeError) as info:

        class Misconfigured(Actor):
            supervisor_strategy = "one_for_one"  # type: ignore[assignment]

    message = str(info.value)
    assert "Misconfigured: supervisor_strategy must be a " in message
    assert "SupervisorStrategy" in message and "'one_for_one'" in message


async def test_a_wrong_supervisor_strategy_set_in_init_is_refused_at_spawn() -> None:
    class Misconfigured(Actor):
        def __init__(self) -> None:
            self.supervisor_strategy = "one_for_all"  # type: ignore[assignment]

    async with ActorSystem() as system:
        with pytest.raises(TypeError, match="supervisor_strategy must be a"):
            system.spawn(Misconfigured)
        assert system.failures == 0


def test_a_supervisor_strategy_property_is_read_per_instance() -> None:
    # A descriptor is not a value yet: nothing to check with the class.
    class Computed(Actor):
        @property
        def supervisor_strategy(self) -> OneForOne:  # type: ignore[override]
            return OneForOne()

    assert isinstance(Computed.__dict__["supervisor_strategy"], property)


async def test_a_stopped_actor_still_refuses_a_send_with_actor_stopped() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        ref.stop()
        await ref.join()
        with pytest.raises(ActorStopped):
            await ref.send(1)
        ref.tell(2)  # a tell is a dead letter
        assert [d.message for d in system.dead_letters.recent] == [2]


async def test_an_actor_whose_task_never_ran_still_settles_its_mailbox() -> None:
    # Cancelled right after the spawn: on asyncio the actor's task is cancelled
    # before its first step and never runs its code. The exit settles it: the
    # tell is a dead letter and the actor is terminated.
    letters: list[Any] = []
    with anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            async with ActorSystem() as system:
                system.dead_letters.subscribe(letters.append)
                ref = system.spawn(Recorder, [])
                ref.tell("told")
                scope.cancel()
                await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert not ref.is_alive
    assert await ref.join() is not None
    assert [letter.message for letter in letters] == ["told"]
