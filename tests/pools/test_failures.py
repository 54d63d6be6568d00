"""Supervision by the pool: a failed worker is restarted (fresh instance, same
ref) and no other queued work is lost, not even what the failed worker had
taken in its batch but not handled yet."""

from __future__ import annotations

from typing import Any

import pytest

from actors import ActorSystem, DeadLetter

from ._support import (
    BOOM,
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
async def test_a_failed_worker_is_restarted_with_a_fresh_instance_and_the_same_ref(
    routing: Any,
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        before = pool.workers
        await wait_all_blocked()
        assert journal.instances == 2
        before[1].tell(BOOM)
        await wait_all_blocked()
        assert journal.instances == 3
        assert system.restarts == 1
        assert pool.workers == before
        assert all(worker.is_alive for worker in pool.workers)
        assert list(system.dead_letters.recent) == [
            DeadLetter(before[1], BOOM, "handler failed")
        ]
        before[1].tell("after")
        await wait_all_blocked()
    assert journal.entries == [("worker-1", "after")]


async def test_a_failed_worker_keeps_the_rest_of_its_batch() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue", drain=4)
        await wait_all_blocked()
        assert pool._shared is not None
        holds = [Hold()]
        pool.workers[1].tell(holds[0])  # worker-1 busy: worker-0 alone is idle
        await holds[0].entered.wait()
        # worker-0 is handed 0 and, when it runs, takes its share of the
        # queue (3 of 5, two workers): [0, boom, 2, 3]; 4 and 5 stay queued.
        for message in (0, BOOM, 2, 3, 4, 5):
            pool.tell(message)
        await wait_all_blocked()
        assert system.restarts == 1
        release(holds)
        await wait_all_blocked()
    assert sorted(m for m in journal.messages() if m != "hold") == [0, 2, 3, 4, 5]
    # The failed worker's 2 and 3 were handled by its next incarnation, in
    # order, not dropped and not handed to the other worker.
    assert journal.by_worker()["worker-0"][:3] == [0, 2, 3]
    assert system.dead_letters.count == 1


async def test_a_failed_worker_never_loses_the_shared_backlog() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing="shared_queue", drain=5)
        holds = await hold_every_worker(pool)
        messages: list[Any] = [BOOM if n % 50 == 7 else n for n in range(500)]
        for message in messages:
            pool.tell(message)
        release(holds)
        await wait_all_blocked()
        assert system.restarts == messages.count(BOOM)
    assert sorted(journal.messages(), key=str) == sorted(
        ["hold"] * 3 + [m for m in messages if m != BOOM], key=str
    )
    assert system.dead_letters.count == messages.count(BOOM)


async def test_a_failed_round_robin_worker_keeps_its_queued_messages() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="round_robin", drain=2)
        holds = await hold_every_worker(pool)
        for message in (BOOM, "a", 1, "b", 2, "c", 3, "d"):
            pool.tell(message)  # worker-0: boom, 1, 2, 3; worker-1: a, b, c, d
        release(holds)
        await wait_all_blocked()
        assert system.restarts == 1
    assert journal.by_worker() == {
        "worker-0": ["hold", 1, 2, 3],
        "worker-1": ["hold", "a", "b", "c", "d"],
    }


async def test_the_other_workers_go_on_while_one_awaits_its_restart() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue", drain=1)
        await wait_all_blocked()
        for message in (BOOM, *range(20)):
            pool.tell(message)
        await wait_all_blocked()
    assert sorted(journal.messages()) == list(range(20))


async def test_a_pool_restarted_after_too_many_failures_still_takes_messages() -> None:
    # Beyond the pool's restart intensity the pool itself fails and its parent
    # restarts it with fresh workers: the shared queue must stay open (it was
    # closed by the pool's on_stop, so the live pool refused every message).
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing="shared_queue", drain=1)
        await wait_all_blocked()
        for _ in range(12):  # the pool allows 10 restarts within 1 s
            pool.tell(BOOM)
            await wait_all_blocked()
        assert pool.is_alive
        assert journal.instances >= 2
        pool.tell("still served")
        assert await pool.ask("asked") == ("worker-0", "asked")
        await wait_all_blocked()
    assert journal.messages()[-2:] == ["still served", "asked"]


@ROUTINGS
async def test_a_stopped_worker_leaves_the_queue_to_the_others(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing=routing, drain=2)
        holds = await hold_every_worker(pool)
        pool.workers[0].stop()  # it stops once its hold is released
        for n in range(30):
            pool.tell(n)
        release(holds)
        await wait_all_blocked()
        assert system.dead_letters.count == 0
    assert sorted(m for m in journal.messages() if m != "hold") == list(range(30))
    assert "worker-0" not in {name for name, m in journal.entries if m != "hold"}
