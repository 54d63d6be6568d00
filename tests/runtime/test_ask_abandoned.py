"""A reply nobody takes is a dead letter, counted exactly once, on every path of
an ask: queued at once (the deadline lists on asyncio), waiting for mailbox
room first, through a pool; whether the asker left before the reply (the actor
counts it) or after it was handed over (a native ``Task.cancel()`` on asyncio:
the asker counts it)."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem
from actors._deadlines import Deadlines
from actors._envelope import EXPIRED, Ask, abandon
from actors.channel.lowlevel import ASYNCIO_BACKEND

from ._support import on_asyncio, wait_all_blocked

pytestmark = pytest.mark.anyio


class CancelsTheAsker(Actor):
    """Replies to every message; before replying to "cancel me" it cancels
    the asker natively (``Task.cancel()``), which so lands after the reply
    was handed over and before the asker resumes (the asker sits at the yield
    it makes before parking: the reply is handed to it there)."""

    def __init__(self, asker: list[asyncio.Task[Any]]) -> None:
        self.asker = asker

    def receive(self, message: Any) -> Any:
        if message == "cancel me":
            self.asker[0].cancel()
        return message


class CancelsTheParkedAsker(CancelsTheAsker):
    """The same, once the asker has parked: it yields first, and schedules
    the cancellation so that it lands after the reply woke the asker and
    before the asker resumes."""

    async def receive(self, message: Any) -> Any:  # type: ignore[override]
        await anyio.lowlevel.checkpoint()  # the asker parks meanwhile
        if message == "cancel me":
            asyncio.get_running_loop().call_soon(self.asker[0].cancel)
        return message


class Parks(Actor):
    """Parks in its handler on "hold" until ``release`` is set."""

    def __init__(self, entered: anyio.Event, release: anyio.Event) -> None:
        self.entered = entered
        self.release = release

    async def receive(self, message: Any) -> Any:
        if message == "hold":
            self.entered.set()
            await self.release.wait()
        return message


def asyncio_only() -> None:
    if not on_asyncio():
        pytest.skip("native Task.cancel() is asyncio's: Trio never cancels woken tasks")


async def native_cancelled_ask(ask: Any, asker: list[asyncio.Task[Any]]) -> None:
    """Run ``ask()`` in a task the actor cancels natively; it must end
    cancelled."""
    task = asyncio.ensure_future(ask())
    asker.append(task)
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_reply_handed_to_a_natively_cancelled_asker_is_a_dead_letter() -> None:
    asyncio_only()
    asker: list[asyncio.Task[Any]] = []
    async with ActorSystem() as system:
        ref = system.spawn(CancelsTheAsker, asker)
        await native_cancelled_ask(lambda: ref.ask("cancel me"), asker)
        assert [tuple(d) for d in system.dead_letters.recent] == [
            (ref, "cancel me", "ask abandoned")
        ]
        assert await ref.ask("next") == "next"
        assert system.dead_letters.count == 1


async def test_a_reply_handed_to_a_parked_then_cancelled_asker_is_a_dead_letter() -> (
    None
):
    asyncio_only()
    asker: list[asyncio.Task[Any]] = []
    async with ActorSystem() as system:
        ref = system.spawn(CancelsTheParkedAsker, asker)
        await native_cancelled_ask(lambda: ref.ask("cancel me"), asker)
        assert [tuple(d) for d in system.dead_letters.recent] == [
            (ref, "cancel me", "ask abandoned")
        ]
        assert await ref.ask("next") == "next"
        assert system.dead_letters.count == 1


async def test_a_reply_handed_over_after_waiting_for_room_is_a_dead_letter() -> None:
    # The full-mailbox path: the ask waits for room (send), then for the reply,
    # under one cancel scope; the native cancel lands after the hand-over.
    asyncio_only()
    asker: list[asyncio.Task[Any]] = []
    entered, release = anyio.Event(), anyio.Event()

    class Both(CancelsTheAsker):
        async def receive(self, message: Any) -> Any:  # type: ignore[override]
            if message == "hold":
                entered.set()
                await release.wait()
            return super().receive(message)

    async with ActorSystem() as system:
        ref = system.spawn(Both, asker, capacity=1)
        ref.tell("hold")
        await entered.wait()
        ref.tell("fill")  # the quota is used up: the ask must wait for room
        task = asyncio.ensure_future(ref.ask("cancel me"))
        asker.append(task)
        await wait_all_blocked()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await ref.ask("next") == "next"
        assert [tuple(d) for d in system.dead_letters.recent] == [
            (ref, "cancel me", "ask abandoned")
        ]


async def test_a_reply_handed_to_a_natively_cancelled_pool_asker_is_a_dead_letter() -> (
    None
):
    asyncio_only()
    asker: list[asyncio.Task[Any]] = []
    async with ActorSystem() as system:
        for routing in ("round_robin", "shared_queue"):
            pool = system.spawn_pool(CancelsTheAsker, 2, asker, routing=routing)
            asker.clear()
            await native_cancelled_ask(partial(pool.ask, "cancel me"), asker)
            letter = system.dead_letters.recent[-1]
            assert (letter.recipient.path, letter.message, letter.reason) == (
                pool.path,
                "cancel me",
                "ask abandoned",
            )
        assert system.dead_letters.count == 2


async def test_a_reply_after_the_asker_timed_out_is_counted_once_by_the_actor() -> None:
    entered, release = anyio.Event(), anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Parks, entered, release)
        ref.tell("hold")
        await entered.wait()
        async with system.dead_letters.stream() as letters:
            with pytest.raises(TimeoutError):
                await ref.ask("late", timeout=0.01)
            release.set()
            with anyio.fail_after(5):
                letter = await letters.receive()
        assert tuple(letter) == (ref, "late", "ask abandoned")
        assert await ref.ask("next") == "next"
        assert system.dead_letters.count == 1


class _System:
    def __init__(self) -> None:
        self.letters: list[tuple[object, object, str]] = []

    def dead_letter(self, cell: object, message: object, reason: str) -> None:
        self.letters.append((cell, message, reason))


class _Cell:
    def __init__(self) -> None:
        self.runtime = _System()


async def test_a_reply_racing_an_expired_deadline_is_counted_by_the_actor_only() -> (
    None
):
    # The deadline resolved the asker's future (expired), then the reply came
    # before the asker resumed: the actor is told "nobody takes it" and counts
    # it; the asker, seeing the expiry, does not count it again.
    asyncio_only()
    cell: Any = _Cell()
    deadlines = Deadlines(asyncio.get_running_loop())
    ask = Ask("m", cell)
    task = asyncio.ensure_future(deadlines.wait(ask, 60.0))
    await wait_all_blocked()
    ask.handle.set_result(False)  # as the deadline timer does
    assert ask.reply("late", ASYNCIO_BACKEND) is False  # the actor counts it
    assert await task is EXPIRED
    assert cell.runtime.letters == []


async def test_abandoning_an_ask_counts_a_handed_over_reply_once() -> None:
    cell: Any = _Cell()
    ask = Ask("m", cell)
    assert ask.reply("r", None) is True  # taken by an asker that never parked
    abandon(ask)
    abandon(ask)
    assert cell.runtime.letters == [(cell, "m", "ask abandoned")]
    failed = Ask("f", cell)
    failed.fail(KeyError("x"), None)  # a failure is the failer's dead letter
    abandon(failed)
    assert len(cell.runtime.letters) == 1
