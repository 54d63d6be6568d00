"""spawn_pool: its arguments are checked before anything is spawned; the pool is
an actor in the tree (a child of the system's guardian or of an actor), its
workers are its children."""

from __future__ import annotations

from typing import Any

import pytest

from actors import Actor, ActorSystem, PoolRef, SystemNotRunning

from ._support import ROUTINGS, Journal, Worker, wait_all_blocked

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"size": 0}, ValueError),
        ({"size": -1}, ValueError),
        ({"size": 2.0}, TypeError),
        ({"routing": "random"}, ValueError),
        ({"capacity": 0}, ValueError),
        ({"capacity": -3}, ValueError),
        ({"capacity": 1.5}, TypeError),
        ({"drain": 0}, ValueError),
        ({"drain": "8"}, TypeError),
    ],
)
async def test_bad_arguments_are_refused_before_anything_is_spawned(
    kwargs: dict[str, Any], error: type[Exception]
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        options: dict[str, Any] = {"size": 2, "routing": "shared_queue"} | kwargs
        size = options.pop("size")
        with pytest.raises(error):
            system.spawn_pool(Worker, size, journal, **options)
        await wait_all_blocked()
        assert system._runtime.guardian is not None
        assert system._runtime.guardian.children == {}
    assert journal.instances == 0


class NotAnActor:
    pass


async def test_a_factory_that_is_not_an_actor_class_is_refused() -> None:
    async with ActorSystem() as system:
        with pytest.raises(TypeError):
            system.spawn_pool(NotAnActor, 2)  # type: ignore[type-var]
        with pytest.raises(TypeError):
            system.spawn_pool("Worker", 2)  # type: ignore[arg-type]


async def test_a_pool_name_must_be_free_among_its_siblings() -> None:
    async with ActorSystem() as system:
        system.spawn_pool(Worker, 1, Journal(), name="crew")
        with pytest.raises(ValueError):
            system.spawn_pool(Worker, 1, Journal(), name="crew")


async def test_spawn_pool_outside_a_running_system_raises() -> None:
    system = ActorSystem()
    with pytest.raises(SystemNotRunning):
        system.spawn_pool(Worker, 2, Journal())
    async with system:
        pass
    with pytest.raises(SystemNotRunning):
        system.spawn_pool(Worker, 2, Journal())


@ROUTINGS
async def test_the_workers_are_the_pools_children(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing=routing, name="crew")
        assert isinstance(pool, PoolRef)
        assert (pool.name, pool.path, pool.size, pool.routing) == (
            "crew",
            "/user/crew",
            3,
            routing,
        )
        assert [w.path for w in pool.workers] == [
            f"/user/crew/worker-{n}" for n in range(3)
        ]
        assert pool.is_alive
        assert routing in repr(pool) and "alive" in repr(pool)
        await wait_all_blocked()
        assert journal.instances == 3


async def test_an_unnamed_pool_gets_a_name_from_its_worker_class() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, Journal())
        assert pool.name.startswith("pool-worker-")


class Spawner(Actor):
    def receive(self, message: Any) -> Any:
        return self.context.spawn_pool(
            Worker, 2, message, routing="round_robin", name="helpers"
        )


async def test_an_actor_spawns_a_pool_as_its_child() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        owner = system.spawn(Spawner, name="owner")
        pool = await owner.ask(journal)
        assert pool.path == "/user/owner/helpers"
        assert await pool.ask(7) == ("worker-0", 7)
