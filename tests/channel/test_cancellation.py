"""Cancellation: anyio cancel scopes, deadlines, shielding, and native asyncio
``Task.cancel()`` racing a hand-off. Nothing is ever lost, reordered or
duplicated; a cancelled operation leaves the stream as it found it.
"""

from __future__ import annotations

import math

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from anyio import EndOfStream, WouldBlock

from actors.channel import MemoryObjectReceiveStream, create_memory_object_stream

from ._support import Outcome, on_asyncio, start, task_group, wait_all_blocked
from .conftest import StreamFactory

pytestmark = pytest.mark.anyio


def needs_native_cancel() -> None:
    if not on_asyncio():
        pytest.skip("Task.cancel() exists on asyncio only")


# -- an operation that completes at once is still a checkpoint ------------


async def test_a_send_that_would_complete_at_once_raises_in_a_cancelled_scope(
    create: StreamFactory,
) -> None:
    tx, rx = create(math.inf)
    with tx, rx:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await tx.send("never")
        assert scope.cancelled_caught
        assert tx.statistics().current_buffer_used == 0


async def test_a_receive_that_would_complete_at_once_raises_in_a_cancelled_scope(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx:
        tx.send_nowait("kept")
        with anyio.CancelScope() as scope:
            scope.cancel()
            await rx.receive()
        assert scope.cancelled_caught
        assert rx.receive_nowait() == "kept"


async def test_a_receive_many_that_would_complete_at_once_raises_in_a_cancelled_scope(
) -> None:
    tx, rx = create_memory_object_stream[int](4)
    with tx, rx:
        tx.send_nowait(1)
        tx.send_nowait(2)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await rx.receive_many(8)
        assert scope.cancelled_caught
        assert rx.receive_nowait_many(8) == [1, 2]


async def test_a_send_to_a_waiting_receiver_raises_in_a_cancelled_scope(
    create: StreamFactory,
) -> None:
    # The cancelled send hands nothing over: the receiver keeps waiting.
    tx, rx = create(0)
    with tx, rx:
        async with task_group() as tg:
            waiting = start(tg, rx.receive)
            await wait_all_blocked()
            with anyio.CancelScope() as scope:
                scope.cancel()
                await tx.send("never")
            assert scope.cancelled_caught
            await wait_all_blocked()
            assert not waiting.done
            assert rx.statistics().tasks_waiting_receive == 1
            tx.send_nowait("this one")
            await wait_all_blocked()
        assert waiting.value == "this one"


async def test_a_passed_deadline_fails_an_immediate_operation_and_changes_nothing(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0):
                await tx.send("late")
        assert tx.statistics().current_buffer_used == 0
        tx.send_nowait("kept")
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0):
                await rx.receive()
        assert rx.receive_nowait() == "kept"


async def test_send_and_receive_that_complete_at_once_are_schedule_points(
    create: StreamFactory,
) -> None:
    tx, rx = create(math.inf)
    steps = 0

    async def other() -> None:
        nonlocal steps
        while True:
            steps += 1
            await anyio.lowlevel.checkpoint()

    with tx, rx:
        async with task_group() as tg:
            tg.start_soon(other)
            await anyio.lowlevel.checkpoint()
            before = steps
            for i in range(4):
                await tx.send(i)  # never waits: the buffer is unbounded
            assert steps > before  # ... yet the other task ran meanwhile
            before = steps
            for _ in range(4):
                await rx.receive()  # never waits: items are buffered
            assert steps > before
            tg.cancel_scope.cancel()


async def test_a_batch_receive_that_completes_at_once_is_a_schedule_point() -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    steps = 0

    async def other() -> None:
        nonlocal steps
        while True:
            steps += 1
            await anyio.lowlevel.checkpoint()

    with tx, rx:
        for i in range(8):
            tx.send_nowait(i)
        async with task_group() as tg:
            tg.start_soon(other)
            await anyio.lowlevel.checkpoint()
            before = steps
            for _ in range(4):
                await rx.receive_many(2)
            assert steps > before
            tg.cancel_scope.cancel()


# -- cancelled while waiting ----------------------------------------------


async def test_a_send_cancelled_while_waiting_leaves_nothing_behind(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx:
        tx.send_nowait("first")
        async with task_group() as tg:
            scope = anyio.CancelScope()
            cancelled = start(tg, lambda: tx.send("cancelled"), scope)
            await wait_all_blocked()
            later = start(tg, lambda: tx.send("later"))
            await wait_all_blocked()
            assert tx.statistics().tasks_waiting_send == 2
            scope.cancel()
            await wait_all_blocked()
            assert cancelled.cancelled
            assert tx.statistics().tasks_waiting_send == 1
            assert [await rx.receive(), await rx.receive()] == ["first", "later"]
        assert later.ok
        with pytest.raises(WouldBlock):
            rx.receive_nowait()


async def test_a_receive_cancelled_while_waiting_takes_nothing(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    with tx, rx:
        async with task_group() as tg:
            scope = anyio.CancelScope()
            cancelled = start(tg, rx.receive, scope)
            await wait_all_blocked()
            next_in_line = start(tg, rx.receive)
            await wait_all_blocked()
            scope.cancel()
            await wait_all_blocked()
            assert cancelled.cancelled
            assert rx.statistics().tasks_waiting_receive == 1
            tx.send_nowait("item")
            await wait_all_blocked()
        assert next_in_line.value == "item"


async def test_a_send_right_after_a_cancel_skips_the_cancelled_receiver(
    create: StreamFactory,
) -> None:
    # Cancel and send in one step, before the cancelled task gets to run: the
    # item must go to the next receiver, not into the cancelled one.
    tx, rx = create(0)
    with tx, rx:
        async with task_group() as tg:
            scope = anyio.CancelScope()
            cancelled = start(tg, rx.receive, scope)
            await wait_all_blocked()
            next_in_line = start(tg, rx.receive)
            await wait_all_blocked()
            scope.cancel()
            tx.send_nowait("item")
            await wait_all_blocked()
        assert cancelled.cancelled
        assert next_in_line.value == "item"


async def test_a_receive_right_after_a_cancel_skips_the_cancelled_sender() -> None:
    # anyio's own streams differ here: they hand the cancelled sender's item to
    # the receiver although that send raises a cancellation.
    tx, rx = create_memory_object_stream[str](0)
    with tx, rx:
        async with task_group() as tg:
            scope = anyio.CancelScope()
            cancelled = start(tg, lambda: tx.send("cancelled"), scope)
            await wait_all_blocked()
            kept = start(tg, lambda: tx.send("kept"))
            await wait_all_blocked()
            scope.cancel()
            assert rx.receive_nowait() == "kept"
            await wait_all_blocked()
        assert cancelled.cancelled
        assert kept.ok


async def test_a_cancel_scope_landing_after_a_hand_off_does_not_lose_the_item(
    create: StreamFactory,
) -> None:
    # The receiver was handed the item before its scope was cancelled: it
    # returns the item (the hand-off completed) and nothing is lost.
    tx, rx = create(0)
    with tx, rx:
        async with task_group() as tg:
            scope = anyio.CancelScope()
            receiver = start(tg, rx.receive, scope)
            await wait_all_blocked()
            tx.send_nowait("item")
            scope.cancel()
            await wait_all_blocked()
        assert receiver.value == "item"
        assert receiver.ok


async def test_a_cancel_scope_landing_after_a_senders_item_moved_in_lets_it_return(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    with tx, rx:
        async with task_group() as tg:
            scope = anyio.CancelScope()
            sender = start(tg, lambda: tx.send("item"), scope)
            await wait_all_blocked()
            assert rx.receive_nowait() == "item"
            scope.cancel()
            await wait_all_blocked()
        assert sender.done
        assert sender.ok  # the item was sent: the send says so


async def test_fail_after_on_a_waiting_receive_times_out_and_takes_nothing(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    with tx, rx:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0.01):
                await rx.receive()
        assert rx.statistics().tasks_waiting_receive == 0
        async with task_group() as tg:
            got = start(tg, rx.receive)
            await wait_all_blocked()
            tx.send_nowait("after the timeout")
            await wait_all_blocked()
        assert got.value == "after the timeout"


async def test_move_on_after_on_a_waiting_send_leaves_nothing_behind(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    with tx, rx:
        with anyio.move_on_after(0.01) as scope:
            await tx.send("never")
        assert scope.cancelled_caught
        assert tx.statistics().tasks_waiting_send == 0
        with pytest.raises(WouldBlock):
            rx.receive_nowait()


async def test_a_shielded_receive_ignores_an_outer_cancellation(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    got: list[str] = []

    async def receive_shielded(outer: anyio.CancelScope) -> None:
        with outer:
            with anyio.CancelScope(shield=True):
                got.append(await rx.receive())
            await anyio.lowlevel.checkpoint()  # the outer cancel lands here
            got.append("not reached")

    with tx, rx:
        async with task_group() as tg:
            outer = anyio.CancelScope()
            tg.start_soon(receive_shielded, outer)
            await wait_all_blocked()
            outer.cancel()
            await wait_all_blocked()
            assert rx.statistics().tasks_waiting_receive == 1
            tx.send_nowait("shielded")
        assert outer.cancelled_caught
    assert got == ["shielded"]


async def test_a_shielded_immediate_send_ignores_an_outer_cancellation(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx:
        with anyio.CancelScope() as outer:
            outer.cancel()
            with anyio.CancelScope(shield=True):
                await tx.send("shielded")
        assert rx.receive_nowait() == "shielded"


# -- native asyncio Task.cancel() racing a hand-off -----------------------


async def test_native_cancel_after_a_hand_off_gives_the_item_to_the_next_receiver(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](0)
    with tx, rx:
        async with task_group() as tg:
            first = start(tg, rx.receive)
            await wait_all_blocked()
            second = start(tg, rx.receive)
            await wait_all_blocked()
            tx.send_nowait("item")  # handed to `first`, which has not run yet
            first.cancel_natively()
            await wait_all_blocked()
        assert first.cancelled
        assert second.value == "item"
        assert rx.statistics().current_buffer_used == 0


async def test_native_cancel_after_a_hand_off_puts_the_item_back_at_the_head(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](math.inf)
    with tx, rx:
        async with task_group() as tg:
            receiver = start(tg, rx.receive)
            await wait_all_blocked()
            tx.send_nowait("a")  # handed over
            tx.send_nowait("b")  # buffered
            tx.send_nowait("c")
            receiver.cancel_natively()
            await wait_all_blocked()
        assert receiver.cancelled
        assert rx.receive_nowait_many(10) == ["a", "b", "c"]


async def test_native_cancel_of_a_batch_receiver_gives_back_every_item_in_order(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(4))
            await wait_all_blocked()
            behind = start(tg, lambda: rx.receive_many(2))
            await wait_all_blocked()
            for i in range(6):
                tx.send_nowait(i)  # 0..3 to `batch`, 4..5 to `behind`
            batch.cancel_natively()
            await wait_all_blocked()
        assert batch.cancelled
        assert behind.value == [4, 5]
        assert rx.receive_nowait_many(10) == [0, 1, 2, 3]


async def test_native_cancel_of_a_partly_filled_batch_receiver_feeds_the_next_one(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(8))
            await wait_all_blocked()
            behind = start(tg, lambda: rx.receive_many(2))
            await wait_all_blocked()
            for i in range(3):
                tx.send_nowait(i)  # all three top up `batch`
            batch.cancel_natively()
            await wait_all_blocked()
        assert behind.value == [0, 1]
        assert rx.receive_nowait_many(10) == [2]


async def test_native_cancel_of_a_waiting_receiver_takes_nothing() -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](0)
    with tx, rx:
        async with task_group() as tg:
            cancelled = start(tg, rx.receive)
            await wait_all_blocked()
            next_in_line = start(tg, rx.receive)
            await wait_all_blocked()
            cancelled.cancel_natively()
            tx.send_nowait("item")  # the cancelled receiver has not run yet
            await wait_all_blocked()
        assert cancelled.cancelled
        assert next_in_line.value == "item"


async def test_native_cancel_of_a_waiting_sender_leaves_nothing_behind() -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](0)
    with tx, rx:
        async with task_group() as tg:
            cancelled = start(tg, lambda: tx.send("cancelled"))
            await wait_all_blocked()
            kept = start(tg, lambda: tx.send("kept"))
            await wait_all_blocked()
            cancelled.cancel_natively()
            assert rx.receive_nowait() == "kept"
            await wait_all_blocked()
            with pytest.raises(WouldBlock):
                rx.receive_nowait()
        assert cancelled.cancelled
        assert kept.ok
        assert tx.statistics().tasks_waiting_send == 0


async def test_native_cancel_after_a_senders_item_was_placed_keeps_it_sent_once(
) -> None:
    # Documented: the item stays delivered (it may already be in a receiver's
    # hands) and the cancellation still propagates. It is never duplicated.
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](1)
    with tx, rx:
        tx.send_nowait("first")
        async with task_group() as tg:
            sender = start(tg, lambda: tx.send("second"))
            await wait_all_blocked()
            assert rx.receive_nowait() == "first"  # "second" moves in
            sender.cancel_natively()
            await wait_all_blocked()
        assert sender.cancelled
        assert rx.receive_nowait_many(10) == ["second"]
        with pytest.raises(WouldBlock):
            rx.receive_nowait()


async def test_native_cancel_before_an_immediate_send_takes_effect_leaves_nothing(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](math.inf)
    reached = anyio.Event()
    go = anyio.Event()

    async def send_when_told() -> None:
        await go.wait()
        reached.set()
        await tx.send("never")  # the cancel lands on its checkpoint

    with tx, rx:
        async with task_group() as tg:
            sender = start(tg, send_when_told)
            await wait_all_blocked()
            go.set()
            while not reached.is_set():
                await anyio.lowlevel.checkpoint()
            assert not sender.done  # parked on the send's own checkpoint
            sender.cancel_natively()
            await wait_all_blocked()
        assert sender.cancelled
        assert tx.statistics().current_buffer_used == 0


async def test_end_of_stream_is_not_raised_while_a_given_back_item_is_buffered(
) -> None:
    # `first` is handed the item, then the last sender closes (waking `second`
    # empty-handed), then `first` is cancelled natively and gives the item
    # back. `second` must return that item, not raise EndOfStream while it sits
    # in the buffer (an `async for` consumer would stop and strand it).
    needs_native_cancel()
    tx, rx = create_memory_object_stream[str](0)
    with rx:
        async with task_group() as tg:
            first = start(tg, rx.receive)
            await wait_all_blocked()
            second = start(tg, rx.receive)
            await wait_all_blocked()
            tx.send_nowait("item")
            tx.close()
            first.cancel_natively()
            await wait_all_blocked()
        assert first.cancelled
        assert second.value == "item"
        with pytest.raises(EndOfStream):
            rx.receive_nowait()


async def test_end_of_stream_is_not_raised_to_a_batch_receiver_given_items_back(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[int](0)
    with rx:
        async with task_group() as tg:
            first = start(tg, lambda: rx.receive_many(4))
            await wait_all_blocked()
            second = start(tg, lambda: rx.receive_many(4))
            await wait_all_blocked()
            tx.send_nowait(1)
            tx.send_nowait(2)
            tx.close()
            first.cancel_natively()
            await wait_all_blocked()
        assert second.value == [1, 2]


async def test_items_given_back_count_toward_peak_buffer_used() -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[int](0)
    with tx, rx:
        async with task_group() as tg:
            receiver = start(tg, lambda: rx.receive_many(3))
            await wait_all_blocked()
            for i in range(3):
                tx.send_nowait(i)
            receiver.cancel_natively()
            await wait_all_blocked()
        stats = rx.statistics()
        assert stats.current_buffer_used == 3
        assert stats.peak_buffer_used >= stats.current_buffer_used
        assert rx.receive_nowait_many(5) == [0, 1, 2]


async def test_a_closed_clones_receiver_cancelled_after_a_hand_off_gives_back(
) -> None:
    needs_native_cancel()
    tx, rx = create_memory_object_stream[int](math.inf)
    other = rx.clone()
    with tx, other:
        async with task_group() as tg:
            receiver = start(tg, lambda: rx.receive_many(4))
            await wait_all_blocked()
            tx.send_nowait(1)
            rx.close()  # a completed hand-off is not undone by close ...
            tx.send_nowait(2)  # ... and the closed clone is fed no more
            receiver.cancel_natively()  # ... but a cancel gives it back
            await wait_all_blocked()
        assert receiver.cancelled
        assert other.receive_nowait_many(5) == [1, 2]


# -- give-backs keep FIFO, oldest item first, across receivers -------------
#
# On asyncio these cancel natively after the hand-off, so the items come back.
# On Trio a cancel can no longer land once a task was rescheduled: the same
# scripts cancel by scope there and the receivers return their items. Either
# way, what the receivers returned followed by what is left buffered is the
# send order.


def cancel_after_hand_off(outcome: Outcome, scope: anyio.CancelScope) -> None:
    if on_asyncio():
        outcome.cancel_natively()
    else:
        scope.cancel()  # too late on Trio: the receive returns its item


def receive_in(
    tg: anyio.abc.TaskGroup, rx: MemoryObjectReceiveStream[int], limit: int = 1
) -> tuple[Outcome, anyio.CancelScope]:
    scope = anyio.CancelScope()
    op = rx.receive if limit == 1 else (lambda: rx.receive_many(limit))
    return start(tg, op, scope), scope


def buffered(rx: MemoryObjectReceiveStream[int]) -> list[int]:
    try:
        return rx.receive_nowait_many(100)
    except WouldBlock:
        return []


def returned(*outcomes: Outcome) -> list[int]:
    values: list[int] = []
    for outcome in outcomes:
        if outcome.ok:
            value = outcome.value
            values.extend(value if isinstance(value, list) else [value])
    return values


@pytest.mark.parametrize("second_first", [False, True], ids=["in_order", "reversed"])
async def test_two_receivers_cancelled_after_hand_off_give_back_oldest_first(
    second_first: bool,
) -> None:
    # Regression: each give-back went to the head of the buffer on its own, so
    # the second receiver's item landed in front of the first one's.
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            first, first_scope = receive_in(tg, rx)
            await wait_all_blocked()
            second, second_scope = receive_in(tg, rx)
            await wait_all_blocked()
            for i in range(4):
                tx.send_nowait(i)  # 0 to `first`, 1 to `second`, 2 and 3 buffered
            cancels = [(first, first_scope), (second, second_scope)]
            for outcome, scope in reversed(cancels) if second_first else cancels:
                cancel_after_hand_off(outcome, scope)
            await wait_all_blocked()
        if on_asyncio():
            assert first.cancelled and second.cancelled
        assert returned(first, second) + buffered(rx) == [0, 1, 2, 3]


async def test_give_backs_fed_to_later_receivers_keep_their_place(
) -> None:
    # `first` and `second` give back 0 and 1, which feed `third` and `fourth`
    # (woken after them); those are cancelled too and give back in turn: the
    # buffer is 0, 1 whatever order the give-backs come in.
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            receivers = []
            for _ in range(4):
                receivers.append(receive_in(tg, rx))
                await wait_all_blocked()
            (first, first_scope), (second, second_scope) = receivers[:2]
            (third, third_scope), (fourth, fourth_scope) = receivers[2:]
            tx.send_nowait(0)
            tx.send_nowait(1)
            cancel_after_hand_off(first, first_scope)
            cancel_after_hand_off(second, second_scope)
            # One schedule point: `first` and `second` run (and give back to
            # `third` and `fourth` on asyncio), the others not yet.
            await anyio.lowlevel.checkpoint()
            cancel_after_hand_off(third, third_scope)
            cancel_after_hand_off(fourth, fourth_scope)
            await wait_all_blocked()
            tx.send_nowait(2)
        if on_asyncio():
            assert not any(o.ok for o in (first, second, third, fourth))
        everything = returned(first, second, third, fourth)
        assert everything + buffered(rx) == [0, 1, 2]


async def test_a_give_back_goes_ahead_of_a_batch_receivers_own_items() -> None:
    # `batch` is woken with 1 and still being topped up when `first` gives
    # back 0: it returns [0, 1], never [1, 0].
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            first, first_scope = receive_in(tg, rx)
            await wait_all_blocked()
            batch, _ = receive_in(tg, rx, limit=3)
            await wait_all_blocked()
            tx.send_nowait(0)  # to `first`
            tx.send_nowait(1)  # to `batch`, which waits for up to two more
            cancel_after_hand_off(first, first_scope)
            await wait_all_blocked()
        if on_asyncio():
            assert first.cancelled
            assert batch.value == [0, 1]
        assert returned(first, batch) == [0, 1]


async def test_a_give_back_fills_a_batch_receiver_and_buffers_the_youngest(
) -> None:
    # Three items come back to a batch receiver holding one with room for
    # two: it takes the two oldest, and the rest waits in send order.
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            first, first_scope = receive_in(tg, rx, limit=3)
            await wait_all_blocked()
            batch, _ = receive_in(tg, rx, limit=3)
            await wait_all_blocked()
            for i in range(4):
                tx.send_nowait(i)  # 0, 1, 2 to `first`; 3 to `batch`
            cancel_after_hand_off(first, first_scope)
            await wait_all_blocked()
        if on_asyncio():
            assert batch.value == [0, 1, 2]
        assert returned(first, batch) + buffered(rx) == [0, 1, 2, 3]


async def test_a_give_back_merges_into_what_is_left_of_earlier_give_backs() -> None:
    # `first` gives back 0, 1 to `third` and `fourth`; `second` gives back 2 to
    # the buffer; 3 is sent and 2 received; then `third` and `fourth` give
    # back: 0, 1 go in front of 3 (and 1 behind 0), not at the head one by one.
    needs_native_cancel()
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            first = start(tg, lambda: rx.receive_many(2))
            await wait_all_blocked()
            second, third, fourth = [], [], []
            for outcomes in (second, third, fourth):
                outcomes.append(start(tg, rx.receive))
                await wait_all_blocked()
            for i in range(3):
                tx.send_nowait(i)  # 0, 1 to `first`; 2 to `second`
            first.cancel_natively()
            second[0].cancel_natively()
            await anyio.lowlevel.checkpoint()  # both give back; 0, 1 feed on
            tx.send_nowait(3)
            assert rx.receive_nowait() == 2
            third[0].cancel_natively()
            fourth[0].cancel_natively()
            await wait_all_blocked()
        assert not any(o.ok for o in (first, second[0], third[0], fourth[0]))
        assert rx.receive_nowait_many(10) == [0, 1, 3]


# -- an operation started in an already-cancelled scope -------------------

# anyio delivers a scope's cancellation to an asyncio task from a loop callback.
# A call that parked at once (nothing ready) could be handed an item by a task
# running before that callback and then return inside a cancelled scope; the
# streams yield first, as anyio's own do, so the cancellation lands first.
async def test_a_receive_started_in_a_cancelled_scope_raises_though_an_item_arrives(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    go = anyio.Event()

    async def send_when_told() -> None:
        await go.wait()
        tx.send_nowait("item")

    with tx, rx:
        async with task_group() as tg:
            tg.start_soon(send_when_told)
            await wait_all_blocked()
            with anyio.CancelScope() as scope:
                go.set()  # the sender runs before the cancellation is delivered
                scope.cancel()
                await rx.receive()  # nothing ready yet
            await wait_all_blocked()
        assert scope.cancelled_caught
        assert rx.receive_nowait() == "item"


async def test_a_send_started_in_a_cancelled_scope_raises_though_room_appears(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    go = anyio.Event()
    taken: list[str] = []

    async def receive_when_told() -> None:
        await go.wait()
        taken.append(rx.receive_nowait())

    with tx, rx:
        tx.send_nowait("first")
        async with task_group() as tg:
            tg.start_soon(receive_when_told)
            await wait_all_blocked()
            with anyio.CancelScope() as scope:
                go.set()  # the receiver runs before the cancellation is delivered
                scope.cancel()
                await tx.send("cancelled")  # the buffer is full yet
            await wait_all_blocked()
        assert taken == ["first"]
        assert scope.cancelled_caught
        with pytest.raises(WouldBlock):
            rx.receive_nowait()  # "cancelled" was not sent
