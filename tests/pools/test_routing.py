"""Routing: every message is handled exactly once by one worker; round-robin
spreads evenly; the shared queue hands idle workers batches of up to ``drain``
and never wakes more workers than a burst feeds."""

from __future__ import annotations

from typing import Any

import pytest

from actors import ActorSystem

from ._support import (
    ROUTINGS,
    Hold,
    Journal,
    Worker,
    hold_every_worker,
    release,
    wait_all_blocked,
)

pytestmark = pytest.mark.anyio


@ROUTINGS
async def test_every_told_message_is_handled_exactly_once(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 4, journal, routing=routing, drain=8)
        for n in range(1000):
            pool.tell(n)
        await wait_all_blocked()
        assert sorted(journal.messages()) == list(range(1000))
        assert system.dead_letters.count == 0


@ROUTINGS
async def test_every_sent_message_is_handled_exactly_once(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(
            Worker, 3, journal, routing=routing, capacity=4, drain=2
        )
        for n in range(500):
            await pool.send(n)
        await wait_all_blocked()
        assert sorted(journal.messages()) == list(range(500))


@ROUTINGS
async def test_each_worker_handles_its_messages_in_the_order_they_were_told(
    routing: Any,
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing=routing, drain=5)
        for n in range(300):
            pool.tell(n)
        await wait_all_blocked()
    for messages in journal.by_worker().values():
        assert messages == sorted(messages)


async def test_round_robin_spreads_messages_evenly_over_the_workers() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing="round_robin")
        for n in range(300):
            pool.tell(n)
        await wait_all_blocked()
    spread = journal.by_worker()
    assert sorted(spread) == ["worker-0", "worker-1", "worker-2"]
    # In turn: worker k gets exactly the messages n with n % 3 == k.
    for index, name in enumerate(sorted(spread)):
        assert spread[name] == list(range(index, 300, 3))


async def test_round_robin_skips_a_full_worker() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="round_robin", capacity=1)
        holds = await hold_every_worker(pool)
        pool.tell("a")  # worker-0: now full
        pool.tell("b")  # worker-1: now full
        pool.workers[1].stop()  # its mailbox closes: skipped as well
        release(holds)
        await wait_all_blocked()
        pool.tell("c")  # worker-1 is stopped: worker-0 takes it
        await wait_all_blocked()
    assert journal.by_worker()["worker-0"] == ["hold", "a", "c"]


async def test_a_burst_hands_one_message_to_each_idle_worker_and_queues_the_rest() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue", drain=4)
        await wait_all_blocked()  # both workers idle, parked on the queue
        assert pool._shared is not None
        state = pool._shared.state
        for n in range(10):
            pool.tell(n)
        # Without a single yield: 0 and 1 woke the two workers; the rest wait
        # for them to take their shares.
        queued = [getattr(item, "message", item) for item in state.buffer]
        assert queued == list(range(2, 10))  # (traced: without the envelopes)
        assert state.receive_wakeups == 2
        await wait_all_blocked()
    assert sorted(journal.messages()) == list(range(10))
    assert len(journal.by_worker()) == 2


async def test_a_busy_worker_takes_the_backlog_in_batches_without_wakeups() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing="shared_queue", drain=8)
        await wait_all_blocked()
        assert pool._shared is not None
        state = pool._shared.state
        holds = await hold_every_worker(pool)
        for n in range(100):
            pool.tell(n)
        assert len(state.buffer) == 100  # nobody idle: all queued
        release(holds)
        await wait_all_blocked()
        # The one wakeup is the held worker's own lane, not the queue's: the
        # backlog was pulled by a running worker, batch after batch.
        assert state.receive_wakeups == 0
    assert journal.messages() == ["hold", *range(100)]


@pytest.mark.parametrize(
    ("burst", "woken"),
    [(1, 1), (2, 2), (3, 3), (4, 4), (5, 4), (9, 4), (100, 4)],
)
async def test_a_burst_never_wakes_more_workers_than_it_feeds(
    burst: int, woken: int
) -> None:
    # 4 idle workers: a burst of k wakes min(4, k) of them, one message each.
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 4, journal, routing="shared_queue", drain=8)
        await wait_all_blocked()
        assert pool._shared is not None
        state = pool._shared.state
        for n in range(burst):
            pool.tell(n)
        assert state.receive_wakeups == woken
        await wait_all_blocked()
        # The rest of the burst was pulled by workers already running.
        assert state.receive_wakeups == woken
        assert sorted(journal.messages()) == list(range(burst))
        assert len(journal.by_worker()) == woken


async def test_bursts_one_after_another_add_up_only_the_wakeups_they_need() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 4, journal, routing="shared_queue", drain=8)
        await wait_all_blocked()
        assert pool._shared is not None
        state = pool._shared.state
        sent = 0
        for burst, woken in ((3, 3), (10, 4), (100, 4), (1, 1)):
            before = state.receive_wakeups
            for _ in range(burst):
                pool.tell(sent)
                sent += 1
            await wait_all_blocked()
            assert state.receive_wakeups - before == woken
        assert sorted(journal.messages()) == list(range(sent))


async def test_shared_queue_drain_defaults_to_the_systems_drain() -> None:
    journal = Journal()
    async with ActorSystem(drain=5) as system:
        pool = system.spawn_pool(Worker, 1, journal, routing="shared_queue")
        await wait_all_blocked()
        assert pool._shared is not None
        hold = Hold()
        pool.tell(hold)  # handed to the idle worker
        for n in range(12):
            pool.tell(n)
        await hold.entered.wait()
        # Its first batch was the hold and 4 more: 5 items.
        queued = [getattr(i, "message", i) for i in pool._shared.state.buffer]
        assert queued == list(range(4, 12))  # (traced: without the envelopes)
        hold.release.set()
        await wait_all_blocked()
    assert journal.messages() == ["hold", *range(12)]


async def test_a_message_told_to_a_workers_own_ref_goes_to_that_worker() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing="shared_queue")
        await wait_all_blocked()
        pool.workers[2].tell("mine")
        await wait_all_blocked()
    assert journal.entries == [("worker-2", "mine")]
