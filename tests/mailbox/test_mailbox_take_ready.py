"""The runtime's written-out receive: ``take_ready`` (take what is queued, or
nothing) and ``wait_ready`` (park until something is queued, taking nothing)."""

from __future__ import annotations

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from actors.mailbox import EndOfMailbox, Mailbox, Signal

pytestmark = pytest.mark.anyio


class Tick(Signal):
    __slots__ = ()


async def test_take_ready_takes_what_is_queued_up_to_the_limit() -> None:
    mailbox: Mailbox[int] = Mailbox()
    assert mailbox.take_ready(8) == []
    tick = Tick()
    mailbox.try_send(1)
    mailbox.send_signal(tick)
    mailbox.try_send(2)
    mailbox.try_send(3)
    assert mailbox.take_ready(2) == [1, tick]
    assert mailbox.take_ready(1) == [2]
    assert mailbox.take_ready(8) == [3]
    assert mailbox.take_ready(8) == []
    stats = mailbox.statistics()
    assert stats.queued_messages == stats.queued_signals == stats.units_in_use == 0
    assert stats.peak_queue_length == 4


async def test_take_ready_on_a_closed_empty_mailbox_raises_end_of_mailbox() -> None:
    mailbox: Mailbox[int] = Mailbox()
    mailbox.try_send(1)
    mailbox.close()
    assert mailbox.take_ready(8) == [1]
    with pytest.raises(EndOfMailbox):
        mailbox.take_ready(8)


async def test_take_ready_releases_units_and_moves_waiting_senders_in() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(mailbox.send, 2)
        await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 1
        assert mailbox.take_ready(8) == [1]
        # The released unit went to the waiting sender within the take.
        assert mailbox.statistics().waiting_senders == 0
        assert mailbox.take_ready(8) == [2]


async def test_wait_ready_returns_once_an_item_is_queued_and_takes_nothing() -> None:
    mailbox: Mailbox[int] = Mailbox()
    woken = anyio.Event()

    async def consumer() -> None:
        await mailbox.wait_ready()
        woken.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        assert not woken.is_set()
        mailbox.try_send(7)
    assert woken.is_set()
    assert mailbox.statistics().wakeups == 1
    assert mailbox.take_ready(8) == [7]


async def test_wait_ready_returns_at_once_when_closed_or_not_empty() -> None:
    mailbox: Mailbox[int] = Mailbox()
    mailbox.try_send(1)
    await mailbox.wait_ready()
    assert mailbox.take_ready(8) == [1]
    mailbox.close()
    await mailbox.wait_ready()
    with pytest.raises(EndOfMailbox):
        mailbox.take_ready(8)


async def test_a_cancelled_wait_ready_leaves_the_mailbox_as_it_was() -> None:
    mailbox: Mailbox[int] = Mailbox()
    scope = anyio.CancelScope()

    async def waiter() -> None:
        with scope:
            await mailbox.wait_ready()

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await wait_all_tasks_blocked()
        scope.cancel()
    assert scope.cancelled_caught
    assert len(mailbox) == 0
    # No consumer left registered: a later wait and send work as usual.
    async with anyio.create_task_group() as tg:
        tg.start_soon(mailbox.wait_ready)
        await wait_all_tasks_blocked()
        mailbox.try_send(1)
    assert mailbox.take_ready(8) == [1]


async def test_wait_ready_allows_one_waiting_consumer() -> None:
    mailbox: Mailbox[int] = Mailbox()
    async with anyio.create_task_group() as tg:
        tg.start_soon(mailbox.wait_ready)
        await wait_all_tasks_blocked()
        with pytest.raises(RuntimeError, match="one consumer"):
            await mailbox.wait_ready()
        mailbox.try_send(1)
