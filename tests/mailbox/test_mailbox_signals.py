"""Signals: uncounted, never blocked by the quota, in their FIFO place."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from anyio import wait_all_tasks_blocked

from actors.mailbox import Mailbox, MailboxFull, Signal

pytestmark = pytest.mark.anyio

TaskGroupFactory = Callable[[], AbstractAsyncContextManager[Any]]


class Terminated(Signal):
    """A stand-in for the runtime's death-watch notification."""

    __slots__ = ("who",)

    def __init__(self, who: str) -> None:
        self.who = who


class Tick(Signal):
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


def test_signal_bypasses_a_full_quota_and_keeps_its_fifo_place() -> None:
    # tellus's case: capacity 1, message 1 queued, message 2 is MailboxFull,
    # signal 3 is accepted, and the consumer sees [1, 3].
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(1)
    with pytest.raises(MailboxFull):
        mailbox.try_send(2)
    three = Tick(3)
    mailbox.send_signal(three)
    assert mailbox.receive_nowait_many(10) == [1, three]


def test_signals_never_count_against_the_quota() -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    ticks = [Tick(i) for i in range(1000)]
    for tick in ticks:
        mailbox.send_signal(tick)
    stats = mailbox.statistics()
    assert stats.units_in_use == 0
    assert stats.queued_signals == 1000
    assert stats.queued_messages == 0
    # the whole quota is still free for messages
    mailbox.try_send(1)
    mailbox.try_send(2)
    with pytest.raises(MailboxFull):
        mailbox.try_send(3)
    assert mailbox.take_all() == [*ticks, 1, 2]


def test_receiving_a_signal_releases_no_unit() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    tick = Tick(0)
    mailbox.send_signal(tick)
    mailbox.try_send(1)
    assert mailbox.receive_nowait() is tick
    # the message's unit is still held: the signal gave nothing back
    assert mailbox.statistics().units_in_use == 1
    with pytest.raises(MailboxFull):
        mailbox.try_send(2)


async def test_send_signal_never_waits(task_group: TaskGroupFactory) -> None:
    # send_signal is synchronous: it cannot wait, even on a full mailbox with
    # senders parked for quota, and it does not go behind those senders.
    mailbox: Mailbox[object] = Mailbox(1)
    mailbox.try_send("queued")

    async with task_group() as tg:
        tg.start_soon(mailbox.send, "waiting")
        await wait_all_tasks_blocked()
        tick = Tick(0)
        assert mailbox.send_signal(tick) is None  # type: ignore[func-returns-value]
        assert mailbox.statistics().waiting_senders == 1
        assert mailbox.receive_nowait() == "queued"
        assert mailbox.receive_nowait() is tick
        assert mailbox.receive_nowait() == "waiting"


async def test_a_terminated_signal_arrives_after_every_message_sent_before_it(
    task_group: TaskGroupFactory,
) -> None:
    # The runtime's use: an actor's messages, then its Terminated, in order, even
    # when the watcher's mailbox is full and the messages had to wait for quota.
    mailbox: Mailbox[object] = Mailbox(2)
    received: list[object] = []

    async def watched_actor() -> None:
        for i in range(10):
            await mailbox.send(i)
        mailbox.send_signal(Terminated("watched"))

    async def watcher() -> None:
        while True:
            item = await mailbox.receive()
            received.append(item)
            if isinstance(item, Terminated):
                return

    async with task_group() as tg:
        tg.start_soon(watched_actor)
        tg.start_soon(watcher)
    assert received[:-1] == list(range(10))
    last = received[-1]
    assert isinstance(last, Terminated)
    assert last.who == "watched"


def test_signals_and_messages_interleave_in_one_fifo() -> None:
    mailbox: Mailbox[int] = Mailbox(3)
    items: list[object] = []
    for i in range(3):
        mailbox.try_send(i)
        tick = Tick(i)
        mailbox.send_signal(tick)
        items += [i, tick]
    assert [mailbox.receive_nowait() for _ in range(6)] == items
