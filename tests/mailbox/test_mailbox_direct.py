"""``Mailbox.direct``: the queue a sender may append a message to without a
call, open exactly while a plain append is a send (the mailbox is open, has
no quota and no consumer waits on it)."""

from __future__ import annotations

from collections import deque
from typing import Any

import anyio
import pytest

from actors.mailbox import SIGNAL_CLASSES, Mailbox, MailboxClosed, Signal

pytestmark = pytest.mark.anyio


class Ping(Signal):
    __slots__ = ()


def test_every_signal_class_is_known_to_the_mailbox() -> None:
    assert Signal in SIGNAL_CLASSES
    assert Ping in SIGNAL_CLASSES
    assert int not in SIGNAL_CLASSES


async def test_an_open_mailbox_without_a_quota_takes_an_append_as_a_send() -> None:
    mailbox: Mailbox[int] = Mailbox()
    assert mailbox.direct is not None
    mailbox.direct.append(1)
    mailbox.try_send(2)
    stats = mailbox.statistics()
    assert (stats.queued_messages, stats.units_in_use) == (2, 2)
    assert mailbox.take_ready(10) == [1, 2]


def test_a_mailbox_with_a_quota_or_closed_has_no_direct_path() -> None:
    assert Mailbox(4).direct is None
    mailbox: Mailbox[int] = Mailbox()
    mailbox.close()
    assert mailbox.direct is None
    with pytest.raises(MailboxClosed):
        mailbox.try_send(1)


async def test_a_waiting_consumer_closes_it_until_a_send_wakes_it() -> None:
    mailbox: Mailbox[int] = Mailbox()
    got: list[Any] = []

    async def consume() -> None:
        await mailbox.wait_ready()
        got.extend(mailbox.take_ready(10))

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await anyio.wait_all_tasks_blocked()
        assert mailbox.direct is None  # an append would not wake it
        mailbox.try_send(7)  # wakes it
        assert mailbox.direct is not None
    assert got == [7]


async def test_a_cancelled_or_interrupted_wait_opens_it_again() -> None:
    mailbox: Mailbox[int] = Mailbox()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(mailbox.wait_ready)
            await anyio.wait_all_tasks_blocked()
            assert mailbox.direct is None
            scope.cancel()
    assert mailbox.direct is not None
    results: list[bool] = []

    async def wait() -> None:
        results.append(await mailbox.wait_ready())

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert mailbox.interrupt_wait()
        assert mailbox.direct is not None
    assert results == [True]


def test_a_detached_consumer_closes_it_until_the_next_item() -> None:
    mailbox: Mailbox[int] = Mailbox()
    calls: list[Any] = []
    assert mailbox.wait_detached(lambda arg, _: calls.append(arg), "me")
    assert mailbox.direct is None  # its queue is gone, and it must be called
    mailbox.try_send(1)
    assert calls == ["me"]
    assert mailbox.direct is not None
    mailbox.direct.append(2)
    assert mailbox.take_ready(10) == [1, 2]


def test_a_subclass_that_takes_messages_its_own_way_has_no_direct_path() -> None:
    # A try_send (or send) of its own must see every message: the runtime's
    # tell appends to ``direct`` without calling it, so there is none.
    class Recording(Mailbox[Any]):
        __slots__ = ("taken",)

        def try_send(self, message: Any) -> None:
            self.taken.append(message)
            super().try_send(message)

    box = Recording()
    box.taken = []
    assert box.direct is None
    box.direct = deque()  # what the mailbox's own code stores there is dropped
    assert box.direct is None
    assert Mailbox().direct is not None  # the plain mailbox keeps its own
