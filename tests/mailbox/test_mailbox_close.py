"""Closing: closed overrides full, waiting senders withdrawn, drain, end of mailbox."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from actors.mailbox import EndOfMailbox, Mailbox, MailboxClosed, MailboxFull, Signal

pytestmark = pytest.mark.anyio

TaskGroupFactory = Callable[[], AbstractAsyncContextManager[Any]]


class Tick(Signal):
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


async def test_every_send_raises_mailbox_closed_after_close() -> None:
    mailbox: Mailbox[int] = Mailbox(4)
    mailbox.close()
    assert mailbox.closed
    with pytest.raises(MailboxClosed):
        mailbox.try_send(1)
    with pytest.raises(MailboxClosed):
        await mailbox.send(1)
    with pytest.raises(MailboxClosed):
        mailbox.send_signal(Tick(1))
    stats = mailbox.statistics()
    assert (len(mailbox), stats.units_in_use, stats.queued_signals) == (0, 0, 0)


async def test_closed_overrides_full() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(1)
    with pytest.raises(MailboxFull):
        mailbox.try_send(2)
    mailbox.close()
    with pytest.raises(MailboxClosed):
        mailbox.try_send(2)
    # send must not park on a full, closed mailbox: it raises at once
    with anyio.fail_after(5):
        with pytest.raises(MailboxClosed):
            await mailbox.send(2)
    assert mailbox.statistics().waiting_senders == 0
    assert mailbox.take_all() == [1]


async def test_waiting_senders_are_woken_with_mailbox_closed_and_not_enqueued(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    outcomes: dict[str, str] = {}

    async def sender(name: str) -> None:
        try:
            await mailbox.send(name)
        except MailboxClosed:
            outcomes[name] = "closed"
        else:
            outcomes[name] = "sent"

    async with task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(sender, name)
        await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 3
        mailbox.close()
        assert mailbox.statistics().waiting_senders == 0
    assert outcomes == {"a": "closed", "b": "closed", "c": "closed"}
    stats = mailbox.statistics()
    assert stats.units_in_use == stats.queued_messages == 1
    assert mailbox.take_all() == ["queued"]


def test_drain_returns_everything_still_queued() -> None:
    # ... messages and signals, in FIFO order, releasing every unit, so the
    # runtime can fail pending asks and count dead letters.
    mailbox: Mailbox[int] = Mailbox(3)
    ticks = [Tick(0), Tick(1)]
    mailbox.try_send(0)
    mailbox.send_signal(ticks[0])
    mailbox.try_send(1)
    mailbox.send_signal(ticks[1])
    mailbox.close()
    assert mailbox.take_all() == [0, ticks[0], 1, ticks[1]]
    stats = mailbox.statistics()
    assert (stats.units_in_use, stats.queued_messages, stats.queued_signals) == (
        0,
        0,
        0,
    )
    assert mailbox.take_all() == []
    with pytest.raises(EndOfMailbox):
        mailbox.receive_nowait()


async def test_drain_works_on_an_open_mailbox_and_moves_waiting_senders_in(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(2)
    mailbox.try_send("q0")
    mailbox.try_send("q1")
    async with task_group() as tg:
        for name in ("w0", "w1", "w2"):
            tg.start_soon(mailbox.send, name)
            await wait_all_tasks_blocked()
        assert mailbox.take_all() == ["q0", "q1"]
        stats = mailbox.statistics()
        assert stats.waiting_senders == 1
        assert stats.units_in_use == stats.queued_messages == 2
        assert mailbox.take_all() == ["w0", "w1"]
    assert mailbox.take_all() == ["w2"]
    assert not mailbox.closed
    mailbox.try_send("still open")


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_a_consumer_waiting_on_an_empty_mailbox_gets_end_of_mailbox_on_close(
    many: bool, task_group: TaskGroupFactory
) -> None:
    mailbox: Mailbox[int] = Mailbox()
    raised: list[BaseException] = []

    async def consumer() -> None:
        try:
            if many:
                await mailbox.receive_many(4)
            else:
                await mailbox.receive()
        except EndOfMailbox as exc:
            raised.append(exc)

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        mailbox.close()
    assert len(raised) == 1
    assert isinstance(raised[0], anyio.EndOfStream)
    assert "closed" in str(raised[0])


async def test_every_receive_on_a_closed_empty_mailbox_raises_end_of_mailbox() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.close()
    with pytest.raises(EndOfMailbox):
        await mailbox.receive()
    with pytest.raises(EndOfMailbox):
        await mailbox.receive_many(3)
    with pytest.raises(EndOfMailbox):
        mailbox.receive_nowait()
    with pytest.raises(EndOfMailbox):
        mailbox.receive_nowait_many(3)


async def test_queued_items_are_still_received_after_close() -> None:
    mailbox: Mailbox[int] = Mailbox(3)
    tick = Tick(0)
    mailbox.try_send(1)
    mailbox.send_signal(tick)
    mailbox.try_send(2)
    mailbox.try_send(3)
    mailbox.close()
    assert await mailbox.receive() == 1
    assert await mailbox.receive_many(2) == [tick, 2]
    assert mailbox.receive_nowait() == 3
    with pytest.raises(EndOfMailbox):
        await mailbox.receive()


async def test_close_is_idempotent() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(1)
    mailbox.close()
    mailbox.close()
    assert mailbox.closed
    assert await mailbox.receive() == 1
    with pytest.raises(EndOfMailbox):
        await mailbox.receive()


def test_the_deprecated_names_drain_and_receive_batch_are_gone() -> None:
    # Removed before the first release: one name per operation (take_all,
    # receive_many_unchecked), and "drain" means the items taken per wake.
    assert not hasattr(Mailbox, "drain")
    assert not hasattr(Mailbox, "receive_batch")
