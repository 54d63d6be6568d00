"""A native ``asyncio.Task.cancel()`` racing a hand-off: nothing lost, nothing twice.

Only asyncio (and uvloop) has this race: Trio cannot cancel a task once it was
rescheduled, and anyio's cancel scopes skip a task whose future is already
resolved. What the caller sees, as documented on ``Mailbox.send`` / ``receive``:

* a sender cancelled after its message moved in gets ``CancelledError``, and the
  message stays queued (it will be received once; the sender must not resend);
* a sender cancelled before its message moved in gets ``CancelledError``, and the
  released unit goes to the next waiting sender;
* a consumer cancelled at any point of a receive gets ``CancelledError`` and takes
  nothing: the items stay queued for its next receive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from anyio import wait_all_tasks_blocked
from anyio.lowlevel import checkpoint

from actors.mailbox import Mailbox, MailboxClosed

ASYNCIO_LOOPS = [pytest.param(("asyncio", {}), id="asyncio")]
try:
    import uvloop
except ImportError:  # pragma: no cover - uvloop is a test dependency
    pass
else:
    ASYNCIO_LOOPS.append(
        pytest.param(("asyncio", {"loop_factory": uvloop.new_event_loop}), id="uvloop")
    )

pytestmark = [
    pytest.mark.anyio,
    # no Trio: it has no native cancellation of a rescheduled task
    pytest.mark.parametrize("anyio_backend", ASYNCIO_LOOPS),
]


def spawn(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    return asyncio.get_running_loop().create_task(coro)


async def outcome(task: asyncio.Task[Any]) -> str:
    """Let every task run until all are blocked, then name how ``task`` ended.

    A task still waiting is a failure (reported, not waited for forever)."""
    await wait_all_tasks_blocked()
    if not task.done():
        task.cancel()
        await asyncio.wait([task])
        pytest.fail(f"{task!r} is still waiting")
    if task.cancelled():
        return "cancelled"
    if task.exception() is not None:
        return type(task.exception()).__name__
    return "returned"


async def test_native_cancel_racing_a_send_hand_off_delivers_the_message_once() -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    sender = spawn(mailbox.send("moved in"))
    await wait_all_tasks_blocked()
    assert mailbox.receive_nowait() == "queued"  # moves "moved in", wakes sender
    sender.cancel()  # lands before the sender resumes
    assert await outcome(sender) == "cancelled"
    stats = mailbox.statistics()
    assert stats.units_in_use == stats.queued_messages == 1
    assert stats.waiting_senders == 0
    # delivered exactly once: not lost, and not queued a second time
    assert mailbox.take_all() == ["moved in"]


async def test_native_cancel_of_a_parked_sender_passes_the_released_unit_on() -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    first = spawn(mailbox.send("first"))
    await wait_all_tasks_blocked()
    second = spawn(mailbox.send("second"))
    await wait_all_tasks_blocked()
    first.cancel()  # parked, not yet resumed ...
    assert mailbox.receive_nowait() == "queued"  # ... when the unit is released
    assert await outcome(first) == "cancelled"
    assert await outcome(second) == "returned"
    stats = mailbox.statistics()
    assert stats.units_in_use == stats.queued_messages == 1
    assert stats.waiting_senders == 0
    assert mailbox.take_all() == ["second"]


async def test_native_cancel_racing_a_batch_hand_off_loses_nothing() -> None:
    mailbox: Mailbox[int] = Mailbox(3)
    for i in range(3):
        mailbox.try_send(i)
    senders = []
    for i in range(3, 8):
        senders.append(spawn(mailbox.send(i)))
        await wait_all_tasks_blocked()
    senders[4].cancel()  # parked: its message must not move in
    assert mailbox.receive_nowait_many(3) == [0, 1, 2]  # moves 3, 4, 5 in
    senders[1].cancel()  # moved in, not resumed: its message stays
    outcomes = [await outcome(senders[i]) for i in (0, 1, 2, 4)]
    assert outcomes == ["returned", "cancelled", "returned", "cancelled"]
    stats = mailbox.statistics()
    assert stats.units_in_use == stats.queued_messages == 3
    assert stats.waiting_senders == 1  # 6 still waits: three units were released
    assert mailbox.take_all() == [3, 4, 5]  # 4 once, although its sender was cancelled
    assert await outcome(senders[3]) == "returned"
    assert mailbox.take_all() == [6]  # 7 never moved in


async def test_native_cancel_racing_close_enqueues_nothing() -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    withdrawn = spawn(mailbox.send("withdrawn"))
    await wait_all_tasks_blocked()
    mailbox.close()  # wakes the sender with its message not enqueued
    withdrawn.cancel()
    assert await outcome(withdrawn) == "cancelled"
    assert mailbox.take_all() == ["queued"]
    assert mailbox.statistics().units_in_use == 0


async def test_a_sender_withdrawn_by_close_gets_mailbox_closed() -> None:
    mailbox: Mailbox[str] = Mailbox(1)
    mailbox.try_send("queued")
    withdrawn = spawn(mailbox.send("withdrawn"))
    await wait_all_tasks_blocked()
    mailbox.close()
    assert await outcome(withdrawn) == MailboxClosed.__name__


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_native_cancel_racing_a_receive_wakeup_takes_nothing(many: bool) -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    consumer = spawn(mailbox.receive_many(4) if many else mailbox.receive())
    await wait_all_tasks_blocked()
    mailbox.try_send(1)  # wakes the consumer ...
    consumer.cancel()  # ... which is cancelled before it resumes
    assert await outcome(consumer) == "cancelled"
    assert mailbox.statistics().wakeups == 1
    stats = mailbox.statistics()
    assert stats.units_in_use == stats.queued_messages == 1
    # nothing lost: the next receive gets it, and only once
    assert await mailbox.receive() == 1
    assert len(mailbox) == 0


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_native_cancel_of_a_parked_consumer_leaves_the_next_item_queued(
    many: bool,
) -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    consumer = spawn(mailbox.receive_many(4) if many else mailbox.receive())
    await wait_all_tasks_blocked()
    consumer.cancel()  # parked, not yet resumed ...
    mailbox.try_send(1)  # ... when an item arrives: no wakeup for a dead waiter
    assert await outcome(consumer) == "cancelled"
    assert mailbox.statistics().wakeups == 0
    assert mailbox.receive_nowait() == 1


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_native_cancel_at_the_receive_checkpoint_takes_nothing(
    many: bool,
) -> None:
    mailbox: Mailbox[int] = Mailbox(2)
    mailbox.try_send(1)
    mailbox.try_send(2)
    consumer = spawn(mailbox.receive_many(4) if many else mailbox.receive())
    await checkpoint()  # the consumer ran up to its checkpoint and yielded
    assert not consumer.done()
    consumer.cancel()
    assert await outcome(consumer) == "cancelled"
    assert mailbox.take_all() == [1, 2]


@pytest.mark.parametrize("many", [False, True], ids=["receive", "receive_many"])
async def test_a_natively_cancelled_consumer_can_receive_again(many: bool) -> None:
    # The cancelled waiter left the consumer slot: no "one consumer" error.
    mailbox: Mailbox[int] = Mailbox()
    consumer = spawn(mailbox.receive_many(4) if many else mailbox.receive())
    await wait_all_tasks_blocked()
    consumer.cancel()
    assert await outcome(consumer) == "cancelled"
    again = spawn(mailbox.receive_many(4) if many else mailbox.receive())
    await wait_all_tasks_blocked()
    mailbox.try_send(7)
    assert await outcome(again) == "returned"
    assert again.result() == ([7] if many else 7)
