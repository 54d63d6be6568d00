"""stop() and join(): new messages are refused at once, every worker stops after
its current message, what is queued (in the shared queue, in a worker's
mailbox or batch) becomes dead letters, and pending asks and waiting senders
fail with ActorStopped."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorStopped, ActorSystem, StopReason

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
async def test_send_and_ask_after_stop_raise_actor_stopped_a_tell_is_a_dead_letter(
    routing: Any,
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        await wait_all_blocked()
        pool.stop()
        assert not pool.is_alive
        pool.tell("late")
        with pytest.raises(ActorStopped):
            await pool.send("late")
        with pytest.raises(ActorStopped):
            await pool.ask("late")
        await pool.join()
        pool.tell("later")
        pool.broadcast("to all")
        told = [
            (d.recipient, d.message, d.reason)
            for d in system.dead_letters.recent
            if d.message != "late" or d.reason == "actor stopped"
        ]
        workers = pool.workers
        assert told == [
            (pool, "late", "actor stopped"),
            (pool, "later", "actor stopped"),
            *[(worker, "to all", "actor stopped") for worker in workers],
        ]
    assert journal.entries == []


@ROUTINGS
async def test_stop_makes_queued_work_dead_letters(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing, drain=4)
        holds = await hold_every_worker(pool)
        for n in range(20):
            pool.tell(n)
        pool.stop()
        release(holds)
        assert await pool.join() is StopReason.NORMAL
        # Every worker finished its current message and handled nothing more.
        assert journal.messages() == ["hold", "hold"]
        letters = [d.message for d in system.dead_letters.recent]
        assert sorted(letters, key=int) == list(range(20))  # type: ignore[arg-type]
        assert system.dead_letters.count == 20


async def test_stop_dead_letters_what_idle_workers_were_handed_but_never_ran() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing="shared_queue", drain=4)
        await wait_all_blocked()
        for n in range(30):  # 12 handed to the woken workers, 18 queued
            pool.tell(n)
        pool.stop()  # before any woken worker has run
        await pool.join()
    assert journal.entries == []
    assert system.dead_letters.count == 30


@ROUTINGS
async def test_stop_fails_pending_asks_with_actor_stopped(routing: Any) -> None:
    journal = Journal()
    outcomes: list[Any] = []
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        holds = await hold_every_worker(pool)

        async def ask(n: int) -> None:
            try:
                outcomes.append(await pool.ask(n))
            except ActorStopped as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            for n in range(6):
                tg.start_soon(ask, n)
            await wait_all_blocked()  # every ask is queued and waiting
            pool.stop()
            release(holds)
    assert len(outcomes) == 6
    assert all(isinstance(outcome, ActorStopped) for outcome in outcomes)
    assert journal.messages() == ["hold", "hold"]


async def test_stop_fails_the_asks_in_a_workers_batch() -> None:
    journal = Journal()
    outcomes: list[Any] = []
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing="shared_queue", drain=8)
        [first] = await hold_every_worker(pool)
        second = Hold()
        pool.tell(second)

        async def ask(n: int) -> None:
            try:
                outcomes.append(await pool.ask(n))
            except ActorStopped as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(ask, n)
            await wait_all_blocked()
            first.release.set()
            await second.entered.wait()
            # The worker took [second, ask 0, ask 1, ask 2] as one batch.
            assert pool._shared is not None
            assert not pool._shared.state.buffer
            pool.stop()
            second.release.set()
    assert len(outcomes) == 3
    assert all(isinstance(outcome, ActorStopped) for outcome in outcomes)
    assert journal.messages() == ["hold", "hold"]


@ROUTINGS
async def test_stop_fails_waiting_senders_with_actor_stopped(routing: Any) -> None:
    journal = Journal()
    outcomes: list[Any] = []
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing=routing, capacity=1)
        holds = await hold_every_worker(pool)
        pool.tell(0)

        async def send() -> None:
            try:
                await pool.send(1)
                outcomes.append("sent")
            except ActorStopped as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            await wait_all_blocked()
            pool.stop()
            release(holds)
        assert [type(o) for o in outcomes] == [ActorStopped]
        await pool.join()
        assert system.dead_letters.count == 1  # the 0; the 1 never went in
    assert journal.messages() == ["hold"]


@ROUTINGS
async def test_join_waits_for_every_worker_and_reports_how_the_pool_ended(
    routing: Any,
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing=routing)
        holds = await hold_every_worker(pool)
        pool.stop()
        stopping = pool.workers
        release(holds)
        assert await pool.join() is StopReason.NORMAL
        assert not any(worker.is_alive for worker in stopping)
        assert [await worker.join() for worker in stopping] == [StopReason.PARENT] * 3
        pool.stop()  # stopping a stopped pool does nothing
        assert await pool.join() is StopReason.NORMAL


@ROUTINGS
async def test_leaving_the_system_stops_the_pool_and_dead_letters_its_backlog(
    routing: Any,
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        holds = await hold_every_worker(pool)
        for n in range(10):
            pool.tell(n)
        release(holds)  # nothing yielded since: the exit comes first
    assert await pool.join() is StopReason.SYSTEM
    handled = [m for m in journal.messages() if m != "hold"]
    assert len(handled) + system.dead_letters.count == 10


class Owner(Actor):
    """Spawns a pool as its child and hands its ref out."""

    def __init__(self, pools: list[Any], journal: Journal) -> None:
        self.pools = pools
        self.journal = journal

    def on_start(self) -> None:
        pool = self.context.spawn_pool(
            Worker, 2, self.journal, routing="shared_queue", name="crew"
        )
        self.pools.append(pool)


async def test_a_pools_owner_stopping_stops_the_pool() -> None:
    journal = Journal()
    pools: list[Any] = []
    async with ActorSystem() as system:
        owner = system.spawn(Owner, pools, journal, name="owner")
        await wait_all_blocked()
        [pool] = pools
        assert pool.path == "/user/owner/crew"
        assert (await pool.ask(1))[1] == 1
        owner.stop()
        await owner.join()
        assert not pool.is_alive
        assert await pool.join() is StopReason.PARENT
        pool.tell(2)  # a dead letter
        assert system.dead_letters.recent[-1].message == 2
