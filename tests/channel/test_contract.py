"""The channel core's contract (anyio's memory object streams, and ours on top),
one test per point.

Tests taking the ``create`` fixture run against our streams and, as a reference,
against ``anyio.create_memory_object_stream``: where both pass, our behaviour is
anyio's. Tests of what anyio lacks (batch receives, statistics extras) use ours
only.
"""

from __future__ import annotations

import gc
import math
import pathlib
import warnings
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.streams.memory
import pytest
from anyio import (
    BrokenResourceError,
    ClosedResourceError,
    EndOfStream,
    WouldBlock,
)

import actors.channel
from actors.channel import (
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    MemoryObjectStreamStatistics,
    create_memory_object_stream,
)

from ._support import start, task_group, wait_all_blocked
from .conftest import StreamFactory

pytestmark = pytest.mark.anyio


# -- creation -------------------------------------------------------------


def test_endpoints_subclass_anyios_object_stream_abcs() -> None:
    tx, rx = create_memory_object_stream[int](1)
    with tx, rx:
        assert isinstance(tx, anyio.abc.ObjectSendStream)
        assert isinstance(rx, anyio.abc.ObjectReceiveStream)
        assert isinstance(tx, MemoryObjectSendStream)
        assert isinstance(rx, MemoryObjectReceiveStream)
        assert isinstance(tx.clone(), anyio.abc.ObjectSendStream)


def test_create_returns_a_send_receive_pair_and_takes_anyios_arguments() -> None:
    pair = create_memory_object_stream[str](max_buffer_size=3)
    assert isinstance(pair, tuple)
    assert len(pair) == 2
    tx, rx = pair
    with tx, rx:
        assert tx.statistics().max_buffer_size == 3
    # Unsubscripted, and positional, as with anyio.
    tx, rx = create_memory_object_stream(5)
    with tx, rx:
        assert rx.statistics().max_buffer_size == 5


@pytest.mark.parametrize("size", [1.5, -1, -math.inf, "3", None, math.nan])
def test_a_bad_buffer_size_raises_value_error_worded_as_anyios(size: Any) -> None:
    with pytest.raises(ValueError) as anyio_error:
        anyio.create_memory_object_stream(size)
    with pytest.raises(ValueError) as our_error:
        create_memory_object_stream(size)
    assert str(our_error.value) == str(anyio_error.value)
    assert "max_buffer_size" in str(our_error.value)


@pytest.mark.parametrize("size", [0, 1, 64, math.inf, float("inf")])
def test_a_valid_buffer_size_is_reported_in_statistics(size: float) -> None:
    tx, rx = create_memory_object_stream[int](size)
    with tx, rx:
        assert tx.statistics().max_buffer_size == size


@pytest.mark.parametrize("limit", [0, -1])
async def test_a_batch_limit_below_one_raises_value_error_naming_limit(
    limit: int,
) -> None:
    tx, rx = create_memory_object_stream[int](4)
    with tx, rx:
        tx.send_nowait(1)
        with pytest.raises(ValueError, match="limit"):
            rx.receive_nowait_many(limit)
        with pytest.raises(ValueError, match="limit"):
            await rx.receive_many(limit)
        assert rx.statistics().current_buffer_used == 1  # nothing was taken


@pytest.mark.parametrize("limit", [1.0, "2", None, True])
async def test_a_batch_limit_that_is_not_an_integer_raises_type_error(
    limit: Any,
) -> None:
    tx, rx = create_memory_object_stream[int](4)
    with tx, rx:
        tx.send_nowait(1)
        with pytest.raises(TypeError, match="limit"):
            rx.receive_nowait_many(limit)
        with pytest.raises(TypeError, match="limit"):
            await rx.receive_many(limit)


# -- buffer, rendezvous, FIFO ---------------------------------------------


async def test_items_come_out_in_the_order_they_went_in(
    create: StreamFactory,
) -> None:
    tx, rx = create(math.inf)
    with tx, rx:
        for i in range(100):
            await tx.send(i)
        assert [await rx.receive() for _ in range(100)] == list(range(100))


async def test_send_nowait_into_a_full_buffer_raises_would_block_and_keeps_it(
    create: StreamFactory,
) -> None:
    tx, rx = create(2)
    with tx, rx:
        tx.send_nowait("a")
        tx.send_nowait("b")
        with pytest.raises(WouldBlock):
            tx.send_nowait("c")
        assert tx.statistics().current_buffer_used == 2
        assert [rx.receive_nowait(), rx.receive_nowait()] == ["a", "b"]


async def test_receive_nowait_on_an_empty_open_stream_raises_would_block(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx, pytest.raises(WouldBlock):
        rx.receive_nowait()


async def test_an_unbounded_stream_never_blocks_a_sender(
    create: StreamFactory,
) -> None:
    tx, rx = create(math.inf)
    with tx, rx:
        for i in range(10_000):
            tx.send_nowait(i)
        assert tx.statistics().current_buffer_used == 10_000


async def test_a_rendezvous_stream_buffers_nothing(create: StreamFactory) -> None:
    tx, rx = create(0)
    with tx, rx:
        with pytest.raises(WouldBlock):
            tx.send_nowait("x")
        assert tx.statistics().current_buffer_used == 0
        async with task_group() as tg:
            sent = start(tg, lambda: tx.send("x"))
            await wait_all_blocked()
            assert not sent.done  # no receiver yet: the sender waits
            assert tx.statistics().tasks_waiting_send == 1
            assert tx.statistics().current_buffer_used == 0
            assert rx.receive_nowait() == "x"
            await wait_all_blocked()
            assert sent.done
            assert sent.ok


async def test_send_to_a_waiting_receiver_goes_to_the_oldest_one(
    create: StreamFactory,
) -> None:
    tx, rx = create(math.inf)
    with tx, rx:
        async with task_group() as tg:
            receivers = []
            for _ in range(3):
                receivers.append(start(tg, rx.receive))
                await wait_all_blocked()  # each parks before the next arrives
            assert rx.statistics().tasks_waiting_receive == 3
            for item in ("first", "second", "third"):
                tx.send_nowait(item)
            # Handed straight to the receivers, nothing buffered.
            assert tx.statistics().current_buffer_used == 0
            await wait_all_blocked()
        assert [r.value for r in receivers] == ["first", "second", "third"]


async def test_a_waiting_senders_item_moves_in_as_soon_as_there_is_room(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx:
        tx.send_nowait("a")
        async with task_group() as tg:
            sent = start(tg, lambda: tx.send("b"))
            await wait_all_blocked()
            assert tx.statistics().tasks_waiting_send == 1
            assert rx.receive_nowait() == "a"
            # Within the same step: "b" is already in the buffer.
            stats = tx.statistics()
            assert stats.current_buffer_used == 1
            assert stats.tasks_waiting_send == 0
            await wait_all_blocked()
            assert sent.done
            assert sent.ok
        assert rx.receive_nowait() == "b"


@pytest.mark.parametrize("size", [0, 1])
async def test_waiting_senders_are_served_first_come_first_served(
    create: StreamFactory, size: int
) -> None:
    tx, rx = create(size)
    with tx, rx:
        for i in range(size):
            tx.send_nowait(f"buffered{i}")
        async with task_group() as tg:
            senders = []
            for i in range(4):
                item = f"waiting{i}"
                senders.append(start(tg, lambda item=item: tx.send(item)))
                await wait_all_blocked()
            assert tx.statistics().tasks_waiting_send == 4
            received = [await rx.receive() for _ in range(size + 4)]
        assert received == [f"buffered{i}" for i in range(size)] + [
            f"waiting{i}" for i in range(4)
        ]
        assert all(s.ok for s in senders)


async def test_receive_nowait_takes_straight_from_a_waiting_sender(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    with tx, rx:
        async with task_group() as tg:
            sent = start(tg, lambda: tx.send("x"))
            await wait_all_blocked()
            assert rx.receive_nowait() == "x"
            with pytest.raises(WouldBlock):
                rx.receive_nowait()
            await wait_all_blocked()
        assert sent.ok


async def test_a_sender_does_not_barge_past_waiting_senders(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx, rx:
        tx.send_nowait(0)
        async with task_group() as tg:
            start(tg, lambda: tx.send(1))
            await wait_all_blocked()
            with pytest.raises(WouldBlock):
                tx.send_nowait(2)
            late = start(tg, lambda: tx.send(2))
            await wait_all_blocked()
            assert tx.statistics().tasks_waiting_send == 2
            assert [await rx.receive() for _ in range(3)] == [0, 1, 2]
        assert late.ok


# -- closing --------------------------------------------------------------


async def test_receivers_drain_the_buffer_after_the_last_sender_closes(
    create: StreamFactory,
) -> None:
    tx, rx = create(5)
    with rx:
        tx.send_nowait(1)
        tx.send_nowait(2)
        tx.close()
        assert rx.receive_nowait() == 1
        assert await rx.receive() == 2
        with pytest.raises(EndOfStream):
            rx.receive_nowait()
        with pytest.raises(EndOfStream):
            await rx.receive()


async def test_closing_the_last_sender_wakes_waiting_receivers_with_end_of_stream(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    with rx:
        async with task_group() as tg:
            waiting = [start(tg, rx.receive) for _ in range(3)]
            await wait_all_blocked()
            assert rx.statistics().tasks_waiting_receive == 3
            await tx.aclose()
            await wait_all_blocked()
        assert all(isinstance(w.error, EndOfStream) for w in waiting)
        assert rx.statistics().tasks_waiting_receive == 0


async def test_receivers_see_end_of_stream_only_when_every_send_clone_closed(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    tx2 = tx.clone()
    with rx:
        async with task_group() as tg:
            waiting = start(tg, rx.receive)
            await wait_all_blocked()
            tx.close()
            await wait_all_blocked()
            assert not waiting.done
            assert rx.statistics().open_send_streams == 1
            tx2.close()
            await wait_all_blocked()
        assert isinstance(waiting.error, EndOfStream)


async def test_closing_the_last_receiver_fails_waiting_senders_with_broken_resource(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    rx2 = rx.clone()
    with tx:
        async with task_group() as tg:
            sent = start(tg, lambda: tx.send("lost?"))
            await wait_all_blocked()
            rx.close()
            await wait_all_blocked()
            assert not sent.done  # a receive clone is still open
            rx2.close()
            await wait_all_blocked()
        assert isinstance(sent.error, BrokenResourceError)
        assert tx.statistics().current_buffer_used == 0
        assert tx.statistics().tasks_waiting_send == 0


async def test_sending_when_every_receiver_is_closed_raises_broken_resource(
    create: StreamFactory,
) -> None:
    tx, rx = create(5)
    with tx:
        rx.close()
        with pytest.raises(BrokenResourceError):
            tx.send_nowait(1)
        with pytest.raises(BrokenResourceError):
            await tx.send(1)
        assert tx.statistics().current_buffer_used == 0


async def test_every_operation_on_a_closed_endpoint_raises_closed_resource(
    create: StreamFactory,
) -> None:
    tx, rx = create(5)
    tx2, rx2 = tx.clone(), rx.clone()  # keep the other ends open
    tx.send_nowait(1)
    tx.close()
    rx.close()
    with pytest.raises(ClosedResourceError):
        tx.send_nowait(2)
    with pytest.raises(ClosedResourceError):
        await tx.send(2)
    with pytest.raises(ClosedResourceError):
        tx.clone()
    with pytest.raises(ClosedResourceError):
        rx.receive_nowait()
    with pytest.raises(ClosedResourceError):
        await rx.receive()
    with pytest.raises(ClosedResourceError):
        rx.clone()
    assert rx2.receive_nowait() == 1  # nothing was sent or taken
    tx2.close()
    rx2.close()


async def test_batch_operations_on_a_closed_receiver_raise_closed_resource() -> None:
    tx, rx = create_memory_object_stream[int](5)
    rx2 = rx.clone()
    tx.send_nowait(1)
    rx.close()
    with pytest.raises(ClosedResourceError):
        rx.receive_nowait_many(3)
    with pytest.raises(ClosedResourceError):
        await rx.receive_many(3)
    assert rx2.receive_nowait_many(3) == [1]
    tx.close()
    rx2.close()


async def test_close_is_idempotent(create: StreamFactory) -> None:
    tx, rx = create(1)
    tx.clone().close()
    rx_clone = rx.clone()
    for _ in range(3):
        tx.close()
        await rx_clone.aclose()
    assert rx.statistics().open_send_streams == 0
    assert rx.statistics().open_receive_streams == 1
    rx.close()


async def test_closing_one_receive_clone_wakes_only_that_clones_waiters(
    create: StreamFactory,
) -> None:
    tx, rx_a = create(0)
    rx_b = rx_a.clone()
    with tx, rx_b:
        async with task_group() as tg:
            on_a = start(tg, rx_a.receive)
            await wait_all_blocked()
            on_b = start(tg, rx_b.receive)
            await wait_all_blocked()
            rx_a.close()
            await wait_all_blocked()
            assert isinstance(on_a.error, ClosedResourceError)
            assert not on_b.done
            assert rx_b.statistics().tasks_waiting_receive == 1
            tx.send_nowait("for b")
            await wait_all_blocked()
        assert on_b.value == "for b"


async def test_closing_one_send_clone_withdraws_only_that_clones_waiting_senders(
    create: StreamFactory,
) -> None:
    tx_a, rx = create(0)
    tx_b = tx_a.clone()
    with rx:
        async with task_group() as tg:
            on_a = start(tg, lambda: tx_a.send("from a"))
            await wait_all_blocked()
            on_b = start(tg, lambda: tx_b.send("from b"))
            await wait_all_blocked()
            tx_a.close()
            await wait_all_blocked()
            assert isinstance(on_a.error, ClosedResourceError)
            assert not on_b.done
            assert rx.statistics().tasks_waiting_send == 1
            assert rx.receive_nowait() == "from b"  # "from a" was withdrawn
            await wait_all_blocked()
            with pytest.raises(WouldBlock):
                rx.receive_nowait()
        assert on_b.ok
        tx_b.close()


async def test_clones_count_as_open_streams_until_closed(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    clones = [tx.clone(), tx.clone(), rx.clone()]
    stats = tx.statistics()
    assert (stats.open_send_streams, stats.open_receive_streams) == (3, 2)
    for clone in clones:
        clone.close()
    stats = rx.statistics()
    assert (stats.open_send_streams, stats.open_receive_streams) == (1, 1)
    tx.close()
    rx.close()
    stats = rx.statistics()
    assert (stats.open_send_streams, stats.open_receive_streams) == (0, 0)


async def test_context_managers_close_the_endpoints(create: StreamFactory) -> None:
    tx, rx = create(1)
    with tx, rx:
        pass
    with pytest.raises(ClosedResourceError):
        tx.send_nowait(1)
    with pytest.raises(ClosedResourceError):
        rx.receive_nowait()
    tx, rx = create(1)
    async with tx, rx:
        pass
    with pytest.raises(ClosedResourceError):
        tx.send_nowait(1)
    with pytest.raises(ClosedResourceError):
        rx.receive_nowait()


async def test_async_iteration_receives_until_end_of_stream(
    create: StreamFactory,
) -> None:
    tx, rx = create(0)
    received = []

    async def produce() -> None:
        async with tx:
            for i in range(5):
                await tx.send(i)

    with rx:
        async with task_group() as tg:
            tg.start_soon(produce)
            async for item in rx:
                received.append(item)
    assert received == [0, 1, 2, 3, 4]


async def test_async_iteration_on_a_closed_receiver_raises_closed_resource(
    create: StreamFactory,
) -> None:
    tx, rx = create(1)
    with tx:
        rx.close()
        with pytest.raises(ClosedResourceError):
            async for _ in rx:
                pass


# -- statistics -----------------------------------------------------------


def test_statistics_field_names_are_anyios_plus_extras() -> None:
    ours = MemoryObjectStreamStatistics._fields
    theirs = anyio.streams.memory.MemoryObjectStreamStatistics._fields
    assert ours[: len(theirs)] == theirs
    assert set(ours) - set(theirs) == {
        "peak_buffer_used",
        "receive_wakeups",
        "send_wakeups",
    }


async def test_statistics_agree_with_anyios_on_the_same_operations() -> None:
    # The same script on both implementations gives the same anyio fields.
    async def script(factory: Any) -> list[tuple[Any, ...]]:
        snapshots = []
        tx, rx = factory(2)
        snapshots.append(tuple(tx.statistics())[:6])
        tx.send_nowait(1)
        rx2 = rx.clone()
        snapshots.append(tuple(rx.statistics())[:6])
        async with task_group() as tg:
            tx.send_nowait(2)
            start(tg, lambda: tx.send(3))
            await wait_all_blocked()
            snapshots.append(tuple(rx2.statistics())[:6])
            rx.receive_nowait()
            await wait_all_blocked()
            snapshots.append(tuple(tx.statistics())[:6])
            rx.receive_nowait()
            rx.receive_nowait()
            start(tg, rx2.receive)
            await wait_all_blocked()
            snapshots.append(tuple(tx.statistics())[:6])
            tx.send_nowait(4)
            await wait_all_blocked()
        tx.close()
        snapshots.append(tuple(rx.statistics())[:6])
        rx.close()
        rx2.close()
        snapshots.append(tuple(tx.statistics())[:6])
        return snapshots

    ours = await script(actors.channel.create_memory_object_stream)
    theirs = await script(anyio.create_memory_object_stream)
    assert ours == theirs
    assert ours[2] == (2, 2, 1, 2, 1, 0)  # the script does what it says
    assert ours[4] == (0, 2, 1, 2, 0, 1)


async def test_statistics_are_the_same_from_every_endpoint() -> None:
    tx, rx = create_memory_object_stream[int](3)
    clones = [tx.clone(), rx.clone()]
    tx.send_nowait(1)
    views = [tx.statistics(), rx.statistics()] + [c.statistics() for c in clones]
    assert all(view == views[0] for view in views)
    assert views[0].current_buffer_used == 1
    for endpoint in [tx, rx, *clones]:
        endpoint.close()


async def test_peak_buffer_used_is_the_high_water_mark() -> None:
    tx, rx = create_memory_object_stream[int](10)
    with tx, rx:
        assert tx.statistics().peak_buffer_used == 0
        for i in range(7):
            tx.send_nowait(i)
        rx.receive_nowait_many(5)
        tx.send_nowait(7)
        stats = tx.statistics()
        assert stats.current_buffer_used == 3
        assert stats.peak_buffer_used == 7


async def test_peak_buffer_used_counts_items_moved_in_from_waiting_senders() -> None:
    tx, rx = create_memory_object_stream[int](2)
    with tx, rx:
        tx.send_nowait(0)
        tx.send_nowait(1)
        async with task_group() as tg:
            start(tg, lambda: tx.send(2))
            await wait_all_blocked()
            assert rx.receive_nowait() == 0
        assert tx.statistics().peak_buffer_used == 2
        assert tx.statistics().current_buffer_used == 2


async def test_a_hand_off_to_a_waiting_receiver_never_touches_the_buffer() -> None:
    tx, rx = create_memory_object_stream[int](5)
    with tx, rx:
        async with task_group() as tg:
            got = start(tg, rx.receive)
            await wait_all_blocked()
            tx.send_nowait(1)
            await wait_all_blocked()
        assert got.value == 1
        assert tx.statistics().peak_buffer_used == 0
        assert tx.statistics().receive_wakeups == 1


# -- resource warnings, typing --------------------------------------------


@pytest.mark.parametrize("end", ["send", "receive"])
def test_an_endpoint_garbage_collected_while_open_warns(end: str) -> None:
    tx, rx = create_memory_object_stream[int](1)
    keep = rx if end == "send" else tx
    with pytest.warns(ResourceWarning, match="Unclosed"):
        if end == "send":
            del tx
        else:
            del rx
        gc.collect()
    keep.close()


def test_a_closed_endpoint_is_garbage_collected_silently() -> None:
    tx, rx = create_memory_object_stream[int](1)
    tx.close()
    rx.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del tx, rx
        gc.collect()


def test_generic_variance_is_anyios() -> None:
    # Receive side covariant, send side contravariant, as anyio's endpoints:
    # a receive stream of bool is a receive stream of int, a send stream of int
    # accepts bools.
    (receive_param,) = MemoryObjectReceiveStream.__parameters__
    (send_param,) = MemoryObjectSendStream.__parameters__
    assert receive_param.__covariant__
    assert not receive_param.__contravariant__
    assert send_param.__contravariant__
    assert not send_param.__covariant__
    anyio_memory = anyio.streams.memory
    (anyio_receive,) = anyio_memory.MemoryObjectReceiveStream.__parameters__
    (anyio_send,) = anyio_memory.MemoryObjectSendStream.__parameters__
    assert (anyio_receive.__covariant__, anyio_send.__contravariant__) == (True, True)


VARIANCE_SNIPPET = """
from actors.channel import MemoryObjectReceiveStream as Receiver
from actors.channel import MemoryObjectSendStream as Sender

def wants_int_receiver(stream: Receiver[int]) -> None: ...
def wants_bool_sender(stream: Sender[bool]) -> None: ...

def accepted(receives_bool: Receiver[bool], sends_int: Sender[int]) -> None:
    wants_int_receiver(receives_bool)  # covariant: bools are ints
    wants_bool_sender(sends_int)  # contravariant: takes ints, so takes bools

def rejected(receives_object: Receiver[object], sends_bool: Sender[bool]) -> None:
    wants_int_receiver(receives_object)  # error: an object is not an int
    as_int_sender: Sender[int] = sends_bool  # error: 2 is not a bool
"""


def test_generic_variance_is_pinned_for_type_checkers(
    tmp_path: pathlib.Path,
) -> None:
    # The same variance as mypy --strict sees it: the accepted lines type-check
    # and each line marked "error" is rejected.
    mypy_api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "variance.py"
    snippet.write_text(VARIANCE_SNIPPET)
    cache = pathlib.Path(__file__).parents[2] / ".mypy_cache" / "channel-variance"
    out, err, _ = mypy_api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(cache), str(snippet)]
    )
    reported = sorted(
        int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line
    )
    expected = [
        number
        for number, line in enumerate(VARIANCE_SNIPPET.splitlines(), start=1)
        if "# error" in line
    ]
    assert len(expected) == 2
    assert reported == expected, out + err


def test_the_package_exports_anyios_exception_classes() -> None:
    assert actors.channel.WouldBlock is anyio.WouldBlock
    assert actors.channel.EndOfStream is anyio.EndOfStream
    assert actors.channel.ClosedResourceError is anyio.ClosedResourceError
    assert actors.channel.BrokenResourceError is anyio.BrokenResourceError
    assert set(actors.channel.__all__) >= {
        "create_memory_object_stream",
        "MemoryObjectSendStream",
        "MemoryObjectReceiveStream",
        "MemoryObjectStreamStatistics",
    }


async def test_one_stream_serves_many_producers_and_consumers_losslessly(
    create: StreamFactory,
) -> None:
    tx, rx = create(4)
    received: list[tuple[int, int]] = []

    async def produce(pid: int, out: Any) -> None:
        async with out:
            for seq in range(50):
                await out.send((pid, seq))

    async def consume(inp: Any) -> None:
        async with inp:
            async for item in inp:
                received.append(item)

    async with task_group() as tg:
        for pid in range(4):
            tg.start_soon(produce, pid, tx.clone())
        for _ in range(3):
            tg.start_soon(consume, rx.clone())
        tx.close()
        rx.close()
    assert sorted(received) == [(p, s) for p in range(4) for s in range(50)]
