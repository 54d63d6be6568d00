"""Cancellation under anyio cancel scopes (and Trio): send and receive are atomic.

Each either takes effect and returns, or raises and leaves the mailbox unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from actors.mailbox import Mailbox, Signal
from actors.mailbox._mailbox import PARKS_PER_CHECK

pytestmark = pytest.mark.anyio

TaskGroupFactory = Callable[[], AbstractAsyncContextManager[Any]]


class Tick(Signal):
    __slots__ = ()


async def test_send_cancelled_while_waiting_raises_and_leaves_the_mailbox_as_is(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    before = mailbox.statistics()
    scope = anyio.CancelScope()

    async def sender() -> None:
        with scope:
            await mailbox.send("cancelled")
            pytest.fail("send returned although it was cancelled while parked")

    async with task_group() as tg:
        tg.start_soon(sender)
        await wait_all_tasks_blocked()
        scope.cancel()
    assert scope.cancelled_caught
    assert mailbox.statistics() == before
    assert mailbox.take_all() == ["queued"]


async def test_send_cancelled_after_its_hand_off_takes_effect_and_returns(
    task_group: TaskGroupFactory,
) -> None:
    # The unit was released to the sender and its message moved in; a cancel
    # landing before the sender resumes cannot undo that, so send returns.
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    scope = anyio.CancelScope()
    returned: list[bool] = []

    async def sender() -> None:
        with scope:
            await mailbox.send("moved in")
            returned.append(True)

    async with task_group() as tg:
        tg.start_soon(sender)
        await wait_all_tasks_blocked()
        assert mailbox.receive_nowait() == "queued"  # hands the unit over
        scope.cancel()  # same step: before the sender runs
    assert returned == [True]
    assert not scope.cancelled_caught
    assert mailbox.take_all() == ["moved in"]


async def test_send_with_a_free_unit_is_not_a_cancel_point() -> None:
    # Documented design (as asyncio.Queue.put): a free unit means send returns
    # without yielding, so even a cancelled scope lets it take effect.
    mailbox: Mailbox[int] = Mailbox(1)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await mailbox.send(1)
    assert mailbox.take_all() == [1]


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_receive_cancelled_while_waiting_takes_nothing(
    many: bool, task_group: TaskGroupFactory
) -> None:
    mailbox: Mailbox[int] = Mailbox()
    scope = anyio.CancelScope()

    async def consumer() -> None:
        with scope:
            await (mailbox.receive_many(4) if many else mailbox.receive())
            pytest.fail("receive returned although it was cancelled while parked")

    got: list[object] = []

    async def next_consumer() -> None:
        got.append(await (mailbox.receive_many(4) if many else mailbox.receive()))

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        scope.cancel()
        await wait_all_tasks_blocked()
        assert scope.cancelled_caught
        # The consumer's slot is free again: a new receive on the still empty
        # mailbox parks (no "one consumer" error), and gets the next item.
        tg.start_soon(next_consumer)
        await wait_all_tasks_blocked()
        mailbox.try_send(1)
    assert got == ([[1]] if many else [1])
    assert mailbox.statistics().wakeups == 1


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_receive_cancelled_with_an_item_ready_takes_nothing(many: bool) -> None:
    # The checkpoint comes before the take: it is the cancel point.
    mailbox: Mailbox[int] = Mailbox(2)
    mailbox.try_send(1)
    mailbox.send_signal(tick := Tick())
    before = mailbox.statistics()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await (mailbox.receive_many(4) if many else mailbox.receive())
        pytest.fail("receive returned in a cancelled scope")
    assert scope.cancelled_caught
    assert mailbox.statistics() == before
    assert mailbox.take_all() == [1, tick]


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_receive_cancelled_after_its_wakeup_takes_effect_and_returns(
    many: bool, task_group: TaskGroupFactory
) -> None:
    mailbox: Mailbox[int] = Mailbox()
    scope = anyio.CancelScope()
    got: list[object] = []

    async def consumer() -> None:
        with scope:
            got.append(await (mailbox.receive_many(4) if many else mailbox.receive()))

    async with task_group() as tg:
        tg.start_soon(consumer)
        await wait_all_tasks_blocked()
        mailbox.try_send(1)  # wakes the consumer
        mailbox.try_send(2)
        scope.cancel()  # same step: before the consumer runs
    assert got == ([[1, 2]] if many else [1])
    assert not scope.cancelled_caught
    assert mailbox.take_all() == ([] if many else [2])


async def test_receive_on_a_closed_empty_mailbox_is_a_cancel_point() -> None:
    mailbox: Mailbox[int] = Mailbox()
    mailbox.close()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await mailbox.receive()
    assert scope.cancelled_caught


async def test_a_cancelled_sender_mid_queue_keeps_fifo_for_the_others(
    task_group: TaskGroupFactory,
) -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("q")
    scopes = {name: anyio.CancelScope() for name in ("a", "b", "c")}

    async def sender(name: str) -> None:
        with scopes[name]:
            await mailbox.send(name)

    async with task_group() as tg:
        for name in scopes:
            tg.start_soon(sender, name)
            await wait_all_tasks_blocked()
        scopes["b"].cancel()
        await wait_all_tasks_blocked()
        assert mailbox.statistics().waiting_senders == 2
        received = [mailbox.receive_nowait()]
        await wait_all_tasks_blocked()
        received.append(mailbox.receive_nowait())
        await wait_all_tasks_blocked()
        received.append(mailbox.receive_nowait())
    assert received == ["q", "a", "c"]
    assert len(mailbox) == 0


async def test_a_checked_park_in_a_cancelled_scope_raises_though_a_unit_is_coming(
    task_group: TaskGroupFactory,
) -> None:
    # A receiver that runs before the cancellation is delivered would hand
    # the parked sender its unit; on asyncio that happened every time, so a
    # loop of waiting sends in a cancelled scope never ended. Every
    # PARKS_PER_CHECK-th park of a mailbox checks first: this one is.
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    mailbox._quota.parks = PARKS_PER_CHECK - 1
    go = anyio.Event()
    taken: list[str] = []

    async def receiver() -> None:
        await go.wait()
        taken.append(mailbox.receive_nowait())  # type: ignore[arg-type]

    async with task_group() as tg:
        tg.start_soon(receiver)
        await wait_all_tasks_blocked()
        with anyio.CancelScope() as scope:
            go.set()  # the receiver runs next, before the cancel is delivered
            scope.cancel()
            await mailbox.send("in a cancelled scope")
            pytest.fail("send returned although its scope was cancelled")
        assert scope.cancelled_caught
    assert taken == ["queued"]
    assert mailbox.take_all() == []
