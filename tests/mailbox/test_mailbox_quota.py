"""Messages and the quota: reserve, backpressure, first come first served."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from anyio.lowlevel import checkpoint

from actors.mailbox import Mailbox, MailboxFull

pytestmark = pytest.mark.anyio

TaskGroupFactory = Callable[[], AbstractAsyncContextManager[Any]]


def test_try_send_reserves_one_unit_and_enqueues() -> None:
    mailbox: Mailbox[str] = Mailbox(3)
    mailbox.try_send("a")
    stats = mailbox.statistics()
    assert (stats.units_in_use, stats.queued_messages) == (1, 1)
    mailbox.try_send("b")
    stats = mailbox.statistics()
    assert (stats.units_in_use, stats.queued_messages) == (2, 2)
    assert mailbox.receive_nowait_many(10) == ["a", "b"]


def test_try_send_on_an_exhausted_quota_raises_mailbox_full_and_enqueues_nothing() -> (
    None
):
    mailbox: Mailbox[int] = Mailbox(2)
    mailbox.try_send(1)
    mailbox.try_send(2)
    with pytest.raises(MailboxFull):
        mailbox.try_send(3)
    stats = mailbox.statistics()
    assert (stats.units_in_use, stats.queued_messages, len(mailbox)) == (2, 2, 2)
    assert mailbox.take_all() == [1, 2]


def test_a_released_unit_can_be_reserved_again() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    for i in range(5):
        mailbox.try_send(i)
        with pytest.raises(MailboxFull):
            mailbox.try_send(-1)
        assert mailbox.receive_nowait() == i
    assert mailbox.statistics().units_in_use == 0


async def test_a_mailbox_is_one_fifo_queue_for_any_number_of_senders(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[tuple[int, int]] = Mailbox()
    received: list[tuple[int, int]] = []

    async def producer(n: int) -> None:
        for i in range(50):
            await mailbox.send((n, i))
            await checkpoint()  # interleave the producers

    async def consumer() -> None:
        for _ in range(200):
            received.append(await mailbox.receive())

    async with task_group() as tg:
        tg.start_soon(consumer)
        for n in range(4):
            tg.start_soon(producer, n)
    assert sorted(received) == [(n, i) for n in range(4) for i in range(50)]
    for n in range(4):
        assert [i for m, i in received if m == n] == list(range(50))
    # the producers really interleaved: this is one queue, not four
    assert len({m for m, _ in received[:8]}) > 1


async def test_send_with_a_free_unit_returns_without_yielding(
    task_group: TaskGroupFactory,
) -> None:
    # Like asyncio.Queue.put: a free unit means no schedule point, so another
    # task cannot run in between.
    mailbox: Mailbox[int] = Mailbox(2)
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    async with task_group() as tg:
        tg.start_soon(other)
        await mailbox.send(1)
        await mailbox.send(2)
        assert ran == []
    assert ran == ["other"]


async def test_send_waits_for_a_unit(task_group: TaskGroupFactory) -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(1)
    done = anyio.Event()

    async def sender() -> None:
        await mailbox.send(2)
        done.set()

    async with task_group() as tg:
        tg.start_soon(sender)
        await wait_all_tasks_blocked()
        assert not done.is_set()
        assert mailbox.statistics().waiting_senders == 1
        assert len(mailbox) == 1
        assert mailbox.receive_nowait() == 1
        await wait_all_tasks_blocked()
        assert done.is_set()
    assert mailbox.receive_nowait() == 2


async def test_waiting_senders_are_served_first_come_first_served(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(0)
    order: list[int] = []

    async def sender(n: int) -> None:
        await mailbox.send(n)
        order.append(n)

    async with task_group() as tg:
        for n in range(1, 6):
            tg.start_soon(sender, n)
            await wait_all_tasks_blocked()  # park them in the order 1..5
        assert mailbox.statistics().waiting_senders == 5
        received = [mailbox.receive_nowait()]
        while len(received) < 6:
            await wait_all_tasks_blocked()
            received.append(mailbox.receive_nowait())
    assert received == [0, 1, 2, 3, 4, 5]
    assert order == [1, 2, 3, 4, 5]


async def test_released_unit_goes_to_the_oldest_waiting_sender(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(2)
    mailbox.try_send("q1")
    mailbox.try_send("q2")

    async with task_group() as tg:
        for name in ("oldest", "middle", "newest"):
            tg.start_soon(mailbox.send, name)
            await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "q1"
        # the one released unit went to the oldest sender, nobody else
        assert mailbox.statistics().waiting_senders == 2
        assert mailbox.take_all() == ["q2", "oldest"]
        # drain released two units: the next two senders, in order
        assert mailbox.take_all() == ["middle", "newest"]


async def test_the_oldest_senders_message_moves_in_within_the_releasing_step(
    task_group: TaskGroupFactory,
) -> None:
    # No task has run between receive_nowait() and the checks below: the
    # message is queued and the unit taken before the sender even resumes.
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("first")
    resumed = anyio.Event()

    async def sender() -> None:
        await mailbox.send("second")
        resumed.set()

    async with task_group() as tg:
        tg.start_soon(sender)
        await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "first"
        stats = mailbox.statistics()
        assert not resumed.is_set()
        assert stats.waiting_senders == 0
        assert stats.units_in_use == stats.queued_messages == 1
        assert len(mailbox) == 1
    assert resumed.is_set()
    assert mailbox.receive_nowait() == "second"


async def test_no_try_send_barges_past_a_waiting_sender(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")

    async with task_group() as tg:
        tg.start_soon(mailbox.send, "waiting")
        await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "queued"
        # the released unit already belongs to the waiting sender
        with pytest.raises(MailboxFull):
            mailbox.try_send("barging")
    assert mailbox.take_all() == ["waiting"]


async def test_no_send_barges_past_a_waiting_sender(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    order: list[str] = []

    async def sender(name: str) -> None:
        await mailbox.send(name)
        order.append(name)

    async with task_group() as tg:
        tg.start_soon(sender, "waiting")
        await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "queued"
        tg.start_soon(sender, "late")  # arrives after the release
        await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 1  # "late" parked
        assert mailbox.receive_nowait() == "waiting"
        await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "late"
    assert order == ["waiting", "late"]


async def test_send_cancelled_while_waiting_leaves_nothing_enqueued(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")

    async def sender(scope: anyio.CancelScope) -> None:
        with scope:
            await mailbox.send("cancelled")
        assert scope.cancelled_caught

    async with task_group() as tg:
        scope = anyio.CancelScope()
        tg.start_soon(sender, scope)
        tg.start_soon(mailbox.send, "next")
        await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 2
        scope.cancel()
        await wait_all_tasks_blocked()
        stats = mailbox.statistics()
        assert stats.waiting_senders == 1
        assert stats.units_in_use == stats.queued_messages == 1
        # the cancelled sender's place passes to the next one
        assert mailbox.receive_nowait() == "queued"
        assert mailbox.receive_nowait() == "next"
    assert len(mailbox) == 0
    assert mailbox.statistics().units_in_use == 0
