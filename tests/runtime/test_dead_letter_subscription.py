"""Dead letters are exactly accountable without the system keeping them all:
subscribers (callbacks, or an async stream) see every one, in order; a failing
subscriber is logged and harms nothing; ``dead_letters_kept`` is checked at the
call."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    DeadLetter,
    DeadLetters,
    DeadLetterSubscription,
    UnhandledMessage,
)

pytestmark = pytest.mark.anyio


async def ask_unhandled(ref: ActorRef[Any], message: object) -> None:
    """Ask an actor that handles nothing: the asker learns it at once, and the
    message is an "unhandled" dead letter (a barrier for the tells before it)."""
    with pytest.raises(UnhandledMessage):
        await ref.ask(message)


class Ignores(Actor):
    """Handles nothing: every message is an "unhandled" dead letter (the
    default ``receive``)."""


async def test_a_subscriber_sees_every_dead_letter_in_order_beyond_those_kept() -> None:
    seen: list[DeadLetter] = []
    async with ActorSystem(dead_letters_kept=2) as system:
        ref = system.spawn(Ignores)
        subscription = system.dead_letters.subscribe(seen.append)
        assert isinstance(subscription, DeadLetterSubscription)
        assert subscription.active
        for i in range(10):
            ref.tell(i)
        await ask_unhandled(ref, "barrier")
    assert [letter.message for letter in seen] == [*range(10), "barrier"]
    assert {letter.reason for letter in seen} == {"unhandled"}
    assert all(letter.recipient == ref for letter in seen)
    assert system.dead_letters.count == 11
    assert list(system.dead_letters.recent) == seen[-2:]


async def test_an_unsubscribed_callback_sees_no_later_dead_letter() -> None:
    first: list[object] = []
    second: list[object] = []
    async with ActorSystem() as system:
        ref = system.spawn(Ignores)
        subscription = system.dead_letters.subscribe(
            lambda letter: first.append(letter.message)
        )
        with system.dead_letters.subscribe(
            lambda letter: second.append(letter.message)
        ):
            await ask_unhandled(ref, "both")
        await ask_unhandled(ref, "first only")
        subscription.unsubscribe()
        subscription.unsubscribe()  # idempotent
        assert not subscription.active
        await ask_unhandled(ref, "none")
    assert first == ["both", "first only"]
    assert second == ["both"]
    assert system.dead_letters.count == 3


async def test_the_same_callback_subscribed_twice_is_called_twice() -> None:
    seen: list[DeadLetter] = []
    async with ActorSystem() as system:
        ref = system.spawn(Ignores)
        system.dead_letters.subscribe(seen.append)
        system.dead_letters.subscribe(seen.append)
        await ask_unhandled(ref, "x")
    assert [letter.message for letter in seen] == ["x", "x"]


async def test_a_subscriber_that_raises_is_logged_and_breaks_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[object] = []

    def broken(letter: DeadLetter) -> None:
        raise RuntimeError("subscriber bug")

    async with ActorSystem() as system:
        ref = system.spawn(Ignores)
        system.dead_letters.subscribe(broken)
        system.dead_letters.subscribe(lambda letter: seen.append(letter.message))
        with caplog.at_level(logging.ERROR, logger="actors"):
            await ask_unhandled(ref, "a")
            await ask_unhandled(ref, "b")
        assert ref.is_alive
    assert seen == ["a", "b"]
    assert system.failures == 0
    records = [r for r in caplog.records if "subscriber" in r.getMessage()]
    assert len(records) == 2
    assert all(r.exc_info and isinstance(r.exc_info[1], RuntimeError) for r in records)


async def test_a_dead_letter_stream_yields_every_letter_then_ends_at_exit() -> None:
    received: list[object] = []

    async def read(stream: Any) -> None:
        async for letter in stream:
            received.append(letter.message)

    # The system exits first, then the task group waits for the reader: its
    # loop ends because the system's exit ended the stream.
    async with (
        anyio.create_task_group() as tg,
        ActorSystem(dead_letters_kept=0) as system,
    ):
        ref = system.spawn(Ignores)
        stream = system.dead_letters.stream()
        letters = await stream.__aenter__()
        tg.start_soon(read, letters)
        for i in range(5):
            ref.tell(i)
        await ask_unhandled(ref, "barrier")
    await stream.__aexit__(None, None, None)
    assert received == [*range(5), "barrier"]
    assert system.dead_letters.count == 6


async def test_a_dead_letter_stream_keeps_letters_until_they_are_received() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Ignores)
        async with system.dead_letters.stream() as letters:
            for i in range(3):
                ref.tell(i)
            await ask_unhandled(ref, "barrier")
            assert [letters.receive_nowait().message for _ in range(4)] == [
                0,
                1,
                2,
                "barrier",
            ]
        # Left: no more letters go to it.
        await ask_unhandled(ref, "after")
        assert letters.statistics().open_send_streams == 0


async def test_a_dead_letter_stream_opened_after_the_exit_ends_at_once() -> None:
    async with ActorSystem() as system:
        pass
    with anyio.fail_after(5):
        async with system.dead_letters.stream() as letters:
            assert [letter async for letter in letters] == []


async def test_a_dead_letter_stream_can_be_entered_only_once() -> None:
    async with ActorSystem() as system:
        stream = system.dead_letters.stream()
        async with stream:
            with pytest.raises(RuntimeError):
                await stream.__aenter__()


async def test_a_stream_whose_reader_closed_unsubscribes_itself() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Ignores)
        async with system.dead_letters.stream() as letters:
            letters.close()
            await ask_unhandled(ref, "x")  # nobody reads: the stream drops out quietly
            assert system.dead_letters._subscribers == ()
    assert system.dead_letters.count == 1


def test_subscribe_rejects_a_callback_that_is_not_callable() -> None:
    with pytest.raises(TypeError, match="callback"):
        DeadLetters(10).subscribe("print")  # type: ignore[arg-type]


@pytest.mark.parametrize("kept", ["100", 1.5, True, None])
def test_dead_letters_kept_must_be_an_integer(kept: Any) -> None:
    with pytest.raises(TypeError, match="dead_letters_kept"):
        ActorSystem(dead_letters_kept=kept)


def test_dead_letters_kept_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="dead_letters_kept"):
        ActorSystem(dead_letters_kept=-1)
    assert ActorSystem(dead_letters_kept=0).dead_letters.recent.maxlen == 0
