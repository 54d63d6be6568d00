"""statistics(): queued messages, queued signals, capacity, waiting senders, peak
queue length, units in use (and wakeups)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from anyio import wait_all_tasks_blocked

from actors.mailbox import Mailbox, MailboxStatistics, Signal

pytestmark = pytest.mark.anyio

TaskGroupFactory = Callable[[], AbstractAsyncContextManager[Any]]


class Tick(Signal):
    __slots__ = ()


def test_statistics_is_a_named_tuple_of_the_contract_fields() -> None:
    assert MailboxStatistics._fields == (
        "queued_messages",
        "queued_signals",
        "capacity",
        "waiting_senders",
        "peak_queue_length",
        "units_in_use",
        "wakeups",
    )
    assert Mailbox(3).statistics() == MailboxStatistics(0, 0, 3, 0, 0, 0, 0)
    assert Mailbox().statistics() == MailboxStatistics(0, 0, None, 0, 0, 0, 0)


async def test_statistics_report_every_field(task_group: TaskGroupFactory) -> None:
    # queued messages, queued signals, capacity, waiting senders, peak queue
    # length, units in use: each moved on its own.
    mailbox: Mailbox[str] = Mailbox(2)
    mailbox.try_send("m0")
    mailbox.send_signal(Tick())
    mailbox.try_send("m1")
    assert mailbox.statistics() == MailboxStatistics(
        queued_messages=2,
        queued_signals=1,
        capacity=2,
        waiting_senders=0,
        peak_queue_length=3,
        units_in_use=2,
        wakeups=0,
    )
    async with task_group() as tg:
        tg.start_soon(mailbox.send, "w0")
        await wait_all_tasks_blocked()  # w0 parks first
        tg.start_soon(mailbox.send, "w1")
        await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 2
        assert mailbox.receive_nowait() == "m0"  # w0 moves in
        assert mailbox.statistics() == MailboxStatistics(
            queued_messages=2,
            queued_signals=1,
            capacity=2,
            waiting_senders=1,
            peak_queue_length=3,
            units_in_use=2,
            wakeups=0,
        )
        assert isinstance(mailbox.receive_nowait(), Tick)  # releases nothing
        assert mailbox.statistics().waiting_senders == 1
        assert mailbox.receive_nowait_many(2) == ["m1", "w0"]  # w1 moves in
    assert mailbox.statistics() == MailboxStatistics(
        queued_messages=1,
        queued_signals=0,
        capacity=2,
        waiting_senders=0,
        peak_queue_length=3,
        units_in_use=1,
        wakeups=0,
    )


def test_peak_queue_length_counts_signals_beyond_the_quota() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    mailbox.try_send(0)
    for _ in range(5):
        mailbox.send_signal(Tick())
    mailbox.take_all()
    stats = mailbox.statistics()
    assert stats.peak_queue_length == 6
    assert len(mailbox) == 0


async def test_wakeups_count_one_per_park_of_the_consumer(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[int] = Mailbox()
    got: list[object] = []

    async def consumer() -> None:
        for _ in range(2):
            got.append(await mailbox.receive_many(64))

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        for i in range(10):
            mailbox.try_send(i)
        await wait_all_tasks_blocked()
        mailbox.send_signal(tick := Tick())
        mailbox.try_send(10)
    assert got == [list(range(10)), [tick, 10]]
    assert mailbox.statistics().wakeups == 2


async def test_units_in_use_equal_queued_messages_after_every_operation(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[int] = Mailbox(3)

    def check() -> None:
        stats = mailbox.statistics()
        assert stats.units_in_use == stats.queued_messages
        assert stats.queued_messages + stats.queued_signals == len(mailbox)

    for i in range(3):
        mailbox.try_send(i)
        check()
        mailbox.send_signal(Tick())
        check()
    async with task_group() as tg:
        for i in range(3, 6):
            tg.start_soon(mailbox.send, i)
        await wait_all_tasks_blocked()
        check()
        mailbox.receive_nowait_many(2)
        check()
        await mailbox.receive()
        check()
        await mailbox.receive_many(3)
        check()
        mailbox.take_all()
        check()
    mailbox.close()
    mailbox.take_all()
    check()
    assert mailbox.statistics().units_in_use == 0
