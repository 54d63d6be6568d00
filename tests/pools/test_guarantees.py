"""The pools' guarantees, each under the name of the guarantee: every message is
handled exactly once, or rejected at the call, or counted as a dead letter
(queued asks failing with ActorStopped), whatever way the pool or a worker
ends; a pool being restarted keeps its ref and its messages, as an actor does;
idle workers share a burst."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    Backoff,
    MailboxFull,
    OneForAll,
    PoolRef,
    SystemNotRunning,
    Telemetry,
)
from actors._shared_queue import SharedQueue, WorkerMailbox
from actors.channel.lowlevel import current_backend

from ._support import (
    ROUTINGS,
    Hold,
    Journal,
    Worker,
    hold_every_worker,
    on_asyncio,
    release,
    wait_all_blocked,
)

pytestmark = pytest.mark.anyio

#: Plain, and with telemetry on (traced refs and loop; no-op global providers).
TRACED = pytest.mark.parametrize("traced", [False, True], ids=["plain", "traced"])


def _telemetry(traced: bool) -> Telemetry | None:
    return Telemetry() if traced else None


def _letters(system: ActorSystem) -> list[str]:
    """The dead letters' messages, as sorted strings, without the test's own
    (the failure trigger, the holds being handled at a cancellation)."""
    return sorted(
        str(letter.message)
        for letter in system.dead_letters.recent
        if letter.message != "fail" and not isinstance(letter.message, Hold)
    )


async def _ask_and_keep(pool: PoolRef[Any], message: Any, out: list[Any]) -> None:
    """Ask the pool; keep the reply or the exception in ``out``."""
    try:
        out.append(await pool.ask(message, timeout=60))
    except Exception as exc:
        out.append(exc)


async def _ask_unless_stopped(
    pool: PoolRef[Any], message: Any, rejected: set[Any]
) -> None:
    """Ask the pool; a pool that has stopped by then (every worker stopped:
    it stops too) refuses the ask at the call, so it is not a message."""
    if not pool.is_alive:
        rejected.add(message)
    await _ask_and_keep(pool, message, [])


# -- each message leaves a worker's lanes exactly once ------------------------


async def test_an_own_lane_item_that_came_with_a_hand_off_is_returned_once() -> None:
    shared = SharedQueue(None, current_backend())
    mailbox = WorkerMailbox(shared)
    batches: list[list[Any]] = []

    async def consume() -> None:
        batches.append(await mailbox.receive_many_unchecked(8))
        batches.append(await mailbox.receive_many_unchecked(8))

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await wait_all_blocked()  # parked on the shared queue
        shared.try_send("shared")  # handed to the parked worker, which is woken
        mailbox.try_send("own")  # lands in its own lane in the same step
        await wait_all_blocked()
    assert batches == [["shared"], ["own"]]
    assert mailbox.take_all() == []


@pytest.mark.parametrize("lane", ["tell", "broadcast", "ask"])
async def test_a_shared_queue_worker_handles_each_message_once_when_its_lane_and_the_queue_feed_it_in_one_step(  # noqa: E501
    lane: str,
) -> None:
    journal = Journal()
    replies: list[Any] = []
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing="shared_queue")
        await wait_all_blocked()
        async with anyio.create_task_group() as tg:
            pool.tell("shared")  # handed to the parked worker
            if lane == "tell":
                pool.workers[0].tell("own")
            elif lane == "broadcast":
                pool.broadcast("own")
            else:

                async def ask() -> None:
                    replies.append(await pool.workers[0].ask("own"))

                tg.start_soon(ask)
            await wait_all_blocked()
    assert sorted(journal.messages()) == ["own", "shared"]
    assert replies == ([("worker-0", "own")] if lane == "ask" else [])
    assert system.dead_letters.count == 0


async def test_a_worker_stopped_after_the_hand_off_passes_the_message_on() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue")
        await wait_all_blocked()
        shared = pool._shared
        assert shared is not None
        first = shared.state.receivers[0].owner  # the oldest parked worker
        (handed,) = [w for w in pool.workers if w._cell.mailbox is first]
        pool.tell("x")  # handed to it...
        handed.stop()  # ...and it stops before it runs
        await wait_all_blocked()
    assert journal.by_worker() == {
        next(w.name for w in pool.workers if w is not handed): ["x"]
    }
    assert system.dead_letters.count == 0


async def test_items_handed_to_a_worker_cancelled_natively_go_to_the_next_worker() -> (
    None
):
    if not on_asyncio():
        pytest.skip("Trio cannot cancel a task after it was rescheduled")
    shared = SharedQueue(None, current_backend())
    first, second = WorkerMailbox(shared), WorkerMailbox(shared)
    batches: list[list[Any]] = []

    async def consume(mailbox: WorkerMailbox) -> None:
        batches.append(await mailbox.receive_many_unchecked(8))

    task = asyncio.ensure_future(consume(first))
    await wait_all_blocked()
    other = asyncio.ensure_future(consume(second))
    await wait_all_blocked()
    shared.try_send(1)  # handed to the first parked worker
    first.try_send("own")  # and something in its own lane
    task.cancel()  # before it resumes
    await wait_all_blocked()
    assert task.cancelled()
    assert other.done()
    assert batches == [[1]]  # the second worker got it, once
    assert first.take_all() == ["own"]  # the own lane kept its item


@pytest.mark.parametrize("order", ["in_order", "reversed"])
async def test_two_workers_cancelled_after_hand_off_give_back_oldest_first(
    order: str,
) -> None:
    # The shared queue gives back through the channel's rule: oldest item
    # first across every give-back, whatever order the cancellations land in.
    if not on_asyncio():
        pytest.skip("Trio cannot cancel a task after it was rescheduled")
    shared = SharedQueue(None, current_backend())
    workers = [WorkerMailbox(shared) for _ in range(2)]
    tasks = []
    for mailbox in workers:
        tasks.append(asyncio.ensure_future(mailbox.receive_many_unchecked(8)))
        await wait_all_blocked()
    shared.try_send(1)  # to the first parked worker
    shared.try_send(2)  # to the second
    shared.try_send(3)  # queued
    for task in tasks if order == "in_order" else reversed(tasks):
        task.cancel()  # before it resumes
    await wait_all_blocked()
    assert all(task.cancelled() for task in tasks)
    assert list(shared.state.buffer) == [1, 2, 3]


async def test_items_handed_to_a_worker_cancelled_natively_after_the_pool_stopped_stay_its_leftovers() -> (  # noqa: E501
    None
):
    if not on_asyncio():
        pytest.skip("Trio cannot cancel a task after it was rescheduled")
    shared = SharedQueue(None, current_backend())
    mailbox = WorkerMailbox(shared)
    task = asyncio.ensure_future(mailbox.receive_many_unchecked(8))
    await wait_all_blocked()
    shared.try_send(1)
    assert shared.close() == []  # the pool stops: its queue is drained...
    task.cancel()  # ...then the worker is cancelled before it resumes
    await wait_all_blocked()
    assert task.cancelled()
    assert mailbox.take_all() == [1]  # its leftovers: dead letters for the cell


# -- nothing vanishes however the pool ends ----------------------------------


class Stuck(Actor):
    """Never returns from a Hold: its pool's teardown can only be cancelled."""

    def __init__(self, holds: list[Hold]) -> None:
        self.holds = holds

    async def receive(self, message: Any) -> None:
        if isinstance(message, Hold):
            message.entered.set()
            await anyio.sleep_forever()


@ROUTINGS
async def test_a_pool_torn_down_by_the_shutdown_timeout_settles_its_queued_messages(
    routing: Any,
) -> None:
    replies: list[Any] = []
    async with (
        anyio.create_task_group() as asking,
        ActorSystem(shutdown_timeout=0.05) as system,
    ):
        pool = system.spawn_pool(Stuck, 1, [], routing=routing)
        await hold_every_worker(pool)
        for n in range(5):
            pool.tell(n)
        asking.start_soon(_ask_and_keep, pool, "asked", replies)
        await wait_all_blocked()
    assert _letters(system) == ["0", "1", "2", "3", "4", "asked"]
    assert len(replies) == 1 and isinstance(replies[0], ActorStopped)


class Failing(Actor):
    def receive(self, message: Any) -> None:
        raise RuntimeError("fail on purpose")


class Group(Actor):
    """One-for-all over [its pool, a child that fails on demand]; a long
    backoff keeps the pool suspended (its workers stopped) until stopped."""

    supervisor_strategy = OneForAll(backoff=Backoff(min_delay=60, max_delay=60))

    def __init__(self, routing: Any, journal: Journal, out: list[Any]) -> None:
        self.routing = routing
        self.journal = journal
        self.out = out

    def on_start(self) -> None:
        pool = self.context.spawn_pool(
            Worker, 2, self.journal, routing=self.routing, name="pool"
        )
        failing = self.context.spawn(Failing, name="failing")
        self.out[:] = [pool, failing]


@TRACED
@ROUTINGS
async def test_a_pool_stopped_while_its_parents_restart_suspends_it_settles_its_queue(
    routing: Any, traced: bool
) -> None:
    journal = Journal()
    out: list[Any] = []
    replies: list[Any] = []
    async with (
        anyio.create_task_group() as asking,
        ActorSystem(telemetry=_telemetry(traced)) as system,
    ):
        group = system.spawn(Group, routing, journal, out)
        await wait_all_blocked()
        pool, failing = out
        old = pool.workers
        failing.tell("fail")  # the group suspends the pool: its workers stop
        for worker in old:
            await worker.join()
        assert pool.is_alive
        for n in range(3):
            pool.tell(n)  # accepted: the pool keeps them for its next workers
        asking.start_soon(_ask_and_keep, pool, "asked", replies)
        await wait_all_blocked()
        group.stop()  # during the backoff: the suspended pool stops with it
        await pool.join()
    assert journal.entries == []
    assert _letters(system) == ["0", "1", "2", "asked"]
    assert len(replies) == 1 and isinstance(replies[0], ActorStopped)


@TRACED
@ROUTINGS
async def test_a_pool_stopped_by_its_parent_fails_queued_asks_and_dead_letters_queued_messages(  # noqa: E501
    routing: Any, traced: bool
) -> None:
    journal = Journal()
    out: list[Any] = []
    replies: list[Any] = []
    async with (
        anyio.create_task_group() as asking,
        ActorSystem(telemetry=_telemetry(traced)) as system,
    ):
        group = system.spawn(Group, routing, journal, out)
        await wait_all_blocked()
        pool = out[0]
        holds = await hold_every_worker(pool)
        for n in range(4):
            pool.tell(n)
        asking.start_soon(_ask_and_keep, pool, "asked", replies)
        await wait_all_blocked()
        group.stop()
        await wait_all_blocked()  # the pool is stopping, its workers held
        release(holds)
        await pool.join()
    assert journal.messages() == ["hold", "hold"]
    assert _letters(system) == ["0", "1", "2", "3", "asked"]
    assert len(replies) == 1 and isinstance(replies[0], ActorStopped)


# -- a pool being restarted keeps its ref and its messages --------------------


class Gate(Actor):
    """Its on_stop waits for ``gate``: a one-for-all restart that suspends it
    waits there, with the siblings suspended before it still stopped."""

    def __init__(self, stopping: anyio.Event, gate: anyio.Event) -> None:
        self.stopping = stopping
        self.gate = gate

    async def on_stop(self) -> None:
        self.stopping.set()
        await self.gate.wait()


class GatedGroup(Actor):
    """One-for-all over [gate, pool, failing]: the restart suspends failing,
    then the pool, then waits in gate's on_stop; then starts them in order."""

    supervisor_strategy = OneForAll()

    def __init__(
        self,
        routing: Any,
        journal: Journal,
        stopping: anyio.Event,
        gate: anyio.Event,
        out: list[Any],
        capacity: int | None = None,
    ) -> None:
        self.args = routing, journal, stopping, gate, out, capacity

    def on_start(self) -> None:
        routing, journal, stopping, gate, out, capacity = self.args
        self.context.spawn(Gate, stopping, gate, name="gate")
        pool = self.context.spawn_pool(
            Worker, 2, journal, routing=routing, name="pool", capacity=capacity
        )
        failing = self.context.spawn(Failing, name="failing")
        out[:] = [pool, failing]


@TRACED
@ROUTINGS
async def test_a_pool_being_restarted_by_its_parent_accepts_and_keeps_messages_for_its_new_workers(  # noqa: E501
    routing: Any, traced: bool
) -> None:
    journal = Journal()
    stopping, gate = anyio.Event(), anyio.Event()
    out: list[Any] = []
    replies: list[Any] = []
    async with (
        anyio.create_task_group() as asking,
        ActorSystem(telemetry=_telemetry(traced)) as system,
    ):
        system.spawn(GatedGroup, routing, journal, stopping, gate, out)
        await wait_all_blocked()
        pool, failing = out
        old = [worker._cell for worker in pool.workers]
        failing.tell("fail")
        await stopping.wait()  # the pool is suspended: no worker is running
        assert all(cell.mailbox.closed for cell in old)
        assert pool.is_alive
        pool.tell("told")
        await pool.send("sent")
        pool.broadcast("everyone")
        asking.start_soon(_ask_and_keep, pool, "asked", replies)
        await wait_all_blocked()
        assert journal.entries == []
        gate.set()  # the group starts its children again
        await wait_all_blocked()
        assert all(w._cell not in old for w in pool.workers)
    assert sorted(journal.messages()) == [
        "asked",
        "everyone",
        "everyone",
        "sent",
        "told",
    ]
    assert len(replies) == 1 and replies[0][1] == "asked"
    assert _letters(system) == []


async def test_a_round_robin_pool_being_restarted_holds_its_quota_and_send_waits() -> (
    None
):
    journal = Journal()
    stopping, gate = anyio.Event(), anyio.Event()
    out: list[Any] = []
    async with ActorSystem() as system:
        system.spawn(GatedGroup, "round_robin", journal, stopping, gate, out, 1)
        await wait_all_blocked()
        pool, failing = out
        failing.tell("fail")
        await stopping.wait()  # suspended: its workers are stopped
        pool.tell(1)
        pool.tell(2)  # 2 workers x capacity 1: the pool holds 2
        with pytest.raises(MailboxFull):
            pool.tell(3)
        sent = anyio.Event()

        async def send() -> None:
            await pool.send(3)  # waits for the new workers
            sent.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            await wait_all_blocked()
            assert not sent.is_set()
            gate.set()
        await wait_all_blocked()
    assert sorted(journal.messages()) == [1, 2, 3]
    assert _letters(system) == []


async def test_every_message_held_while_a_round_robin_pool_restarts_is_handled_or_a_dead_letter_when_a_held_broadcast_finds_a_worker_full() -> (  # noqa: E501
    None
):
    # Held while the workers are replaced: broadcast, message, broadcast,
    # message (2 workers x capacity 2). Flushed to the new workers, the second
    # broadcast finds the worker that took the first message full: that worker
    # misses it (a dead letter), and the hold goes on: the last message finds
    # both workers full, a dead letter too. (The flush used to raise the
    # broadcast's MailboxFull out of the pool's restart: the pool failed and
    # the rest of the hold was lost.)
    journal = Journal()
    stopping, gate = anyio.Event(), anyio.Event()
    out: list[Any] = []
    async with ActorSystem() as system:
        system.spawn(GatedGroup, "round_robin", journal, stopping, gate, out, 2)
        await wait_all_blocked()
        pool, failing = out
        failing.tell("fail")
        await stopping.wait()  # suspended: its workers are stopped
        pool.broadcast("everyone 1")
        pool.tell("told 1")
        pool.broadcast("everyone 2")
        await pool.send("sent 2")
        gate.set()  # the group starts its children again
        await wait_all_blocked()
        assert pool.is_alive
        assert system.restarts == 1  # the pool restarted once, and did not fail
    assert sorted(journal.messages()) == [
        "everyone 1",
        "everyone 1",
        "everyone 2",
        "told 1",
    ]
    assert _letters(system) == ["everyone 2", "sent 2"]


@ROUTINGS
async def test_messages_queued_in_old_workers_are_dead_letters_when_the_pool_restarts(
    routing: Any,
) -> None:
    journal = Journal()
    stopping, gate = anyio.Event(), anyio.Event()
    out: list[Any] = []
    replies: list[Any] = []
    async with anyio.create_task_group() as asking, ActorSystem() as system:
        system.spawn(GatedGroup, routing, journal, stopping, gate, out)
        await wait_all_blocked()
        pool, failing = out
        holds = await hold_every_worker(pool)
        for worker in pool.workers:  # in each worker's own mailbox
            worker.tell(f"queued in {worker.name}")
        asking.start_soon(_ask_and_keep, pool.workers[0], "asked", replies)  # type: ignore[arg-type]
        await wait_all_blocked()
        workers = pool.workers
        failing.tell("fail")
        await wait_all_blocked()
        # The pool stops its workers one by one, each after its current message.
        release(holds[1:])
        await workers[1].join()
        await wait_all_blocked()
        release(holds[:1])
        await stopping.wait()
        gate.set()
        await wait_all_blocked()
    assert journal.messages() == ["hold", "hold"]
    assert _letters(system) == [
        "asked",
        "queued in worker-0",
        "queued in worker-1",
    ]
    assert len(replies) == 1 and isinstance(replies[0], ActorStopped)


# -- clear errors ---------------------------------------------------------------


@ROUTINGS
async def test_a_pool_used_after_its_system_exited_raises_system_not_running(
    routing: Any,
) -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, Journal(), routing=routing)
    with pytest.raises(SystemNotRunning):
        pool.tell("late")
    with pytest.raises(SystemNotRunning):
        await pool.send("late")
    with pytest.raises(SystemNotRunning):
        await pool.ask("late")
    with pytest.raises(SystemNotRunning):
        pool.broadcast("late")


# -- idle workers share a burst -------------------------------------------------


async def test_a_burst_of_slow_messages_runs_on_every_idle_worker_at_once() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 4, journal, routing="shared_queue")
        await wait_all_blocked()  # all four idle
        holds = [Hold() for _ in range(16)]
        for hold in holds:
            pool.tell(hold)
        await wait_all_blocked()
        # Each worker is inside a slow message: none sits idle with work queued.
        assert len(journal.by_worker()) == 4
        assert sum(hold.entered.is_set() for hold in holds) == 4
        release(holds)
        await wait_all_blocked()
    assert sorted(journal.by_worker()) == [f"worker-{n}" for n in range(4)]
    assert len(journal.entries) == 16


async def test_a_worker_takes_only_its_share_of_the_backlog_while_others_are_busy() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 4, journal, routing="shared_queue")
        await wait_all_blocked()
        busy = [Hold() for _ in range(3)]
        for worker, hold in zip(pool.workers[1:], busy, strict=True):
            worker.tell(hold)
        await wait_all_blocked()  # worker-0 alone is idle
        holds = [Hold() for _ in range(13)]
        for hold in holds:
            pool.tell(hold)
        await wait_all_blocked()
        shared = pool._shared
        assert shared is not None
        # worker-0 was handed one and took its share of the 12 queued (3).
        assert len(shared.state.buffer) == 9
        release(busy)
        await wait_all_blocked()
        # Back from their slow messages, the others share the rest: every
        # worker is inside a message of the burst.
        inside = {name for name, m in journal.entries[-4:]}
        assert inside == {f"worker-{n}" for n in range(4)}
        release(holds)
        await wait_all_blocked()
    assert journal.messages().count("hold") == 16


# -- a seeded randomized interleaving ------------------------------------------


class Tracker(Actor):
    """Journals ``(its name, id)``; ``("boom", id)`` makes it fail."""

    def __init__(self, seen: list[tuple[str, Any]]) -> None:
        self.seen = seen

    def receive(self, message: Any) -> Any:
        if isinstance(message, tuple):
            raise RuntimeError("fail on purpose")
        self.seen.append((self.context.name, message))
        return message


@ROUTINGS
@pytest.mark.parametrize(
    ("seed", "traced"), [(seed, seed % 4 == 3) for seed in range(12)]
)
async def test_every_message_is_handled_once_rejected_or_a_dead_letter_under_random_interleavings(  # noqa: E501
    routing: Any, seed: int, traced: bool
) -> None:
    rng = random.Random(seed)
    seen: list[tuple[str, Any]] = []
    rejected: set[Any] = set()
    broadcasts: list[int] = []
    sent = 0
    async with (
        anyio.create_task_group() as asking,
        ActorSystem(dead_letters_kept=100_000, telemetry=_telemetry(traced)) as system,
    ):
        pool = system.spawn_pool(
            Tracker, 3, seen, routing=routing, drain=rng.randint(1, 5)
        )
        for _ in range(150):
            sent += 1
            op = rng.random()
            try:
                if op < 0.4:
                    pool.tell(sent)
                elif op < 0.5:
                    asking.start_soon(_ask_unless_stopped, pool, sent, rejected)
                elif op < 0.65:
                    rng.choice(pool.workers).tell(sent)
                elif op < 0.72:
                    pool.broadcast(sent)
                    broadcasts.append(sent)
                elif op < 0.77:
                    pool.tell(("boom", sent))  # a failure: its own dead letter
                elif op < 0.79:
                    rng.choice(pool.workers).stop()
                    rejected.add(sent)  # not a message
                else:
                    rejected.add(sent)
                    for _ in range(rng.randint(1, 4)):
                        await anyio.lowlevel.checkpoint()
            except ActorStopped:
                rejected.add(sent)
        await wait_all_blocked()
    handled: dict[Any, list[str]] = {}
    for name, message in seen:
        handled.setdefault(message, []).append(name)
    dead: dict[Any, int] = {}
    for letter in system.dead_letters.recent:
        message = letter.message
        key = message[1] if isinstance(message, tuple) else message
        dead[key] = dead.get(key, 0) + 1
    for n in range(1, sent + 1):
        if n in rejected:
            assert n not in handled and n not in dead
        elif n in broadcasts:
            names = handled.get(n, [])
            assert len(names) == len(set(names))  # once per worker at most
            assert len(names) + dead.get(n, 0) >= 1
        else:  # exactly once, one way or the other
            assert len(handled.get(n, [])) + dead.get(n, 0) == 1, n
