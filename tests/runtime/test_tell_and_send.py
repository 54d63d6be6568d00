"""tell and send: what each does and raises (the README's table)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorStopped,
    ActorSystem,
    DeadLetter,
    MailboxFull,
    SystemNotRunning,
    Terminated,
)
from actors.mailbox import Signal

from ._support import Recorder, hold, wait_all_blocked

pytestmark = pytest.mark.anyio


def run_without_suspending(coro: Coroutine[Any, Any, Any]) -> Any:
    """Step a coroutine once; it must finish without ever yielding."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AssertionError("the coroutine suspended")


async def test_tell_enqueues_and_returns_without_waiting() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)
        ref.tell("a")
        assert log == []  # tell never yields: the actor has not run yet
        await ref.ask("barrier")
        assert log == ["a", "barrier"]


async def test_tell_to_a_full_mailbox_raises_mailbox_full() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log, capacity=2)
        release = await hold(ref)  # taken from the mailbox: its unit is free
        ref.tell(1)
        ref.tell(2)
        with pytest.raises(MailboxFull):
            ref.tell(3)
        release.set()
        assert await ref.ask("barrier") == "barrier"
        assert log == ["hold", 1, 2, "barrier"]


async def test_tell_to_a_stopped_actor_is_a_dead_letter() -> None:
    # As Erlang's ! and Akka's tell: the sender is not failed by a peer that
    # stopped first; nothing is lost silently either.
    async with ActorSystem() as system:
        letters: list[DeadLetter] = []
        system.dead_letters.subscribe(letters.append)
        ref = system.spawn(Recorder, [])
        ref.stop()
        ref.tell("at once")  # stopping already: refused as a dead letter
        await ref.join()
        ref.tell("after")
        assert [(d.recipient, d.message, d.reason) for d in letters] == [
            (ref, "at once", "actor stopped"),
            (ref, "after", "actor stopped"),
        ]
        assert system.dead_letters.count == 2
        # send and ask still raise: they wait, and their caller is told.
        with pytest.raises(ActorStopped) as info:
            await ref.send("sent")
        assert not isinstance(info.value, SystemNotRunning)
        assert ref.path in str(info.value)
        with pytest.raises(ActorStopped):
            await ref.ask("asked")


async def test_a_stopped_actor_overrides_full() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [], capacity=1)
        ref.tell(1)
        ref.stop()
        ref.tell(2)  # not MailboxFull: a dead letter
        await ref.join()
        # 2 at the call, then 1 as the queue is settled at the termination.
        assert [d.message for d in system.dead_letters.recent] == [2, 1]


class Notifies(Actor):
    """Tells its peer from its handler and from its on_stop."""

    def __init__(self, peer: ActorRef[Any]) -> None:
        self.peer = peer

    def receive(self, message: Any) -> Any:
        self.peer.tell(("handled", message))
        return message

    def on_stop(self) -> None:
        self.peer.tell("stopping")


async def test_telling_a_peer_that_stopped_first_fails_nobody() -> None:
    async with ActorSystem() as system:
        peer = system.spawn(Recorder, [])
        notifier = system.spawn(Notifies, peer)
        peer.stop()
        await peer.join()
        assert await notifier.ask("work") == "work"  # its handler did not fail
        notifier.stop()
        await notifier.join()
        assert system.failures == 0
        assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
            (("handled", "work"), "actor stopped"),
            ("stopping", "actor stopped"),
        ]


async def test_telling_or_sending_a_runtime_signal_raises_type_error() -> None:
    log: list[Any] = []

    class Custom(Signal):
        pass

    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)
        other = system.spawn(Recorder, [])
        for signal in (Terminated(other, None), Custom()):
            with pytest.raises(TypeError, match="signal"):
                ref.tell(signal)
            with pytest.raises(TypeError, match="signal"):
                await ref.send(signal)
            with pytest.raises(TypeError, match="signal"):
                await ref.ask(signal)
        assert await ref.ask("still fine") == "still fine"
        assert log == ["still fine"]
        assert system.dead_letters.count == 0


async def test_send_with_room_returns_without_yielding() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log, capacity=2)
        run_without_suspending(ref.send("a"))
        run_without_suspending(ref.send("b"))
        assert log == []
        await ref.ask("barrier")
        assert log == ["a", "b", "barrier"]


async def test_send_to_a_full_mailbox_waits_for_quota() -> None:
    log: list[Any] = []
    sent: list[int] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log, capacity=1)
        release = await hold(ref)
        ref.tell(0)  # the mailbox is full now

        async def send(n: int) -> None:
            await ref.send(n)
            sent.append(n)

        async with anyio.create_task_group() as tg:
            for n in (1, 2, 3):
                tg.start_soon(send, n)
                await wait_all_blocked()  # so they wait in this order
            assert sent == []  # backpressure: every sender waits
            release.set()
        assert sorted(sent) == [1, 2, 3]
        await ref.ask("barrier")
        # Served first come, first served: the messages went in in that order.
        assert log == ["hold", 0, 1, 2, 3, "barrier"]


async def test_send_to_a_stopped_actor_raises_actor_stopped() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        ref.stop()
        with pytest.raises(ActorStopped):
            await ref.send("x")
        await ref.join()
        with pytest.raises(ActorStopped):
            await ref.send("x")


async def test_a_send_waiting_for_quota_fails_when_the_actor_stops() -> None:
    log: list[Any] = []
    errors: list[BaseException] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log, capacity=1)
        release = await hold(ref)
        ref.tell("queued")

        async def send() -> None:
            try:
                await ref.send("waiting")
            except ActorStopped as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            await wait_all_blocked()
            ref.stop()  # fails the waiting sender at once, mid-message
        assert [type(e) for e in errors] == [ActorStopped]
        release.set()
        await ref.join()
    assert log == ["hold"]
    # The queued message is a dead letter; the refused one was never accepted.
    assert [d.message for d in system.dead_letters.recent] == ["queued"]
