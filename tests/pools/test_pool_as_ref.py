"""A pool is a ref like an actor's: it is an ActorRef, watching it delivers
one Terminated naming the pool, its parent stops it with context.stop, it is
found by path and by child name, and its supervisor strategy is the user's."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    OneForOne,
    PoolRef,
    RefStatistics,
    StopReason,
    Terminated,
)

from ._support import (
    BOOM,
    ROUTINGS,
    Journal,
    Worker,
    hold_every_worker,
    release,
    wait_all_blocked,
)

pytestmark = pytest.mark.anyio


class Watcher(Actor):
    """Spawns a pool, watches it, and journals the Terminated it gets."""

    def __init__(self, seen: list[Any], got: anyio.Event) -> None:
        self.seen = seen
        self.got = got
        self.pool: PoolRef[Any] | None = None

    def on_start(self) -> None:
        self.pool = self.context.spawn_pool(Worker, 2, Journal(), name="workers")
        self.context.watch(self.pool)

    def receive(self, message: Any) -> Any:
        if message == "stop the pool":
            assert self.pool is not None
            self.context.stop(self.pool)
        elif message == "child":
            return self.context.child("workers")
        elif isinstance(message, Terminated):
            self.seen.append(message)
            self.got.set()
        return None


async def test_a_pool_is_an_actor_ref() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, Journal())
        assert isinstance(pool, ActorRef)
        assert pool == pool and hash(pool) == hash(pool)


async def test_a_watched_pool_stopped_by_its_parent_sends_terminated_with_it() -> None:
    seen: list[Any] = []
    got = anyio.Event()
    async with ActorSystem() as system:
        watcher = system.spawn(Watcher, seen, got)
        pool = await watcher.ask("child")
        assert isinstance(pool, PoolRef)
        watcher.tell("stop the pool")
        await got.wait()
        assert not pool.is_alive
        assert await watcher.ask("child") is None  # gone from its children
    (terminated,) = seen
    assert terminated.ref is pool
    assert terminated.reason is StopReason.PARENT


async def test_watching_a_stopped_pool_delivers_terminated_at_once() -> None:
    seen: list[Any] = []
    got = anyio.Event()

    class LateWatcher(Actor):
        def receive(self, message: Any) -> Any:
            if isinstance(message, Terminated):
                seen.append(message)
                got.set()
            else:
                self.context.watch(message)

    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, Journal())
        pool.stop()
        await pool.join()
        system.spawn(LateWatcher).tell(pool)
        await got.wait()
    assert seen[0].ref is pool and seen[0].reason is StopReason.NORMAL


async def test_a_pool_is_found_by_path_and_its_workers_under_it() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, Journal(), name="hashers")
        assert system.lookup("/user/hashers") is pool
        worker = system.lookup("/user/hashers/worker-1")
        assert worker == pool.workers[1]


async def test_the_pools_strategy_is_configurable() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        # No restart allowed: the first failure exceeds the intensity, the
        # pool fails and its parent (the guardian) restarts it.
        pool = system.spawn_pool(
            Worker, 1, journal, strategy=OneForOne(max_restarts=0), name="p"
        )
        pool.tell(BOOM)
        await wait_all_blocked()
        assert await pool.ask("after") == ("worker-0", "after")
    assert system.escalations == 1


async def test_a_bad_pool_strategy_is_a_type_error() -> None:
    async with ActorSystem() as system:
        with pytest.raises(TypeError, match="strategy"):
            system.spawn_pool(Worker, 1, Journal(), strategy="one")  # type: ignore[arg-type]


@ROUTINGS
async def test_pool_statistics_count_what_waits_for_the_workers(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing, capacity=4)
        holds = await hold_every_worker(pool)
        for n in range(4):
            pool.tell(n)
        stats = pool.statistics()
        assert isinstance(stats, RefStatistics)
        assert stats.queued_messages == 4
        assert stats.capacity == (8 if routing == "round_robin" else 4)
        assert stats.waiting_senders == 0
        release(holds)
        for n in range(4):
            assert await pool.ask(n) is not None
        assert pool.statistics().queued_messages == 0


async def test_a_shared_queue_workers_statistics_are_its_own_lane() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue")
        holds = await hold_every_worker(pool)
        worker = pool.workers[0]
        worker.tell("mine")
        pool.tell("shared")
        assert worker.statistics() == RefStatistics(1, 0, None, 0)
        assert pool.statistics().queued_messages == 2
        release(holds)
        assert await worker.ask("sync") == ("worker-0", "sync")
