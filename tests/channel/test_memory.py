"""Memory: after a large burst drains, what the stream retains is a small
constant (a burst must not pin its peak allocation), measured with tracemalloc.

Items are one shared object, so every byte traced during the burst belongs to
the stream's own storage.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Iterator
from itertools import repeat

import pytest

from actors.channel import create_memory_object_stream

from ._support import start, task_group, wait_all_blocked

pytestmark = pytest.mark.anyio

BURST = 1_000_000
#: What a drained stream may keep: a few deque blocks and small lists.
RETAINED_LIMIT = 64 * 1024
#: What the burst must at least have held (8 bytes per slot): proof that the
#: measurement sees the buffer at all, so the test can fail.
PEAK_FLOOR = BURST * 8


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def _traced_now() -> int:
    return tracemalloc.get_traced_memory()[0]


# The non-waiting path needs no event loop: run once, not once per backend.
@pytest.mark.usefixtures("traced")
def test_memory_retained_after_a_million_item_burst_drains_is_small() -> None:
    item = object()
    tx, rx = create_memory_object_stream[object](math.inf)
    with tx, rx:
        send_nowait = tx.send_nowait
        send_nowait(item)
        rx.receive_nowait()  # warm up: per-stream state exists before baseline
        baseline = _traced_now()
        for _ in repeat(None, BURST):  # repeat: no int allocated per step
            send_nowait(item)
        assert _traced_now() - baseline >= PEAK_FLOOR
        # Drain half in batches, half one by one: both paths must free.
        for _ in range(BURST // 2 // 4096):
            rx.receive_nowait_many(4096)
        receive_nowait = rx.receive_nowait
        for _ in repeat(None, rx.statistics().current_buffer_used):
            receive_nowait()
        assert rx.statistics().current_buffer_used == 0
        assert rx.statistics().peak_buffer_used == BURST
        retained = _traced_now() - baseline
        assert retained < RETAINED_LIMIT, f"{retained} bytes kept after draining"


@pytest.mark.usefixtures("traced")
async def test_memory_retained_after_a_burst_through_waiting_receivers_is_small(
) -> None:
    # The waiting path: batch receivers topped up, then the rest buffered and
    # drained with awaited batches.
    item = object()
    tx, rx = create_memory_object_stream[object](math.inf)
    with tx, rx:
        baseline = _traced_now()
        async with task_group() as tg:
            waiting = [start(tg, lambda: rx.receive_many(1024)) for _ in range(4)]
            await wait_all_blocked()
            for _ in repeat(None, BURST // 4):
                tx.send_nowait(item)
            await wait_all_blocked()
        assert sum(len(w.value) for w in waiting) == 4096
        while rx.statistics().current_buffer_used:
            await rx.receive_many(4096)
        del waiting
        retained = _traced_now() - baseline
        assert retained < RETAINED_LIMIT, f"{retained} bytes kept after draining"


@pytest.mark.usefixtures("traced")
async def test_memory_retained_after_a_bounded_stream_cycles_a_burst_is_small(
) -> None:
    # A bounded stream reused for many fill/drain cycles keeps no growing
    # garbage either.
    item = object()
    tx, rx = create_memory_object_stream[object](64)
    with tx, rx:
        for _ in range(64):
            tx.send_nowait(item)
        rx.receive_nowait_many(64)
        baseline = _traced_now()
        for _ in range(2_000):
            for _ in range(64):
                tx.send_nowait(item)
            rx.receive_nowait_many(64)
        retained = _traced_now() - baseline
        assert retained < 8 * 1024, f"{retained} bytes kept after cycling"
