"""Deterministic performance gates for the mailbox hot path.

Counts, not clocks: the number of function calls the profiler sees for one
operation, and the memory tracemalloc sees over many. Both are exact on a given
CPython, so a budget can be tight: any new call or allocation on the hot path
fails here, on every machine, with the list of calls in the message.

The call budgets are CPython 3.11 counts (``sys.setprofile`` reports a 'call'
for each Python frame entered or resumed, and a 'c_call' for each builtin
function or method; calling a type such as ``list(...)`` reports nothing). If a
new Python version changes what the profiler reports, re-measure and update the
budgets with the listing below each one.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import pytest

from actors.mailbox import Mailbox

pytestmark = pytest.mark.skipif(
    sys.implementation.name != "cpython", reason="CPython profiler and allocator"
)

WARM_UP = 1_000
MESSAGES = [object() for _ in range(64)]  # pre-allocated: not part of any count

# -- call counts -------------------------------------------------------------------


def profiled_calls(operation: Callable[[], object]) -> list[str]:
    """Every call the profiler reports while ``operation()`` runs, without the
    call of ``operation`` itself and of ``sys.setprofile`` that ends it."""
    events: list[str] = []

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            events.append(frame.f_code.co_qualname)
        elif event == "c_call":
            events.append(f"{getattr(arg, '__qualname__', arg)} (C)")

    sys.setprofile(profiler)
    try:
        operation()
    finally:
        sys.setprofile(None)
    assert events[0] == operation.__code__.co_qualname  # type: ignore[attr-defined]
    assert events[-1] == "setprofile (C)"
    return events[1:-1]


def check_budget(calls: list[str], budget: int) -> None:
    listing = "\n  ".join(calls)
    assert len(calls) <= budget, (
        f"{len(calls)} calls, budget {budget}: a call was added to the hot path"
        f"\n  {listing}"
    )


def test_one_try_send_and_receive_nowait_stay_within_six_calls() -> None:
    # Budget 6, measured 6 (CPython 3.11):
    #   Mailbox.try_send          the send itself
    #   isinstance (C)            reject signals (the contract's TypeError)
    #   deque.append (C)          enqueue
    #   Mailbox.receive_nowait    the receive itself
    #   len (C)                   peak queue length (the statistic: recorded
    #                             where items are taken, not per send)
    #   deque.popleft (C)         dequeue; the unit is released inline, and
    #                             isinstance(item, Signal) is skipped while no
    #                             signal is queued
    mailbox: Mailbox[object] = Mailbox(64)
    message = MESSAGES[0]
    try_send, receive_nowait = mailbox.try_send, mailbox.receive_nowait

    def one_message() -> None:
        try_send(message)
        receive_nowait()

    for _ in range(WARM_UP):
        one_message()
    check_budget(profiled_calls(one_message), 6)


def test_receive_nowait_many_of_64_stays_within_seven_calls() -> None:
    # Budget 7, measured 7 (CPython 3.11), the same for any batch size:
    #   Mailbox.receive_nowait_many   the receive itself
    #   check_limit                   validate limit (a Python frame: avoidable)
    #   isinstance (C) x2             limit is an int and not a bool
    #   Mailbox._take                 the take shared with receive_many
    #                                 (a Python frame: avoidable here)
    #   len (C)                       queue length: vs limit, the peak, and
    #                                 the units to release
    #   deque.clear (C)               take all (list(queue) reports no call)
    mailbox: Mailbox[object] = Mailbox(64)
    try_send, receive_nowait_many = mailbox.try_send, mailbox.receive_nowait_many

    def fill(count: int) -> None:
        for message in MESSAGES[:count]:
            try_send(message)

    def take_64() -> None:
        receive_nowait_many(64)

    for _ in range(WARM_UP // 10):
        fill(64)
        take_64()
    fill(64)
    calls_64 = profiled_calls(take_64)
    assert len(mailbox) == 0
    check_budget(calls_64, 7)

    # No per-message call: a batch of 8 costs exactly what a batch of 64 does.
    def take_8() -> None:
        receive_nowait_many(8)

    fill(8)
    assert profiled_calls(take_8) == calls_64


def _learn_asyncio_backend(mailbox: Mailbox[object]) -> None:
    # A mailbox picks its event loop's primitives on its first async operation;
    # after that its coroutines can be stepped by hand, outside any loop.
    async def first_receive() -> None:
        mailbox.try_send(MESSAGES[0])
        await mailbox.receive()

    anyio.run(first_receive, backend="asyncio")


def step_twice(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Start ``coroutine``, resume it once from its one suspension, and return
    its result. Inlined in the profiled functions would be the same calls; as
    a helper its own frame is removed from the listing by :func:`harness`."""
    coroutine.send(None)
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("suspended more than once")


def harness(calls: list[str]) -> list[str]:
    """The calls without those of the stepping harness itself."""
    return [c for c in calls if c not in ("step_twice", "coroutine.send (C)")]


def test_an_awaited_receive_of_a_ready_item_is_inlined() -> None:
    # No wrapper coroutine around the take. Budget 5, measured 5 on asyncio
    # (the stepping harness's own calls left out):
    #   Mailbox.receive            enter; the checkpoint is a bare yield made
    #                              in C (no frame, no reported call)
    #   Mailbox.receive            resumed
    #   Mailbox.receive_nowait     the take, inline: unit released here
    #   len (C)                    the peak queue length
    #   deque.popleft (C)
    mailbox: Mailbox[object] = Mailbox(64)
    _learn_asyncio_backend(mailbox)
    message = MESSAGES[0]

    def receive_only() -> None:
        step_twice(mailbox.receive())

    for _ in range(WARM_UP):
        mailbox.try_send(message)
        receive_only()
    mailbox.try_send(message)
    calls = harness(profiled_calls(receive_only))
    assert len(mailbox) == 0
    check_budget(calls, 5)
    assert "Mailbox.receive_nowait" in calls
    assert calls.count("Mailbox.receive") == 2  # one frame, entered and resumed


def test_an_awaited_unchecked_receive_of_64_ready_items_is_inlined() -> None:
    # The runtime's per-wake call. Budget 4, measured 4 on asyncio (harness
    # left out): receive_many_unchecked entered and resumed (2; the checkpoint
    # reports no call), then the take, written out: len, deque.clear (2).
    mailbox: Mailbox[object] = Mailbox(64)
    _learn_asyncio_backend(mailbox)

    def fill() -> None:
        for message in MESSAGES:
            mailbox.try_send(message)

    def receive_batch_64() -> None:
        step_twice(mailbox.receive_many_unchecked(64))

    for _ in range(WARM_UP // 10):
        fill()
        receive_batch_64()
    fill()
    check_budget(harness(profiled_calls(receive_batch_64)), 4)


def test_an_awaited_receive_many_of_64_ready_items_adds_only_its_check() -> None:
    # Budget 8, measured 8 on asyncio: receive_many entered and resumed (2),
    # check_limit + isinstance x2 (3), the checkpoint (no call reported), then
    # the take: _take, len, deque.clear (3); no receive_many_unchecked
    # coroutine inside.
    mailbox: Mailbox[object] = Mailbox(64)
    _learn_asyncio_backend(mailbox)

    def fill() -> None:
        for message in MESSAGES:
            mailbox.try_send(message)

    def receive_many_64() -> None:
        step_twice(mailbox.receive_many(64))

    for _ in range(WARM_UP // 10):
        fill()
        receive_many_64()
    fill()
    check_budget(harness(profiled_calls(receive_many_64)), 8)


def test_an_awaited_send_with_a_free_unit_never_suspends_and_stays_within_four() -> (
    None
):
    # Budget 4, measured 4 (harness left out): Mailbox.send, then the
    # try_send path (try_send, isinstance, deque.append). No suspension.
    mailbox: Mailbox[object] = Mailbox(64)
    message = MESSAGES[0]

    def one_send() -> None:
        coroutine = mailbox.send(message)
        try:
            coroutine.send(None)
        except StopIteration:
            return
        raise AssertionError("send with a free unit suspended")

    for _ in range(WARM_UP):
        one_send()
        mailbox.receive_nowait()
    check_budget(harness(profiled_calls(one_send)), 4)


# -- memory ------------------------------------------------------------------------


def traced(run: Callable[[int], None], warm_up: int, count: int) -> tuple[int, int]:
    """Run ``run(count)`` under tracemalloc; return (growth, peak above start)
    in bytes.

    ``run(warm_up)`` first, after the collection and before tracing starts: a
    full collection empties CPython's free lists, and the objects that refill
    them would otherwise count as growth (80 list headers: 4.5 KiB, once).
    """
    gc.collect()
    gc.disable()
    try:
        run(warm_up)
        tracemalloc.start()
        try:
            start, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            run(count)
            end, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        gc.enable()
    return end - start, peak - start


CYCLES = 100_000


def message_cycles(mailbox: Mailbox[object]) -> Callable[[int], None]:
    try_send, receive_nowait = mailbox.try_send, mailbox.receive_nowait

    def cycles(count: int) -> None:
        for i in range(count):
            try_send(MESSAGES[i & 63])
            receive_nowait()

    return cycles


def test_try_send_receive_nowait_cycles_allocate_nothing_in_steady_state() -> None:
    # 100,000 messages through a bounded and an unbounded mailbox. Measured:
    # growth 56 bytes and peak 184 bytes, both the loop's own (its range
    # iterator and ints), whatever the count. A per-message allocation kept
    # anywhere would grow by 100,000 times its size; a wrapper freed at once is
    # caught by test_a_queued_message_costs_one_queue_slot_and_no_wrapper.
    for capacity in (64, None):
        growth, peak = traced(message_cycles(Mailbox(capacity)), WARM_UP, CYCLES)
        assert growth <= 512, f"capacity {capacity}: grew {growth} bytes"
        assert peak <= 1024, f"capacity {capacity}: peak {peak} bytes"


def test_receive_nowait_many_cycles_allocate_only_the_returned_batch() -> None:
    # 100,000 messages in batches of 64. The one allocation per batch is the
    # returned list (56 + 64 * 8 bytes), freed before the next batch. Measured:
    # growth 56 bytes, peak 816 bytes, whatever the count.
    mailbox: Mailbox[object] = Mailbox(64)
    try_send, receive_nowait_many = mailbox.try_send, mailbox.receive_nowait_many

    def cycles(batches: int) -> None:
        for _ in range(batches):
            for message in MESSAGES:
                try_send(message)
            receive_nowait_many(64)

    growth, peak = traced(cycles, WARM_UP // 10, CYCLES // 64)
    assert growth <= 512, f"grew {growth} bytes"
    assert peak <= 2048, f"peak {peak} bytes"


def test_a_queued_message_costs_one_queue_slot_and_no_wrapper() -> None:
    # "Nothing per message beyond the message itself": 10,000 queued messages
    # cost the deque's 8-byte slots plus its block headers, measured 8.24
    # bytes each. Any per-message object (a tuple, an envelope, a flag telling
    # signals from messages) would cost 40 bytes or more.
    messages = [object() for _ in range(10_000)]
    mailbox: Mailbox[object] = Mailbox()
    try_send = mailbox.try_send

    def fill(count: int) -> None:
        for i in range(count):
            try_send(messages[i])

    growth, _ = traced(fill, 0, len(messages))
    assert growth / len(messages) <= 8.5, f"{growth / len(messages):.2f} bytes each"
    assert mailbox.receive_nowait_many(10_000) == messages
