"""Property tests: random interleavings of every operation over several tasks.

Hypothesis generates a script of steps. Each step is a block of actions the
controller performs without yielding (``send_nowait``, ``receive_nowait[_many]``,
close, clone, cancelling a waiting task by its anyio scope or natively with
``Task.cancel()``, and starting an awaiting ``send`` / ``receive`` /
``receive_many`` in a worker task); then it waits until every task is parked
(``wait_all_blocked``: scheduler-exact, no sleeps) and checks the invariants.
Everything runs in one event loop turn order, so an example is deterministic:
asyncio steps FIFO, and Trio's scheduler is seeded by Hypothesis.

Checked, per example:

* every item whose send returned is received exactly once or still buffered at
  the end; nothing is received twice; an item whose send failed (closed, broken,
  would block, or cancelled by its scope) is never received;
* the buffer holds each producer's items in send order at every quiescent
  point, give-backs or not (a give-back merges oldest first);
* each receiving task sees each producer's items in send order, and what is
  left buffered comes after everything taken (relaxed only in examples where a
  native cancel may have hit a receiver just handed items: those come back
  ahead of younger buffered items, but a younger item may already have gone
  to another receiver);
* no task stays parked when it could proceed, and parked tasks are exactly the
  ones statistics report; no EndOfStream while items are left;
* the statistics agree with what the script did (open ends, waiting tasks,
  peak >= current, wakeup counters within what was woken).

Two model-based properties then pin who gets what: a burst fills waiting
receivers in arrival order, batch by batch, one wakeup per batch; waiting
senders move in in arrival order as room appears; cancelled waiters are skipped.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio import BrokenResourceError, ClosedResourceError, EndOfStream, WouldBlock
from hypothesis import event, given, settings
from hypothesis import strategies as st

from actors.channel import (
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    MemoryObjectStreamStatistics,
    create_memory_object_stream,
)

from ._support import Outcome, on_asyncio, start, task_group, wait_all_blocked

pytestmark = pytest.mark.anyio

Item = tuple[str, int]  # (producer, sequence number)

# -- the script -----------------------------------------------------------

endpoint = st.integers(0, 7)  # taken modulo the endpoints that exist
worker = st.integers(0, 7)  # taken modulo the idle (start) or waiting (cancel) ones
limit = st.integers(1, 4)

ARGUMENTS: dict[str, tuple[st.SearchStrategy[Any], ...]] = {
    "send_nowait": (endpoint,),
    "receive_nowait": (endpoint,),
    "receive_nowait_many": (endpoint, limit),
    "start_send": (worker, endpoint),
    "start_receive": (worker, endpoint),
    "start_receive_many": (worker, endpoint, limit),
    "cancel": (worker, st.booleans()),  # True: native Task.cancel() on asyncio
    "close_send": (endpoint,),
    "close_receive": (endpoint,),
    "clone_send": (endpoint,),
    "clone_receive": (endpoint,),
}


def actions(weights: dict[str, int]) -> st.SearchStrategy[tuple[Any, ...]]:
    """Actions drawn with the given relative weights (by repetition)."""
    kinds = [kind for kind, weight in weights.items() for _ in range(weight)]
    return st.sampled_from(kinds).flatmap(
        lambda kind: st.tuples(st.just(kind), *ARGUMENTS[kind])
    )


# Traffic is common; closing and cloning rare, so streams live a while.
action = actions(
    {
        "send_nowait": 4,
        "start_receive_many": 3,
        "start_send": 4,
        "start_receive": 3,
        "receive_nowait_many": 2,
        "cancel": 3,
        "receive_nowait": 1,
        "clone_send": 1,
        "clone_receive": 1,
        "close_send": 1,
        "close_receive": 1,
    }
)
block = st.lists(action, min_size=1, max_size=4)
script = st.lists(block, min_size=3, max_size=30)
buffer_size = st.sampled_from([0, 1, 2, 5, math.inf])


# -- the harness ----------------------------------------------------------


@dataclass(eq=False)
class Worker:
    """A task that runs one awaiting operation at a time when told to."""

    name: str
    go: anyio.Event = field(default_factory=anyio.Event)
    command: tuple[Any, ...] | None = None
    busy: bool = False
    parked: bool = False  # busy at the last quiescent point: it is waiting
    cancel_sent: bool = False
    scope: anyio.CancelScope | None = None
    task: asyncio.Task[Any] | None = None
    seq: int = 0

    async def main(self, run: Run) -> None:
        if on_asyncio():
            self.task = asyncio.current_task()
        while True:
            await self.go.wait()
            self.go = anyio.Event()
            command = self.command
            if command is None:
                return
            result = await self._perform(command)
            run.finished(self, command, result)
            self.busy = False

    async def _perform(self, command: tuple[Any, ...]) -> tuple[str, Any]:
        op, stream, arg = command
        self.scope = scope = anyio.CancelScope()
        try:
            with scope:
                try:
                    if op == "send":
                        await stream.send(arg)
                        return ("ok", None)
                    if op == "receive":
                        return ("ok", [await stream.receive()])
                    return ("ok", await stream.receive_many(arg))
                except (
                    EndOfStream,
                    ClosedResourceError,
                    BrokenResourceError,
                    WouldBlock,
                ) as exc:
                    return ("error", type(exc))
        except asyncio.CancelledError:
            if not on_asyncio():
                raise
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()  # the native cancel the script asked for
            return ("native", None)
        assert scope.cancelled_caught
        return ("scope", None)


class Run:
    """One example: a channel, workers, and the bookkeeping the checks need."""

    def __init__(self, size: float, workers: int, clones: int = 1) -> None:
        self.size = size
        tx, rx = create_memory_object_stream[Item](size)
        # Several clones from the start, so closing one is not closing all.
        self.senders: list[MemoryObjectSendStream[Item]] = [tx]
        self.receivers: list[MemoryObjectReceiveStream[Item]] = [rx]
        for _ in range(clones - 1):
            self.senders.append(tx.clone())
            self.receivers.append(rx.clone())
        self.closed: set[int] = set()  # ids of closed endpoints
        self.workers = [Worker(f"w{i}") for i in range(workers)]
        self.controller_seq = 0
        # Items by what their send did.
        self.sent: set[Item] = set()  # the send returned
        self.maybe_sent: set[Item] = set()  # natively cancelled: 0 or 1 copy
        self.not_sent: set[Item] = set()  # raised before taking effect
        self.received: dict[str, list[Item]] = {}
        # Lossless give-back may reorder between receivers (see below).
        self.gave_back = False
        self.last_stats: MemoryObjectStreamStatistics = tx.statistics()
        # Wakeup bounds: ops that were parked at a quiescent point and then
        # completed, and ops that could have been woken at all.
        self.parked_then_ok = Counter[str]()
        self.could_be_woken = Counter[str]()
        self.end_of_stream_this_round = False
        self.seen = Counter[str]()  # what happened, for Hypothesis' statistics

    # -- endpoints -----------------------------------------------------

    def is_open(self, stream: object) -> bool:
        return id(stream) not in self.closed

    def open_counts(self) -> tuple[int, int]:
        return (
            sum(self.is_open(s) for s in self.senders),
            sum(self.is_open(r) for r in self.receivers),
        )

    def stats(self) -> MemoryObjectStreamStatistics:
        return self.senders[0].statistics()

    # -- outcomes ------------------------------------------------------

    def finished(
        self, w: Worker, command: tuple[Any, ...], result: tuple[str, Any]
    ) -> None:
        op, stream, arg = command
        kind, value = result
        was_parked = w.parked
        self.seen[f"{op} {kind} {getattr(value, '__name__', '')}".strip()] += 1
        open_send, open_receive = self.open_counts()
        if op == "send":
            if kind == "ok":
                self.sent.add(arg)
                if was_parked:
                    self.parked_then_ok["send"] += 1
                self.could_be_woken["send"] += 1
            elif kind == "native":
                self.maybe_sent.add(arg)
                self.could_be_woken["send"] += 1
            else:
                self.not_sent.add(arg)
            if kind == "error":
                assert value in (ClosedResourceError, BrokenResourceError), value
                if value is BrokenResourceError:
                    assert open_receive == 0, "broken while a receiver is open"
        else:
            if kind == "ok":
                assert 1 <= len(value) <= (arg if op == "receive_many" else 1)
                self.received.setdefault(w.name, []).extend(value)
                if was_parked:
                    self.parked_then_ok["receive"] += 1
                self.could_be_woken["receive"] += 1
            elif kind == "native":
                self.could_be_woken["receive"] += 1
            if kind == "error":
                assert value in (ClosedResourceError, EndOfStream), value
                if value is EndOfStream:
                    assert open_send == 0, "end of stream while a sender is open"
                    self.end_of_stream_this_round = True
        if kind == "error" and value is ClosedResourceError:
            assert not self.is_open(stream), "closed error on an open endpoint"
        if self.is_open(stream):
            assert kind != "error" or value is not ClosedResourceError

    def next_item(self) -> Item:
        self.controller_seq += 1
        return ("c", self.controller_seq)

    # -- the controller's actions --------------------------------------

    def perform(self, act: tuple[Any, ...], state: dict[str, Any]) -> None:
        name = act[0]
        if name == "send_nowait":
            self._send_nowait(self.senders[act[1] % len(self.senders)], state)
        elif name in ("receive_nowait", "receive_nowait_many"):
            stream = self.receivers[act[1] % len(self.receivers)]
            self._receive_nowait(stream, act[2] if len(act) > 2 else None, state)
        elif name.startswith("start_"):
            self._start(act)
        elif name == "cancel":
            # Only a task parked at the last quiescent point: its operation is
            # under way (a task told to start in this block has not run yet).
            waiting = [
                w for w in self.workers if w.parked and w.busy and not w.cancel_sent
            ]
            if waiting:
                self._cancel(waiting[act[1] % len(waiting)], act[2], state)
        elif name == "close_send":
            stream = self.senders[act[1] % len(self.senders)]
            stream.close()
            self.closed.add(id(stream))
        elif name == "close_receive":
            stream = self.receivers[act[1] % len(self.receivers)]
            stream.close()
            self.closed.add(id(stream))
        elif name == "clone_send":
            self._clone(self.senders, act[1])
        elif name == "clone_receive":
            self._clone(self.receivers, act[1])
        else:  # pragma: no cover
            raise AssertionError(name)

    def _clone(self, streams: list[Any], index: int) -> None:
        stream = streams[index % len(streams)]
        if self.is_open(stream):
            if len(streams) < 6:
                streams.append(stream.clone())
        else:
            with pytest.raises(ClosedResourceError):
                stream.clone()

    def _send_nowait(
        self, stream: MemoryObjectSendStream[Item], state: dict[str, Any]
    ) -> None:
        item = self.next_item()
        before = stream.statistics()
        try:
            stream.send_nowait(item)
        except ClosedResourceError:
            assert not self.is_open(stream)
            self.not_sent.add(item)
        except BrokenResourceError:
            assert self.is_open(stream)
            assert before.open_receive_streams == 0
            self.not_sent.add(item)
        except WouldBlock:
            # Only when the buffer is full and no live receiver is waiting
            # (receivers cancelled in this block may still be counted).
            assert before.current_buffer_used >= self.size
            assert before.tasks_waiting_receive <= state["cancelled_receivers"]
            self.not_sent.add(item)
        else:
            assert self.is_open(stream)
            self.sent.add(item)
            state["sent_nowait"] = True

    def _receive_nowait(
        self,
        stream: MemoryObjectReceiveStream[Item],
        many: int | None,
        state: dict[str, Any],
    ) -> None:
        before = stream.statistics()
        try:
            if many is None:
                items = [stream.receive_nowait()]
            else:
                items = stream.receive_nowait_many(many)
                assert 1 <= len(items) <= many
        except ClosedResourceError:
            assert not self.is_open(stream)
        except EndOfStream:
            assert self.is_open(stream)
            assert before.current_buffer_used == 0
            assert before.open_send_streams == 0
        except WouldBlock:
            assert self.is_open(stream)
            assert before.current_buffer_used == 0
            assert before.open_send_streams > 0
            assert before.tasks_waiting_send <= state["cancelled_senders"]
        else:
            assert self.is_open(stream)
            self.received.setdefault("c", []).extend(items)

    def _start(self, act: tuple[Any, ...]) -> None:
        idle = [w for w in self.workers if not w.busy]
        if not idle:
            return
        w = idle[act[1] % len(idle)]
        if act[0] == "start_send":
            stream: Any = self.senders[act[2] % len(self.senders)]
            w.seq += 1
            w.command = ("send", stream, (w.name, w.seq))
        elif act[0] == "start_receive":
            w.command = ("receive", self.receivers[act[2] % len(self.receivers)], 1)
        else:
            stream = self.receivers[act[2] % len(self.receivers)]
            w.command = ("receive_many", stream, act[3])
        w.busy = True
        w.parked = False
        w.cancel_sent = False
        w.go.set()

    def _cancel(self, w: Worker, native: bool, state: dict[str, Any]) -> None:
        w.cancel_sent = True
        assert w.command is not None
        receiving = w.command[0] != "send"
        state["cancelled_receivers" if receiving else "cancelled_senders"] += 1
        if native and w.task is not None:
            if receiving and state["sent_nowait"]:
                # It may have been handed items in this block: they come back
                # ahead of younger buffered items, possibly after a younger
                # item went to another receiver. Lossless, and the buffer stays
                # in send order, but a receiving task may see a given-back item
                # after a younger one.
                self.gave_back = True
            w.task.cancel()
        else:
            assert w.scope is not None
            w.scope.cancel()

    # -- checks at a quiescent point -----------------------------------

    def check_quiescent(self) -> None:
        stats = self.stats()
        open_send, open_receive = self.open_counts()
        assert stats.open_send_streams == open_send
        assert stats.open_receive_streams == open_receive
        assert stats.max_buffer_size == self.size
        busy_senders = [w for w in self.workers if w.busy and w.command[0] == "send"]
        busy_receivers = [
            w for w in self.workers if w.busy and w.command[0] != "send"
        ]
        # Every busy worker is parked in the stream, and counted there.
        assert stats.tasks_waiting_send == len(busy_senders)
        assert stats.tasks_waiting_receive == len(busy_receivers)
        for w in busy_senders + busy_receivers:
            assert w.command is not None
            assert self.is_open(w.command[1]), "parked on a closed endpoint"
        # Nobody waits who could proceed.
        if busy_receivers:
            assert stats.current_buffer_used == 0
            assert not busy_senders
            assert open_send > 0
        if busy_senders:
            assert stats.current_buffer_used >= self.size
            assert open_receive > 0
        if self.end_of_stream_this_round:
            assert stats.current_buffer_used == 0, "end of stream with items left"
        # Give-backs or not, the buffer is in send order.
        assert_in_send_order(list(self.receivers[0]._state.buffer), "buffer")
        # Counters.
        assert stats.peak_buffer_used >= stats.current_buffer_used
        if not self.gave_back:
            assert stats.current_buffer_used <= self.size
        last = self.last_stats
        assert stats.peak_buffer_used >= last.peak_buffer_used
        assert stats.receive_wakeups >= last.receive_wakeups
        assert stats.send_wakeups >= last.send_wakeups
        self.last_stats = stats
        self.end_of_stream_this_round = False
        for w in self.workers:
            w.parked = w.busy

    # -- the end ---------------------------------------------------------

    async def finish(self) -> None:
        # Cancel whatever still waits (by scope: it never delivers), then drain.
        for w in self.workers:
            if w.busy and not w.cancel_sent:
                assert w.scope is not None
                w.cancel_sent = True
                w.scope.cancel()
        await wait_all_blocked()
        assert not any(w.busy for w in self.workers)
        stats = self.stats()
        assert stats.tasks_waiting_send == stats.tasks_waiting_receive == 0
        left: list[Item] = []
        open_receivers = [r for r in self.receivers if self.is_open(r)]
        if open_receivers:
            while True:
                try:
                    left.extend(open_receivers[0].receive_nowait_many(1000))
                except (WouldBlock, EndOfStream):
                    break
        else:
            # No open receiver is left to drain with: read what stays buffered.
            left = list(self.receivers[0]._state.buffer)
        assert len(left) == stats.current_buffer_used
        for what in self.seen:
            event(what)
        if self.gave_back:
            event("a native cancel may have raced a hand-off")
        self.check_items(left)
        self.check_wakeups(self.stats())

    def check_items(self, left: list[Item]) -> None:
        everything = [i for items in self.received.values() for i in items] + left
        counts = Counter(everything)
        duplicated = [i for i, n in counts.items() if n > 1]
        assert not duplicated, f"received twice: {duplicated}"
        got = set(everything)
        assert not self.sent - got, f"lost: {sorted(self.sent - got)}"
        assert not self.not_sent & got, f"failed sends seen: {self.not_sent & got}"
        assert got <= self.sent | self.maybe_sent, "received what nobody sent"
        # Per receiving task, each producer's items in send order.
        for name, items in self.received.items():
            if not self.gave_back:
                assert_in_send_order(items, name)
        assert_in_send_order(left, "buffer")
        if not self.gave_back:
            # FIFO: what is left comes after everything taken, per producer.
            taken = [i for items in self.received.values() for i in items]
            for producer, seq in left:
                assert all(
                    s < seq for p, s in taken if p == producer
                ), f"{(producer, seq)} overtaken"

    def check_wakeups(self, stats: MemoryObjectStreamStatistics) -> None:
        # Each parked-then-satisfied operation was woken once by a hand-off;
        # no operation is woken twice, and a wakeup always feeds someone.
        assert (
            self.parked_then_ok["receive"]
            <= stats.receive_wakeups
            <= self.could_be_woken["receive"]
        )
        assert (
            self.parked_then_ok["send"]
            <= stats.send_wakeups
            <= self.could_be_woken["send"]
        )

    async def close(self) -> None:
        for stream in (*self.senders, *self.receivers):
            stream.close()
        for w in self.workers:
            w.command = None
            w.go.set()


def assert_in_send_order(items: list[Item], who: str) -> None:
    last: dict[str, int] = {}
    for producer, seq in items:
        assert seq > last.get(producer, 0), f"{who} got {producer} out of order"
        last[producer] = seq


async def run_script(
    size: float, workers: int, steps: list[list[Any]], clones: int = 1
) -> None:
    run = Run(size, workers, clones)
    try:
        async with anyio.create_task_group() as tg:
            for w in run.workers:
                tg.start_soon(w.main, run)
            await wait_all_blocked()
            for actions in steps:
                state = {
                    "cancelled_receivers": 0,
                    "cancelled_senders": 0,
                    "sent_nowait": False,
                }
                for act in actions:
                    run.perform(act, state)
                await wait_all_blocked()
                run.check_quiescent()
            await run.finish()
            await run.close()
    finally:
        for stream in (*run.senders, *run.receivers):
            stream.close()


@settings(max_examples=150)
@given(
    size=buffer_size,
    workers=st.integers(2, 5),
    clones=st.integers(1, 3),
    steps=script,
)
async def test_random_interleavings_lose_nothing_and_keep_order(
    size: float, workers: int, clones: int, steps: list[list[Any]]
) -> None:
    await run_script(size, workers, steps, clones)


# Cancellation-heavy: senders and receivers race, and every block cancels a
# waiting task (natively when it can) amid other actions.
racing = actions(
    {
        "send_nowait": 6,
        "start_send": 6,
        "start_receive": 4,
        "start_receive_many": 4,
        "cancel": 6,
        "receive_nowait": 2,
        "receive_nowait_many": 2,
        "close_send": 1,
        "close_receive": 1,
    }
)
cancel_block = st.tuples(
    st.lists(racing, min_size=1, max_size=4),
    worker,
    st.booleans(),
    st.lists(racing, max_size=3),
).map(lambda t: [*t[0], ("cancel", t[1], t[2]), *t[3]])


@settings(max_examples=150)
@given(
    size=st.sampled_from([0, 1, math.inf]),
    workers=st.integers(3, 6),
    clones=st.integers(1, 3),
    steps=st.lists(cancel_block, min_size=3, max_size=20),
)
async def test_cancellation_races_never_lose_or_duplicate_an_item(
    size: float, workers: int, clones: int, steps: list[list[Any]]
) -> None:
    await run_script(size, workers, steps, clones)


# -- model-based: who gets what, in which order ---------------------------


@given(
    limits=st.lists(st.integers(1, 6), min_size=1, max_size=8),
    cancelled=st.sets(st.integers(0, 7), max_size=3),
    native=st.booleans(),
    burst=st.integers(1, 40),
    size=st.sampled_from([0, 3, math.inf]),
)
async def test_a_burst_fills_waiting_receivers_in_arrival_order_batch_by_batch(
    limits: list[int], cancelled: set[int], native: bool, burst: int, size: float
) -> None:
    # Receivers park one by one (limit 1 is a plain receive()); some are then
    # cancelled. A burst of send_nowait fills the live ones in arrival order,
    # each up to its limit, waking one receiver per batch, then the buffer.
    tx, rx = create_memory_object_stream[int](size)
    with tx, rx:
        async with task_group() as tg:
            outcomes = []
            scopes = []
            for lim in limits:
                scope = anyio.CancelScope()
                op = rx.receive if lim == 1 else (lambda lim=lim: rx.receive_many(lim))
                outcomes.append(start(tg, op, scope))
                scopes.append(scope)
                await wait_all_blocked()
            live = [i for i in range(len(limits)) if i not in cancelled]
            for i in range(len(limits)):
                if i in cancelled:
                    if native and on_asyncio():
                        outcomes[i].cancel_natively()
                    else:
                        scopes[i].cancel()
            sent = 0
            for item in range(burst):
                try:
                    tx.send_nowait(item)
                except WouldBlock:
                    break
                sent += 1
            # The model.
            expected: dict[int, list[int]] = {}
            next_item = 0
            for i in live:
                if next_item == burst:
                    break
                take = min(limits[i], burst - next_item)
                expected[i] = list(range(next_item, next_item + take))
                next_item += take
            buffered = min(burst - next_item, size)
            assert sent == next_item + buffered
            stats = rx.statistics()
            assert stats.receive_wakeups == len(expected)
            assert stats.current_buffer_used == buffered
            await wait_all_blocked()
            assert rx.statistics().tasks_waiting_receive == len(live) - len(expected)
            tg.cancel_scope.cancel()
        for i, outcome in enumerate(outcomes):
            if i in expected:
                value = [outcome.value] if limits[i] == 1 else outcome.value
                assert value == expected[i], f"receiver {i}"
            else:
                assert outcome.cancelled, f"receiver {i} should still have waited"
        if sent > next_item:
            assert rx.receive_nowait_many(100) == list(range(next_item, sent))


@given(
    size=st.integers(0, 3),
    senders=st.integers(1, 6),
    cancelled=st.sets(st.integers(0, 5), max_size=2),
    native=st.booleans(),
    takes=st.lists(st.integers(1, 5), min_size=1, max_size=6),
    awaited=st.booleans(),
)
async def test_waiting_senders_move_in_in_arrival_order(
    size: int,
    senders: int,
    cancelled: set[int],
    native: bool,
    takes: list[int],
    awaited: bool,
) -> None:
    # A full buffer, senders parked one by one, some cancelled: receives take
    # the buffer, then the live senders' items in the order they arrived; each
    # take moves as many waiting senders in as there is room, in the same step.
    tx, rx = create_memory_object_stream[str](size)
    with tx, rx:
        for i in range(size):
            tx.send_nowait(f"b{i}")
        async with task_group() as tg:
            outcomes = []
            scopes = []
            for i in range(senders):
                scope = anyio.CancelScope()
                outcomes.append(start(tg, lambda i=i: tx.send(f"s{i}"), scope))
                scopes.append(scope)
                await wait_all_blocked()
            for i in cancelled & set(range(senders)):
                if native and on_asyncio():
                    outcomes[i].cancel_natively()
                else:
                    scopes[i].cancel()
            await wait_all_blocked()
            queue = [f"b{i}" for i in range(size)] + [
                f"s{i}" for i in range(senders) if i not in cancelled
            ]
            received: list[str] = []
            for n in takes:
                if not queue:
                    break
                got = await rx.receive_many(n) if awaited else rx.receive_nowait_many(n)
                assert got == queue[:n]
                received += got
                del queue[:n]
                stats = rx.statistics()
                assert stats.current_buffer_used == min(size, len(queue))
                assert stats.tasks_waiting_send == max(0, len(queue) - size)
            await wait_all_blocked()
            tg.cancel_scope.cancel()
        live = [i for i in range(senders) if i not in cancelled]
        still_waiting = max(0, len(queue) - size)
        moved = live[: len(live) - still_waiting]
        assert all(outcomes[i].ok for i in moved)  # each woken, having sent
        assert rx.statistics().send_wakeups == len(moved)


# -- give-backs: FIFO, oldest first, across any set of them ------------------

give_back_step = st.one_of(
    st.tuples(st.just("send"), st.integers(1, 3)),
    st.tuples(st.just("start"), st.integers(1, 3)),  # a receiver with this limit
    st.tuples(st.just("cancel"), st.integers(0, 7)),
    st.tuples(st.just("take"), st.integers(1, 3)),
    st.tuples(st.just("step")),  # one schedule point of the controller
)


@settings(max_examples=150)
@given(
    size=st.sampled_from([0, 2, math.inf]),
    rounds=st.lists(
        st.lists(give_back_step, min_size=1, max_size=8), min_size=1, max_size=10
    ),
)
async def test_give_backs_keep_the_buffer_in_send_order(
    size: float, rounds: list[list[tuple[Any, ...]]]
) -> None:
    # Receivers cancelled after a hand-off (natively on asyncio; by scope on
    # Trio, where it is too late to land) give their items back in whatever
    # order they run, amid sends, takes and single schedule points, and so do
    # receivers fed by an earlier give-back. At every quiescent point the
    # buffer holds the items still present in send order; every receive
    # returns items in send order; nothing is lost or duplicated.
    tx, rx = create_memory_object_stream[int](size)
    sent = 0
    taken: list[int] = []
    receivers: list[tuple[Outcome, anyio.CancelScope]] = []
    cancelled: set[int] = set()
    with tx, rx:
        async with task_group() as tg:
            for steps in rounds:
                for kind, *args in steps:
                    if kind == "send":
                        for _ in range(args[0]):
                            try:
                                tx.send_nowait(sent)
                            except WouldBlock:
                                break
                            sent += 1
                    elif kind == "start":
                        if sum(not o.done for o, _ in receivers) < 6:
                            scope = anyio.CancelScope()
                            op = (
                                rx.receive
                                if args[0] == 1
                                else (lambda n=args[0]: rx.receive_many(n))
                            )
                            receivers.append((start(tg, op, scope), scope))
                    elif kind == "cancel":
                        pending = [
                            i
                            for i, (o, _) in enumerate(receivers)
                            if not o.done
                            and i not in cancelled
                            and (o.task is not None or not on_asyncio())
                        ]
                        if pending:
                            i = pending[args[0] % len(pending)]
                            cancelled.add(i)
                            outcome, scope = receivers[i]
                            if on_asyncio():
                                outcome.cancel_natively()
                            else:
                                scope.cancel()
                    elif kind == "take":
                        try:
                            got = rx.receive_nowait_many(args[0])
                        except WouldBlock:
                            continue
                        assert got == sorted(got), got
                        taken += got
                    else:
                        await anyio.lowlevel.checkpoint()
                await wait_all_blocked()
                buffer = list(rx._state.buffer)
                assert buffer == sorted(buffer), f"buffer out of send order: {buffer}"
            for _, scope in receivers:
                scope.cancel()  # whoever still waits holds nothing
            await wait_all_blocked()
        try:
            left = rx.receive_nowait_many(1_000)
        except WouldBlock:
            left = []
    assert left == sorted(left)
    received = list(taken)
    for outcome, _ in receivers:
        if outcome.ok:
            value = outcome.value
            if not isinstance(value, list):
                value = [value]
            assert value == sorted(value), f"a receive returned {value}"
            received += value
    assert sorted(received + left) == list(range(sent)), "lost or duplicated"
