"""Property: random interleavings of every mailbox operation against a model.

Several producer tasks and one consumer task take commands from a driver (the
test task), which also calls the non-waiting operations itself. Each step is one
operation, optionally preceded and followed by a cancellation (an anyio cancel
scope, or on asyncio a native ``Task.cancel()``) that lands in the same step, so
cancellations race wakeups and hand-offs. After each step the driver lets every
task run until all are blocked (no sleeps), then checks the mailbox against a
model of the contract: each operation's outcome, each batch received, the
statistics (units in use always equal the messages queued) and who is waiting.
At the end, independently of the model: nothing lost, nothing duplicated, FIFO
per producer.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from anyio.lowlevel import checkpoint
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from actors.mailbox import (
    EndOfMailbox,
    Mailbox,
    MailboxClosed,
    MailboxFull,
    Signal,
    WouldBlock,
)

pytestmark = pytest.mark.anyio

CONSUMER = -1
Outcome = tuple[Any, ...]


class Sig(Signal):
    """A signal that says who sent it and in which order."""

    __slots__ = ("producer", "seq")

    def __init__(self, producer: int, seq: int) -> None:
        self.producer = producer
        self.seq = seq

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sig) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(("sig", self.producer, self.seq))

    def key(self) -> tuple[int, int]:
        return (self.producer, self.seq)

    def __repr__(self) -> str:
        return f"Sig{self.key()}"


Item = tuple[int, int] | Sig  # messages are (producer, seq) tuples


def key(item: Item) -> tuple[int, int]:
    return item.key() if isinstance(item, Sig) else item


# -- programs ------------------------------------------------------------------

OPS = (
    *["try_send"] * 4,
    *["send"] * 6,
    *["signal"] * 2,
    *["receive"] * 2,
    *["receive_many"] * 2,
    *["receive_nowait"] * 2,
    *["receive_nowait_many"] * 2,
    *["cancel"] * 3,
    "drain",
    "close",
)
SYNC_OPS = frozenset(
    {"try_send", "signal", "receive_nowait", "receive_nowait_many", "drain", "close"}
)


def _one_step_in(n: int, spec: tuple[int, str, int]) -> tuple[int, str] | None:
    # the last value, not 0, means "cancel": shrinking goes towards no cancel
    return (spec[0], spec[1]) if spec[2] == n - 1 else None


# A cancellation in about one step in five before the operation, and one in
# three right after it (racing whatever the operation woke): whom (an index into
# the busy workers) and how. More often, and no sender would wait long enough
# to be handed a unit.
def cancels(one_in: int) -> st.SearchStrategy[tuple[int, str] | None]:
    return st.tuples(
        st.integers(0, 3),
        st.sampled_from(["scope", "native"]),
        st.integers(0, one_in - 1),
    ).map(lambda spec: _one_step_in(one_in, spec))


steps = st.tuples(st.sampled_from(OPS), st.integers(0, 3), cancels(4), cancels(3))
programs = st.tuples(
    st.sampled_from([1, 1, 2, 3, None]),  # capacity
    st.integers(1, 3),  # producers
    st.lists(steps, min_size=10, max_size=60),
)


# -- the model -------------------------------------------------------------------


class Model:
    """The contract, executed sequentially.

    Worker states: idle, parked (waiting in send or receive), handed (a parked
    sender whose message moved in this step), withdrawn (a parked sender woken
    by close this step), woken (the parked consumer, woken this step), done
    (finishes during this step's settling).
    """

    def __init__(self, capacity: int | None, workers: list[int]) -> None:
        self.capacity = math.inf if capacity is None else capacity
        self.closed = False
        self.queue: deque[Item] = deque()
        self.used = 0
        self.waiting: deque[int] = deque()
        self.parked_item: dict[int, Item] = {}
        self.state = dict.fromkeys(workers, "idle")
        self.expect: dict[int, Outcome] = {}
        self.consumer_limit = 1
        self.consumer_many = False
        self.log: list[Item] = []
        self.takes = 0

    def enqueue(self, item: Item) -> None:
        self.queue.append(item)
        if not isinstance(item, Sig):
            self.used += 1
        if self.state[CONSUMER] == "parked":
            self.state[CONSUMER] = "woken"

    def take(self, limit: int) -> list[Item]:
        items = [self.queue.popleft() for _ in range(min(limit, len(self.queue)))]
        self.takes += 1
        self.used -= sum(not isinstance(item, Sig) for item in items)
        # the released units go to the oldest waiting senders, in this step
        while self.waiting and self.used < self.capacity:
            producer = self.waiting.popleft()
            self.enqueue(self.parked_item.pop(producer))
            self.state[producer] = "handed"
            self.expect[producer] = ("ok",)
        self.log.extend(items)
        return items

    def try_send(self, item: Item) -> str:
        if self.closed:
            return "closed"
        if not isinstance(item, Sig) and self.used >= self.capacity:
            return "full"
        self.enqueue(item)
        return "ok"

    def start_send(self, producer: int, item: Item) -> None:
        outcome = self.try_send(item)
        if outcome == "full":
            self.waiting.append(producer)
            self.parked_item[producer] = item
            self.state[producer] = "parked"
        else:
            self.state[producer] = "done"
            self.expect[producer] = (outcome,)

    def start_receive(self, limit: int, many: bool) -> None:
        self.consumer_limit, self.consumer_many = limit, many
        self.state[CONSUMER] = "parked"
        self.resolve_consumer()

    def resolve_consumer(self) -> None:
        """A receive that is not (or no longer) waiting takes its items."""
        if self.queue:
            items = self.take(self.consumer_limit)
            self.expect[CONSUMER] = ("ok", items)
        elif self.closed:
            self.expect[CONSUMER] = ("end",)
        else:
            self.state[CONSUMER] = "parked"
            return
        self.state[CONSUMER] = "done"

    def receive_nowait(self, limit: int) -> Outcome:
        if self.queue:
            return ("ok", self.take(limit))
        return ("end",) if self.closed else ("wouldblock",)

    def close(self) -> None:
        self.closed = True
        for producer in self.waiting:
            self.state[producer] = "withdrawn"
            self.expect[producer] = ("closed",)
            del self.parked_item[producer]
        self.waiting.clear()
        if self.state[CONSUMER] == "parked":
            self.state[CONSUMER] = "woken"

    def cancel(self, worker: int, native: bool) -> bool:
        """Whether the cancellation reaches a task at all."""
        state = self.state[worker]
        if state != "idle":  # shown by --hypothesis-show-statistics
            who = "consumer" if worker == CONSUMER else "sender"
            event(f"{'native' if native else 'scope'} cancel of a {state} {who}")
        if state == "parked":  # not woken: cancelled, leaves nothing behind
            if worker != CONSUMER:
                self.waiting.remove(worker)
                del self.parked_item[worker]
            self.state[worker] = "done"
            self.expect[worker] = ("cancelled",)
        elif state in ("handed", "withdrawn", "woken"):
            # Woken, not yet resumed: only a native cancel still lands, and it
            # undoes nothing (a handed message stays queued; a woken consumer
            # takes nothing, so the items stay).
            if native:
                self.state[worker] = "done"
                self.expect[worker] = ("cancelled",)
        else:
            return False
        return True

    def end_step(self) -> None:
        if self.state[CONSUMER] == "woken":
            self.resolve_consumer()


# -- the tasks ---------------------------------------------------------------------


@dataclass(eq=False)
class Worker:
    index: int
    wake: anyio.Event
    command: tuple[str, Any] | None = None
    busy: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    task: asyncio.Task[Any] | None = None
    native: bool = False
    result: Outcome | None = None


async def perform(
    worker: Worker, mailbox: Mailbox[Any], command: tuple[str, Any], log: list[Item]
) -> Outcome:
    kind, arg = command
    worker.native = False
    scope = worker.scope = anyio.CancelScope()
    try:
        with scope:
            if kind == "send":
                await mailbox.send(arg)
                return ("ok",)
            if kind == "receive":
                items = [await mailbox.receive()]
            else:
                items = await mailbox.receive_many(arg)
            log.extend(items)  # no await since the take: in taking order
            return ("ok", items)
        return ("cancelled",)  # the scope caught its own cancellation
    except MailboxClosed:
        return ("closed",)
    except EndOfMailbox:
        return ("end",)
    except asyncio.CancelledError:
        if not worker.native:
            raise
        asyncio.current_task().uncancel()  # type: ignore[union-attr]
        return ("cancelled",)


async def work(worker: Worker, mailbox: Mailbox[Any], log: list[Item]) -> None:
    if _on_asyncio():
        worker.task = asyncio.current_task()
    while True:
        await worker.wake.wait()
        worker.wake = anyio.Event()
        if worker.command is None:
            return
        worker.result = await perform(worker, mailbox, worker.command, log)
        worker.busy = False


def _on_asyncio() -> bool:
    import sniffio

    return sniffio.current_async_library() == "asyncio"


async def settle() -> None:
    """Let every task run until all are blocked again (no sleeping)."""
    for _ in range(3):
        await checkpoint()
    await wait_all_tasks_blocked()


# -- the test ------------------------------------------------------------------------


@settings(
    max_examples=200,
    deadline=None,
    # no "explain" phase: it traces every line of the pure-Python asyncio loop
    # and turns a shrink of seconds into minutes
    phases=[phase for phase in Phase if phase != Phase.explain],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=programs)
async def test_random_interleavings_lose_nothing_duplicate_nothing_and_keep_fifo(
    anyio_backend_name: str, program: tuple[int | None, int, list[Any]]
) -> None:
    capacity, n_producers, program_steps = program
    native_ok = anyio_backend_name == "asyncio"
    mailbox: Mailbox[Any] = Mailbox(capacity)
    log: list[Item] = []
    workers = {i: Worker(i, anyio.Event()) for i in (*range(n_producers), CONSUMER)}
    model = Model(capacity, list(workers))
    seqs = [0] * n_producers
    accepted: set[tuple[int, int]] = set()  # must be received exactly once
    maybe: set[tuple[int, int]] = set()  # natively cancelled sends: at most once
    sending: dict[int, Item] = {}
    most_waiting = 0

    def next_item(producer: int, signal: bool) -> Item:
        seqs[producer] += 1
        seq = seqs[producer]
        return Sig(producer, seq) if signal else (producer, seq)

    def command(worker: Worker, cmd: tuple[str, Any]) -> None:
        worker.command, worker.busy, worker.result = cmd, True, None
        worker.wake.set()

    def cancel(spec: tuple[int, str] | None) -> str:
        """Cancel a busy worker; return the state it was cancelled in."""
        if spec is None:
            return "none"
        choice, kind = spec
        # aim at a busy worker when there is one, so cancellations race
        busy = [i for i, state in model.state.items() if state != "idle"]
        if not busy:
            return "none"
        target = busy[choice % len(busy)]
        native = kind == "native" and native_ok
        state = model.state[target]
        if not model.cancel(target, native):
            return "none"
        worker = workers[target]
        assert worker.busy
        if native:
            worker.native = True
            assert worker.task is not None
            worker.task.cancel()
        else:
            worker.scope.cancel()
        return state if target == CONSUMER else f"{state} sender"

    def check_statistics() -> None:
        stats = mailbox.statistics()
        assert stats.units_in_use == stats.queued_messages
        assert stats.queued_messages + stats.queued_signals == len(mailbox)

    def verify() -> None:
        for index, worker in workers.items():
            state = model.state[index]
            assert worker.busy == (state == "parked"), (index, state, worker.result)
            if state != "parked":
                model.state[index] = "idle"
            if index in model.expect:
                expected = model.expect.pop(index)
                assert worker.result == expected, (index, worker.result, expected)
                if index != CONSUMER:
                    item = sending.pop(index)
                    if expected == ("ok",):
                        accepted.add(key(item))
                    elif worker.native:
                        maybe.add(key(item))
        check_statistics()
        stats = mailbox.statistics()
        assert stats.units_in_use == model.used
        assert len(mailbox) == len(model.queue)
        assert stats.waiting_senders == len(model.waiting)
        if stats.waiting_senders:  # nobody can barge: no unit is free
            assert stats.units_in_use == capacity
            assert not mailbox.closed
        assert mailbox.closed == model.closed
        assert log == model.log
        # The direct path (Mailbox.direct) is open exactly while a plain
        # append is a send: open, no quota, no consumer waiting.
        waiting = mailbox._consumer is not None
        expected_direct = capacity is None and not mailbox.closed and not waiting
        assert (mailbox.direct is not None) == expected_direct
        assert mailbox.direct is None or mailbox.direct is mailbox._queue

    async with anyio.create_task_group() as tg:
        for worker in workers.values():
            tg.start_soon(work, worker, mailbox, log)
        await settle()

        for op, arg, before, after in program_steps:
            producer = arg % n_producers
            limit = arg + 1
            cancelled = cancel(before)
            takes = model.takes
            if op in ("try_send", "signal") and model.state[producer] == "idle":
                item = next_item(producer, op == "signal")
                expected = model.try_send(item)
                try:
                    if isinstance(item, Sig):
                        mailbox.send_signal(item)
                    else:
                        mailbox.try_send(item)
                    actual = "ok"
                except MailboxFull:
                    actual = "full"
                except MailboxClosed:
                    actual = "closed"
                assert actual == expected, (op, item)
                if actual == "ok":
                    accepted.add(key(item))
            elif op == "send" and model.state[producer] == "idle":
                item = sending[producer] = next_item(producer, False)
                model.start_send(producer, item)
                command(workers[producer], ("send", item))
            elif op in ("receive", "receive_many") and model.state[CONSUMER] == "idle":
                many = op == "receive_many"
                model.start_receive(limit if many else 1, many)
                command(workers[CONSUMER], (op, limit))
            elif op in ("receive_nowait", "receive_nowait_many", "drain"):
                if op == "drain":
                    expected_taken = ("ok", model.take(len(model.queue)))
                    actual_taken: Outcome = ("ok", mailbox.take_all())
                else:
                    many = op == "receive_nowait_many"
                    expected_taken = model.receive_nowait(limit if many else 1)
                    try:
                        if many:
                            actual_taken = ("ok", mailbox.receive_nowait_many(limit))
                        else:
                            actual_taken = ("ok", [mailbox.receive_nowait()])
                    except WouldBlock:
                        actual_taken = ("wouldblock",)
                    except EndOfMailbox:
                        actual_taken = ("end",)
                if actual_taken[0] == "ok":
                    log.extend(actual_taken[1])
                assert actual_taken == expected_taken, op
            elif op == "close" and arg == 3:  # rare: the rest would only be refused
                model.close()
                mailbox.close()
            elif op == "cancel":
                cancel(after or (arg, "scope"))
            if cancelled == "parked sender" and model.takes > takes and op in SYNC_OPS:
                event("a parked sender cancelled, then a unit released at once")
            check_statistics()
            if op in SYNC_OPS:
                cancel(after)  # lands before any woken task resumes
            model.end_step()
            await settle()
            verify()
            most_waiting = max(most_waiting, len(model.waiting))

        event(f"at most {most_waiting} senders waited at once")
        event(f"steps ~{len(program_steps) // 10 * 10}")
        event("closed during the program" if model.closed else "closed at the end")
        # Close, let everyone finish, take what is left.
        model.close()
        mailbox.close()
        model.end_step()
        await settle()
        verify()
        assert not any(worker.busy for worker in workers.values())
        left = mailbox.take_all()
        log.extend(left)
        assert left == model.take(len(model.queue))
        for worker in workers.values():
            worker.command = None
            worker.wake.set()

    # Independent of the model: nothing lost, nothing duplicated, FIFO.
    keys = [key(item) for item in log]
    assert len(keys) == len(set(keys)), "an item was delivered twice"
    assert accepted <= set(keys), "an accepted item was lost"
    assert set(keys) <= accepted | maybe, "an item that was refused got in"
    for producer in range(n_producers):
        seqs_seen = [seq for p, seq in keys if p == producer]
        assert seqs_seen == sorted(seqs_seen), f"producer {producer} reordered"
    stats = mailbox.statistics()
    assert stats.units_in_use == stats.queued_messages == 0
