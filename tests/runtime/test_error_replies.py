"""ErrorReply (Akka's StatusReply.error, Pykka's failed future): the asker's
ask raises the exception; the actor does not fail (no failure counted, no
traceback logged, no supervisor) and serves on; to a tell it is ignored."""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, ErrorReply

pytestmark = pytest.mark.anyio


class Accounts(Actor):
    def __init__(self) -> None:
        self.balance = 10

    def receive(self, message: Any) -> Any:
        kind, amount = message
        if kind == "withdraw":
            if amount > self.balance:
                return ErrorReply(ValueError(f"insufficient funds for {amount}"))
            self.balance -= amount
        return self.balance


class AsyncAccounts(Accounts):
    async def receive(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        return super().receive(message)


@pytest.mark.parametrize("actor", [Accounts, AsyncAccounts])
async def test_an_error_reply_makes_the_ask_raise_without_failing_the_actor(
    actor: type[Accounts], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem() as system:
        ref = system.spawn(actor)
        with pytest.raises(ValueError, match="insufficient funds for 50"):
            await ref.ask(("withdraw", 50))
        assert await ref.ask(("withdraw", 3)) == 7  # the same instance serves on
        assert (system.failures, system.restarts) == (0, 0)
        assert system.dead_letters.count == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in caplog.records if r.exc_info]


class Raises(Actor):
    def __init__(self, error: Exception) -> None:
        self.error = error

    def receive(self, message: Any) -> Any:
        return ErrorReply(self.error)


async def test_the_asker_raises_the_very_exception_object() -> None:
    error = KeyError("k")
    async with ActorSystem() as system:
        ref = system.spawn(Raises, error)
        with pytest.raises(KeyError) as info:
            await ref.ask("x")
        assert info.value is error


async def test_an_error_reply_to_a_told_message_is_ignored() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Raises, ValueError("nobody asked"))
        ref.tell("x")
        with pytest.raises(ValueError):
            await ref.ask("sync")  # it was handled; the actor is fine
        assert (system.failures, system.dead_letters.count) == (0, 0)


async def test_an_error_reply_reaches_an_ask_through_a_pool_and_from_a_thread() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Accounts, 2)
        with pytest.raises(ValueError, match="insufficient"):
            await pool.ask(("withdraw", 99))
        ref = system.spawn(Accounts)
        errors: list[BaseException] = []

        def in_thread() -> None:
            try:
                system.from_thread.ask(ref, ("withdraw", 99))
            except ValueError as exc:
                errors.append(exc)

        thread = threading.Thread(target=in_thread)
        await anyio.to_thread.run_sync(lambda: (thread.start(), thread.join()))
        assert len(errors) == 1
        assert system.failures == 0


async def test_an_error_reply_to_an_asker_that_left_is_a_dead_letter() -> None:
    release = anyio.Event()

    class Late(Actor):
        async def receive(self, message: Any) -> Any:
            await release.wait()
            return ErrorReply(ValueError("late"))

    async with ActorSystem() as system:
        ref = system.spawn(Late)
        with anyio.move_on_after(0.01):
            await ref.ask("x")
        release.set()
        with pytest.raises(ValueError, match="late"):
            await ref.ask("y")  # handled after "x", whose asker had left
    letters = [(d.message, d.reason) for d in system.dead_letters.recent]
    assert ("x", "ask abandoned") in letters


def test_error_reply_takes_an_exception_instance_only() -> None:
    with pytest.raises(TypeError, match="Exception instance, not type"):
        ErrorReply(ValueError)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not str"):
        ErrorReply("no")  # type: ignore[arg-type]
    error = ValueError("x")
    assert ErrorReply(error) == ErrorReply(error)
    assert repr(ErrorReply(error)) == "ErrorReply(ValueError('x'))"


class Shared(Actor):
    """Answers every ask with the same exception object, or with one it
    caught (``"caught"``): the origin of that one is its raise site."""

    ERROR = KeyError("missing")

    def receive(self, message: Any) -> Any:
        if message == "caught":
            try:
                _raise_it()
            except LookupError as exc:
                return ErrorReply(exc)
        return ErrorReply(self.ERROR)


def _raise_it() -> None:
    raise LookupError("raised in the handler")


def _frames(exc: BaseException) -> list[str]:
    names = []
    tb = exc.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return names


async def _ask_once(ref: Any, message: Any) -> list[str]:
    try:
        await ref.ask(message)
    except LookupError as exc:
        return _frames(exc)
    raise AssertionError("the ask did not raise")


async def test_a_shared_error_reply_exception_keeps_the_same_traceback_each_raise() -> (
    None
):
    # Issue 22: 4, 7, 10, 13, 16 frames over five asks, each ask's frames kept
    # alive by the exception.
    async with ActorSystem() as system:
        ref = system.spawn(Shared)
        # Each raise holds its own ask's frames only (the first ask may take
        # another path, parking for the reply).
        seen = [await _ask_once(ref, "shared") for _ in range(5)]
        assert all(frames.count("_ask_once") == 1 for frames in seen), seen
        assert seen[1:] == seen[2:] + seen[-1:]
        # From another thread and through a pool too: no growth either.
        pool = system.spawn_pool(Shared, 2)
        via_pool = [await _ask_once(pool, "shared") for _ in range(3)]
        assert all(frames.count("_ask_once") == 1 for frames in via_pool)

        def from_thread() -> list[str]:
            try:
                system.from_thread.ask(ref, "shared")
            except LookupError as exc:
                return _frames(exc)
            raise AssertionError("the ask did not raise")

        threaded = [await anyio.to_thread.run_sync(from_thread) for _ in range(3)]
        assert all(frames.count("from_thread") == 1 for frames in threaded)
        assert all(frames.count("outcome_or_raise") == 1 for frames in threaded)


async def test_an_error_reply_of_a_caught_exception_keeps_its_raise_site() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Shared)
        frames = await _ask_once(ref, "caught")
        assert frames[-1] == "_raise_it" and "receive" in frames
