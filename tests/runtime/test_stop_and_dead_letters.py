"""stop(): after the current message; what is still queued becomes dead letters,
counted, kept in ``recent`` as (recipient, message, reason) and logged."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from actors import Actor, ActorSystem, DeadLetter, StopReason, UnhandledMessage

from ._support import Recorder, hold

pytestmark = pytest.mark.anyio


async def test_stop_finishes_the_current_message_and_dead_letters_the_rest() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log, name="r")
        release = await hold(ref)
        for n in range(3):
            ref.tell(n)
        ref.stop()
        release.set()
        assert await ref.join() is StopReason.NORMAL
        assert log == ["hold"]
        assert system.dead_letters.count == 3
        assert list(system.dead_letters.recent) == [
            DeadLetter(ref, n, "actor stopped") for n in range(3)
        ]
        letter = system.dead_letters.recent[0]
        assert (letter.recipient, letter.message, letter.reason) == (
            ref,
            0,
            "actor stopped",
        )


async def test_a_stop_is_not_stuck_behind_a_backlog() -> None:
    log: list[Any] = []
    async with ActorSystem(drain=4) as system:
        ref = system.spawn(Recorder, log)
        release = await hold(ref)
        for n in range(100):
            ref.tell(n)
        ref.stop()
        release.set()
        await ref.join()
        assert log == ["hold"]  # not one of the 100 was handled
        assert system.dead_letters.count == 100


class StopsOnStop(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        self.log.append(message)
        if message == "stop":
            self.context.stop()
        return message


async def test_stopping_from_the_handler_takes_effect_after_that_message() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(StopsOnStop, log)
        for message in ("a", "stop", "b", "c"):
            ref.tell(message)
        assert await ref.join() is StopReason.NORMAL
        assert log == ["a", "stop"]
        assert [d.message for d in system.dead_letters.recent] == ["b", "c"]


async def test_stopping_twice_does_nothing_more() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        ref.tell("queued")
        ref.stop()
        ref.stop()
        await ref.join()
        ref.stop()
        assert await ref.join() is StopReason.NORMAL
        assert system.dead_letters.count == 1


async def test_messages_left_when_the_system_exits_are_dead_letters() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)
        for n in range(3):
            ref.tell(n)
    # It had not started: it never will, and nothing it was sent is lost silently.
    assert log == []
    assert [tuple(d) for d in system.dead_letters.recent] == [
        (ref, n, "actor stopped") for n in range(3)
    ]


async def test_an_unhandled_message_is_a_dead_letter() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Actor)  # the default receive handles nothing
        with pytest.raises(UnhandledMessage):  # no reply, at once
            await ref.ask("what?")
        ref.tell("and this?")
        with pytest.raises(UnhandledMessage):
            await ref.ask("barrier")
        assert [d.message for d in system.dead_letters.recent] == [
            "what?",
            "and this?",
            "barrier",
        ]
        assert {d.reason for d in system.dead_letters.recent} == {"unhandled"}


async def test_recent_dead_letters_keep_the_latest_but_count_them_all() -> None:
    async with ActorSystem(dead_letters_kept=2) as system:
        ref = system.spawn(Recorder, [])
        release = await hold(ref)
        for n in range(5):
            ref.tell(n)
        ref.stop()
        release.set()
        await ref.join()
        assert system.dead_letters.count == 5
        assert [d.message for d in system.dead_letters.recent] == [3, 4]


async def test_dead_letters_are_logged_at_debug_on_the_actors_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [], name="logged")
        release = await hold(ref)
        ref.tell("lost")
        ref.stop()
        release.set()
        await ref.join()
    records = [
        r
        for r in caplog.records
        if r.name == "actors" and "dead letter" in r.getMessage()
    ]
    assert len(records) == 1
    assert records[0].levelno == logging.DEBUG
    text = records[0].getMessage()
    assert "/user/logged" in text and "actor stopped" in text and "'lost'" in text
