"""``wait_detached``: a consumer that waits without a task (an idle actor)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors.mailbox import EndOfMailbox, Mailbox, Signal

pytestmark = pytest.mark.anyio


class Tick(Signal):
    __slots__ = ()


class Calls:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    def __call__(self, arg: Any, value: None) -> None:
        self.seen.append((arg, value))


async def test_the_next_message_calls_the_callback_once_and_is_queued() -> None:
    mailbox: Mailbox[int] = Mailbox()
    calls = Calls()
    assert mailbox.wait_detached(calls, "me")
    mailbox.try_send(1)
    mailbox.try_send(2)
    assert calls.seen == [("me", None)]  # once: later sends see no consumer
    assert mailbox.take_ready(10) == [1, 2]


async def test_a_signal_or_the_close_calls_it_too() -> None:
    mailbox: Mailbox[int] = Mailbox()
    calls = Calls()
    assert mailbox.wait_detached(calls, 1)
    mailbox.send_signal(signal := Tick())
    assert calls.seen == [(1, None)]
    assert mailbox.take_ready(4) == [signal]
    assert mailbox.wait_detached(calls, 2)
    mailbox.close()
    assert calls.seen == [(1, None), (2, None)]
    with pytest.raises(EndOfMailbox):
        mailbox.take_ready(4)


async def test_it_registers_nothing_when_an_item_is_queued_or_it_is_closed() -> None:
    mailbox: Mailbox[int] = Mailbox()
    calls = Calls()
    mailbox.try_send(7)
    assert not mailbox.wait_detached(calls, None)
    assert mailbox.take_ready(1) == [7]
    mailbox.close()
    assert not mailbox.wait_detached(calls, None)
    assert calls.seen == []


async def test_a_detached_consumer_is_the_one_consumer() -> None:
    mailbox: Mailbox[int] = Mailbox()
    assert mailbox.wait_detached(Calls(), None)
    with pytest.raises(RuntimeError, match="one consumer"):
        await mailbox.receive()
    with pytest.raises(RuntimeError, match="one consumer"):
        mailbox.wait_detached(Calls(), None)


async def test_while_detached_the_mailbox_reads_empty_and_keeps_its_counts() -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    assert mailbox.wait_detached(Calls(), None)
    assert len(mailbox) == 0
    assert mailbox.take_all() == []
    stats = mailbox.statistics()
    assert (stats.queued_messages, stats.units_in_use) == (0, 0)
    mailbox.try_send(1)
    mailbox.try_send(2)
    assert mailbox.statistics().units_in_use == 2
    assert mailbox.take_ready(8) == [1, 2]


async def test_a_task_can_wait_again_after_a_detached_wakeup() -> None:
    mailbox: Mailbox[int] = Mailbox()
    assert mailbox.wait_detached(Calls(), None)
    mailbox.try_send(1)
    assert mailbox.take_ready(1) == [1]
    got: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def consume() -> None:
            got.extend(await mailbox.receive_many(4))

        tg.start_soon(consume)
        await anyio.wait_all_tasks_blocked()
        mailbox.try_send(2)  # wakes the parked task, not the old callback
    assert got == [2]
