"""Batch receives (``receive_many`` / ``receive_nowait_many``), batch hand-off to a
waiting ``receive_many`` and coalesced wakeups, counted from statistics."""

from __future__ import annotations

import math

import pytest
from anyio import ClosedResourceError, EndOfStream, WouldBlock

from actors.channel import create_memory_object_stream

from ._support import Outcome, start, task_group, wait_all_blocked

pytestmark = pytest.mark.anyio


async def test_receive_nowait_many_returns_up_to_limit_buffered_items_in_order(
) -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        for i in range(10):
            tx.send_nowait(i)
        assert rx.receive_nowait_many(4) == [0, 1, 2, 3]
        assert rx.receive_nowait_many(1) == [4]
        assert rx.receive_nowait_many(100) == [5, 6, 7, 8, 9]
        with pytest.raises(WouldBlock):
            rx.receive_nowait_many(100)


async def test_receive_nowait_many_after_the_last_sender_closed_raises_end_of_stream(
) -> None:
    tx, rx = create_memory_object_stream[int](4)
    with rx:
        tx.send_nowait(1)
        tx.close()
        assert rx.receive_nowait_many(4) == [1]
        with pytest.raises(EndOfStream):
            rx.receive_nowait_many(4)
        with pytest.raises(EndOfStream):
            await rx.receive_many(4)


async def test_receive_many_returns_what_is_buffered_without_waiting_for_more(
) -> None:
    tx, rx = create_memory_object_stream[int](8)
    with tx, rx:
        tx.send_nowait(1)
        tx.send_nowait(2)
        assert await rx.receive_many(64) == [1, 2]


async def test_receive_many_waits_for_the_first_item() -> None:
    tx, rx = create_memory_object_stream[int](8)
    with tx, rx:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(4))
            await wait_all_blocked()
            assert not batch.done
            assert rx.statistics().tasks_waiting_receive == 1
            tx.send_nowait(7)
            await wait_all_blocked()
        assert batch.value == [7]


async def test_a_waiting_receive_many_is_handed_up_to_limit_items_at_once() -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(5))
            await wait_all_blocked()
            for i in range(7):
                tx.send_nowait(i)
            # Five were handed to the waiting receiver, two went to the buffer.
            assert tx.statistics().current_buffer_used == 2
            await wait_all_blocked()
        assert batch.value == [0, 1, 2, 3, 4]
        assert rx.receive_nowait_many(10) == [5, 6]


async def test_a_burst_of_eight_wakes_exactly_one_of_eight_idle_batch_consumers(
) -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            consumers = [start(tg, lambda: rx.receive_many(64)) for _ in range(8)]
            await wait_all_blocked()
            assert rx.statistics().tasks_waiting_receive == 8
            before = rx.statistics().receive_wakeups
            for i in range(8):
                tx.send_nowait(i)
            assert rx.statistics().receive_wakeups - before == 1
            # The woken one (not yet running, with room left) no longer counts
            # as waiting, as in anyio once a receiver has been handed an item.
            assert rx.statistics().tasks_waiting_receive == 7
            await wait_all_blocked()
            assert rx.statistics().receive_wakeups - before == 1
            assert rx.statistics().tasks_waiting_receive == 7
            woken = [c for c in consumers if c.done]
            assert len(woken) == 1
            assert woken[0].value == list(range(8))
            tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("limit", "burst", "wakeups"),
    [(1, 3, 3), (2, 8, 4), (2, 7, 4), (3, 8, 3), (64, 1, 1), (64, 200, 4)],
)
async def test_a_burst_wakes_one_receiver_per_batch_it_fills(
    limit: int, burst: int, wakeups: int
) -> None:
    # ceil(burst / limit) receivers, and never more than are waiting.
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            consumers = [start(tg, lambda: rx.receive_many(limit)) for _ in range(4)]
            await wait_all_blocked()
            for i in range(burst):
                tx.send_nowait(i)
            assert rx.statistics().receive_wakeups == wakeups
            await wait_all_blocked()
            tg.cancel_scope.cancel()
        received = [c.value for c in consumers if c.ok]
        assert len(received) == wakeups
        assert all(0 < len(batch) <= limit for batch in received)
        flat = sorted(i for batch in received for i in batch)
        assert flat == list(range(min(burst, 4 * limit)))


async def test_a_send_wakes_another_receiver_only_when_the_woken_ones_are_full(
) -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            first = start(tg, lambda: rx.receive_many(3))
            await wait_all_blocked()
            second = start(tg, lambda: rx.receive_many(3))
            await wait_all_blocked()
            tx.send_nowait(0)
            tx.send_nowait(1)
            tx.send_nowait(2)
            assert rx.statistics().receive_wakeups == 1  # first has room left
            tx.send_nowait(3)  # first is full: now wake the second
            assert rx.statistics().receive_wakeups == 2
            await wait_all_blocked()
        assert first.value == [0, 1, 2]
        assert second.value == [3]


async def test_a_single_item_receiver_is_woken_once_per_item() -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            consumers: list[Outcome] = []
            for _ in range(3):
                consumers.append(start(tg, rx.receive))
                await wait_all_blocked()
            tx.send_nowait(0)
            tx.send_nowait(1)
            assert rx.statistics().receive_wakeups == 2
            await wait_all_blocked()
            assert [c.value for c in consumers[:2]] == [0, 1]
            assert rx.statistics().tasks_waiting_receive == 1
            tg.cancel_scope.cancel()


async def test_woken_batch_receivers_are_topped_up_in_arrival_order() -> None:
    # Mixed limits: items fill the oldest receiver first, then the next one.
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        async with task_group() as tg:
            one = start(tg, rx.receive)
            await wait_all_blocked()
            two = start(tg, lambda: rx.receive_many(2))
            await wait_all_blocked()
            many = start(tg, lambda: rx.receive_many(64))
            await wait_all_blocked()
            for i in range(6):
                tx.send_nowait(i)
            assert rx.statistics().receive_wakeups == 3
            await wait_all_blocked()
        assert one.value == 0
        assert two.value == [1, 2]
        assert many.value == [3, 4, 5]


async def test_receive_many_moves_waiting_senders_in_within_the_same_step() -> None:
    tx, rx = create_memory_object_stream[int](2)
    with tx, rx:
        tx.send_nowait(0)
        tx.send_nowait(1)
        async with task_group() as tg:
            senders: list[Outcome] = []
            for i in range(2, 5):
                senders.append(start(tg, lambda i=i: tx.send(i)))
                await wait_all_blocked()
            assert rx.receive_nowait_many(2) == [0, 1]
            stats = rx.statistics()
            assert stats.current_buffer_used == 2  # 2 and 3 moved in
            assert stats.tasks_waiting_send == 1
            assert stats.send_wakeups == 2
            assert await rx.receive_many(10) == [2, 3, 4]
            await wait_all_blocked()
        assert all(s.ok for s in senders)


async def test_receive_many_on_a_rendezvous_stream_takes_from_senders_in_order(
) -> None:
    tx, rx = create_memory_object_stream[int](0)
    with tx, rx:
        async with task_group() as tg:
            senders: list[Outcome] = []
            for i in range(5):
                senders.append(start(tg, lambda i=i: tx.send(i)))
                await wait_all_blocked()
            assert await rx.receive_many(3) == [0, 1, 2]
            assert rx.receive_nowait_many(3) == [3, 4]
            await wait_all_blocked()
        assert all(s.ok for s in senders)
        assert rx.statistics().send_wakeups == 5


async def test_a_partly_filled_batch_is_returned_when_the_last_sender_closes(
) -> None:
    tx, rx = create_memory_object_stream[int](0)
    with rx:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(8))
            await wait_all_blocked()
            tx.send_nowait(1)
            tx.send_nowait(2)
            tx.close()
            await wait_all_blocked()
        assert batch.value == [1, 2]
        with pytest.raises(EndOfStream):
            await rx.receive_many(8)


async def test_a_waiting_batch_receiver_sees_end_of_stream_when_senders_close(
) -> None:
    tx, rx = create_memory_object_stream[int](0)
    with rx:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(8))
            await wait_all_blocked()
            tx.close()
            await wait_all_blocked()
        assert isinstance(batch.error, EndOfStream)


async def test_a_woken_batch_receiver_keeps_its_items_when_its_clone_closes(
) -> None:
    # Trio's rule: a completed hand-off is not undone by close.
    tx, rx = create_memory_object_stream[int](math.inf)
    other = rx.clone()
    with tx, other:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(8))
            await wait_all_blocked()
            tx.send_nowait(1)
            rx.close()
            tx.send_nowait(2)  # not handed to the closed clone's receiver
            await wait_all_blocked()
        assert batch.value == [1]
        assert other.receive_nowait() == 2


async def test_closing_a_clone_wakes_its_waiting_batch_receivers_with_closed(
) -> None:
    tx, rx = create_memory_object_stream[int](0)
    other = rx.clone()
    with tx, other:
        async with task_group() as tg:
            batch = start(tg, lambda: rx.receive_many(8))
            await wait_all_blocked()
            rx.close()
            await wait_all_blocked()
        assert isinstance(batch.error, ClosedResourceError)
        assert other.statistics().tasks_waiting_receive == 0


async def test_receive_wakeups_count_hand_offs_not_buffered_receives() -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with tx, rx:
        for i in range(5):
            tx.send_nowait(i)
        await rx.receive_many(3)
        await rx.receive()
        rx.receive_nowait()
        assert rx.statistics().receive_wakeups == 0
        assert rx.statistics().send_wakeups == 0


async def test_async_iteration_and_batches_share_one_fifo() -> None:
    tx, rx = create_memory_object_stream[int](math.inf)
    with rx:
        with tx:
            for i in range(10):
                tx.send_nowait(i)
        first = await rx.receive_many(3)
        rest = [item async for item in rx]
    assert first + rest == list(range(10))
