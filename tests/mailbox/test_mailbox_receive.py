"""Receiving: the inlined receive, receive_nowait, drain-many, one consumer."""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Generator
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from actors.mailbox import EndOfMailbox, Mailbox, MailboxFull, Signal, WouldBlock

pytestmark = pytest.mark.anyio

TaskGroupFactory = Callable[[], AbstractAsyncContextManager[Any]]

T = TypeVar("T")


class Tick(Signal):
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


@types.coroutine
def suspensions(
    awaitable: Awaitable[T], counts: list[int], on_suspend: Callable[[], None] = list
) -> Generator[Any, Any, T]:
    """Await ``awaitable``, counting each time it suspends its task, and run
    ``on_suspend`` inside the task at the moment it suspends (deterministic on
    every backend: nothing else has run yet)."""
    inner = awaitable.__await__()
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            yielded = inner.throw(error) if error is not None else inner.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        counts.append(1)
        on_suspend()
        value, error = None, None
        try:
            value = yield yielded
        except BaseException as exc:  # delivered by the loop: pass it on
            error = exc


# -- receive ---------------------------------------------------------------------


async def test_receive_returns_the_next_item() -> None:
    mailbox: Mailbox[str] = Mailbox(4)
    tick = Tick(0)
    mailbox.try_send("a")
    mailbox.send_signal(tick)
    mailbox.try_send("b")
    assert await mailbox.receive() == "a"
    assert await mailbox.receive() is tick
    assert await mailbox.receive() == "b"
    assert len(mailbox) == 0


async def test_receive_waits_for_an_item(task_group: TaskGroupFactory) -> None:
    mailbox: Mailbox[str] = Mailbox()
    got: list[str | Signal] = []

    async def consumer() -> None:
        got.append(await mailbox.receive())

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        assert got == []
        mailbox.try_send("x")
    assert got == ["x"]


async def test_receive_releases_the_unit_and_moves_the_oldest_waiting_sender_in(
    task_group: TaskGroupFactory,
) -> None:
    # ... in the same step that hands the message out: when receive() returns,
    # before the sender has run, its message is queued and holds the unit.
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("first")
    sent = anyio.Event()

    async def sender() -> None:
        await mailbox.send("second")
        sent.set()

    async with task_group() as tg:
        tg.start_soon(sender)
        await wait_all_tasks_blocked()
        assert await mailbox.receive() == "first"
        stats = mailbox.statistics()
        assert stats.waiting_senders == 0
        assert stats.units_in_use == stats.queued_messages == 1
        assert not sent.is_set()
    assert await mailbox.receive() == "second"


async def test_receive_is_one_suspension_when_an_item_is_ready() -> None:
    mailbox: Mailbox[int] = Mailbox()
    mailbox.try_send(1)
    counts: list[int] = []
    assert await suspensions(mailbox.receive(), counts) == 1
    assert counts == [1]


async def test_receive_is_one_suspension_when_it_waits(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[int] = Mailbox()
    counts: list[int] = []
    got: list[object] = []

    async def consumer() -> None:
        got.append(await suspensions(mailbox.receive(), counts))

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        for i in range(5):  # a burst: still one wakeup, one suspension
            mailbox.try_send(i)
    assert got == [0]
    assert counts == [1]
    assert mailbox.statistics().wakeups == 1


async def test_receive_on_a_closed_empty_mailbox_is_still_one_suspension() -> None:
    # "Exactly one suspension per call" holds on the end-of-mailbox path too,
    # so it is a cancel point like anyio's and Trio's receive.
    mailbox: Mailbox[int] = Mailbox()
    mailbox.close()
    for receive in (mailbox.receive, lambda: mailbox.receive_many(4)):
        counts: list[int] = []
        with pytest.raises(EndOfMailbox):
            await suspensions(receive(), counts)
        assert counts == [1]


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_receive_never_raises_would_block_after_a_drain_at_its_checkpoint(
    many: bool, task_group: TaskGroupFactory
) -> None:
    # Regression: an item was ready, receive() went to its checkpoint, and
    # another party drained the (open) mailbox meanwhile; receive() raised
    # anyio.WouldBlock. It must wait for the next item instead.
    mailbox: Mailbox[int] = Mailbox()
    mailbox.try_send(1)
    drained: list[object] = []
    got: list[object] = []

    def drain_once() -> None:
        if not drained:
            drained.append(mailbox.take_all())

    async def consumer() -> None:
        counts: list[int] = []
        receive = mailbox.receive_many(8) if many else mailbox.receive()
        got.append(await suspensions(receive, counts, drain_once))

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        assert drained == [[1]]
        mailbox.try_send(2)
    assert got == ([[2]] if many else [2])


# -- receive_nowait ------------------------------------------------------------


def test_receive_nowait_on_an_empty_mailbox_raises_would_block() -> None:
    mailbox: Mailbox[int] = Mailbox(1)
    with pytest.raises(WouldBlock):
        mailbox.receive_nowait()
    with pytest.raises(WouldBlock):
        mailbox.receive_nowait_many(3)


async def test_receive_nowait_does_the_same_without_waiting(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("first")
    async with task_group() as tg:
        tg.start_soon(mailbox.send, "second")
        await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "first"
        stats = mailbox.statistics()
        assert stats.waiting_senders == 0
        assert stats.units_in_use == stats.queued_messages == 1
    assert mailbox.receive_nowait() == "second"
    assert mailbox.statistics().units_in_use == 0


# -- drain-many ----------------------------------------------------------------


async def test_receive_many_returns_up_to_limit_items_from_one_wake(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[int] = Mailbox()
    batches: list[list[object]] = []
    counts: list[int] = []

    async def consumer() -> None:
        batches.append(await suspensions(mailbox.receive_many(3), counts))

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        for i in range(5):
            mailbox.try_send(i)
    assert batches == [[0, 1, 2]]
    assert counts == [1]
    assert mailbox.statistics().wakeups == 1
    assert await mailbox.receive_many(3) == [3, 4]  # fewer than limit is fine


async def test_receive_many_with_items_ready_is_one_suspension() -> None:
    mailbox: Mailbox[int] = Mailbox()
    for i in range(10):
        mailbox.try_send(i)
    counts: list[int] = []
    assert await suspensions(mailbox.receive_many(64), counts) == list(range(10))
    assert counts == [1]


async def test_receive_many_releases_all_units_and_moves_that_many_senders_in(
    task_group: TaskGroupFactory,
) -> None:
    # ... up to that many waiting senders, in one step, oldest first.
    mailbox: Mailbox[str] = Mailbox(3)
    for name in ("q0", "q1", "q2"):
        mailbox.try_send(name)
    async with task_group() as tg:
        for i in range(5):
            tg.start_soon(mailbox.send, f"w{i}")
            await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 5
        assert await mailbox.receive_many(2) == ["q0", "q1"]
        stats = mailbox.statistics()
        assert stats.waiting_senders == 3
        assert stats.units_in_use == stats.queued_messages == 3
        assert mailbox.receive_nowait_many(3) == ["q2", "w0", "w1"]
        stats = mailbox.statistics()
        assert stats.waiting_senders == 0
        assert stats.units_in_use == stats.queued_messages == 3
    assert mailbox.receive_nowait_many(64) == ["w2", "w3", "w4"]
    assert mailbox.statistics().units_in_use == 0


def test_receive_nowait_many_releases_only_the_units_of_its_messages() -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    ticks = [Tick(0), Tick(1)]
    mailbox.send_signal(ticks[0])
    mailbox.try_send(0)
    mailbox.send_signal(ticks[1])
    mailbox.try_send(1)
    assert mailbox.receive_nowait_many(3) == [ticks[0], 0, ticks[1]]
    stats = mailbox.statistics()
    assert (stats.units_in_use, stats.queued_messages, stats.queued_signals) == (
        1,
        1,
        0,
    )
    mailbox.try_send(2)
    with pytest.raises(MailboxFull):
        mailbox.try_send(3)


def test_receive_nowait_many_takes_at_most_limit_in_fifo_order() -> None:
    mailbox: Mailbox[int] = Mailbox()
    for i in range(100):
        mailbox.try_send(i)
    assert mailbox.receive_nowait_many(64) == list(range(64))
    assert mailbox.receive_nowait_many(64) == list(range(64, 100))
    with pytest.raises(WouldBlock):
        mailbox.receive_nowait_many(64)


# -- signals and messages apart, without wrappers --------------------------------


async def test_the_consumer_tells_a_signal_from_a_message_by_its_class() -> None:
    mailbox: Mailbox[object] = Mailbox(8)
    message = ["a", "mutable", "message"]
    tick = Tick(7)
    mailbox.try_send(message)
    mailbox.send_signal(tick)
    first = await mailbox.receive()
    second = await mailbox.receive()
    # the very objects that were sent: no wrapper around either kind
    assert first is message
    assert second is tick
    assert not isinstance(first, Signal)
    assert isinstance(second, Signal)


# -- one consumer ----------------------------------------------------------------


async def test_a_mailbox_has_one_consumer(task_group: TaskGroupFactory) -> None:
    mailbox: Mailbox[int] = Mailbox()
    got: list[object] = []

    async def consumer() -> None:
        got.append(await mailbox.receive())

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        with pytest.raises(RuntimeError, match="one consumer"):
            await mailbox.receive()
        with pytest.raises(RuntimeError, match="one consumer"):
            await mailbox.receive_many(2)
        mailbox.try_send(1)
    assert got == [1]
    assert mailbox.statistics().wakeups == 1


async def test_async_iteration_receives_until_the_mailbox_ends() -> None:
    mailbox: Mailbox[int] = Mailbox()
    tick = Tick(0)
    mailbox.try_send(1)
    mailbox.send_signal(tick)
    mailbox.try_send(2)
    mailbox.close()
    assert [item async for item in mailbox] == [1, tick, 2]


async def test_receive_many_unchecked_is_receive_many_for_a_validated_limit(
    task_group: TaskGroupFactory,
) -> None:
    # The runtime's per-wake call: the same drain-many step, without the check.
    mailbox: Mailbox[int] = Mailbox(2)
    mailbox.try_send(1)
    mailbox.try_send(2)
    counts: list[int] = []
    batches: list[list[object]] = []

    async def consumer() -> None:
        batches.append(await mailbox.receive_many_unchecked(8))

    async with task_group() as tg:
        tg.start_soon(mailbox.send, 3)
        await wait_all_tasks_blocked()  # parked: the quota is full
        assert await suspensions(mailbox.receive_many_unchecked(8), counts) == [1, 2]
        assert counts == [1]
        assert mailbox.statistics().waiting_senders == 0  # 3 moved in, same step
        assert await mailbox.receive_many_unchecked(8) == [3]
        tg.start_soon(consumer)  # waits on the empty mailbox
        await wait_all_tasks_blocked()
        mailbox.try_send(4)
    assert batches == [[4]]
    mailbox.close()
    with pytest.raises(EndOfMailbox):
        await mailbox.receive_many_unchecked(8)
