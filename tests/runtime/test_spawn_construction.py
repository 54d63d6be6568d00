"""The first instance is made by the spawner: a factory that fails at once
raises from ``spawn`` (OTP's ``start_child`` returns the ``init`` error), the
actor ends with that reason and is never restarted; restarts still make
their instance in the actor's own task, under supervision."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, ClassVar

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Directive,
    OneForAll,
    OneForOne,
    PoolRef,
    SupervisorStrategy,
    Terminated,
)
from actors._lifecycle import current_cell

from ._support import wait_all_blocked

pytestmark = pytest.mark.anyio


class Boom(Exception):
    pass


class Made:
    """Counts the instances a factory made; fails the ones listed."""

    def __init__(self, fail: set[int] | None = None) -> None:
        self.count = 0
        self.fail = fail if fail is not None else {1}
        self.paths: list[str | None] = []


class Fragile(Actor[str]):
    def __init__(self, made: Made) -> None:
        made.count += 1
        cell = current_cell.get()
        made.paths.append(cell.path if cell is not None else None)
        if made.count in made.fail:
            raise Boom(f"construction {made.count}")

    def receive(self, message: str) -> str:
        if message == "crash":
            raise RuntimeError("crash")
        return message


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


async def test_a_factory_that_fails_at_once_raises_from_spawn() -> None:
    made = Made()
    async with ActorSystem() as system:
        with pytest.raises(Boom, match="construction 1"):
            system.spawn(Fragile, made, name="fragile")
        await wait_all_blocked()
        assert made.count == 1  # never restarted
        assert system.failures == 0 and system.restarts == 0
        # Its name is free again at once.
        ref = system.spawn(Fragile, made, name="fragile")
        assert await ref.ask("hi") == "hi"
    assert made.count == 2


async def test_the_factory_runs_with_the_new_actor_as_the_current_cell() -> None:
    made = Made(fail=set())
    async with ActorSystem() as system:
        ref = system.spawn(Fragile, made, name="first")
        assert made.paths == ["/user/first"]
        assert current_cell.get() is None  # the spawner's own, restored
        ref.tell("crash")  # the restart makes its instance in its own task
        assert await ref.ask("after") == "after"
        assert made.paths == ["/user/first", "/user/first"]


async def test_a_failed_construction_is_the_reason_the_actor_ended() -> None:
    # A ref that escaped the constructor sees an ended actor: join() returns
    # the factory's exception, a tell is a dead letter, a watcher that
    # watches it afterwards gets Terminated with that reason at once.
    escaped: list[ActorRef[Any]] = []

    class Leaks(Actor):
        def __init__(self) -> None:
            cell = current_cell.get()
            assert cell is not None
            escaped.append(cell.ref)
            cell.ref.tell("queued in __init__")
            raise Boom("leaky")

    class Watcher(Actor):
        def receive(self, message: Any) -> Any:
            if isinstance(message, Terminated):
                self.seen = message.reason
                return None
            if message == "seen":
                return self.seen
            self.context.watch(message)
            return None

    async with ActorSystem() as system:
        with pytest.raises(Boom):
            system.spawn(Leaks)
        (ref,) = escaped
        reason = await ref.join()
        assert isinstance(reason, Boom) and not ref.is_alive
        ref.tell("late")  # a dead letter, as to any stopped actor
        assert system.dead_letters.count == 2  # and the one told in __init__
        watcher = system.spawn(Watcher)
        await watcher.ask(ref)
        assert await watcher.ask("seen") is reason


async def test_children_spawned_by_a_failing_constructor_are_stopped() -> None:
    children: list[ActorRef[Any]] = []

    class Parent(Actor):
        def __init__(self) -> None:
            cell = current_cell.get()
            assert cell is not None
            children.append(cell.context.spawn(Echo, name="child"))
            raise Boom("after spawning a child")

    async with ActorSystem() as system:
        with pytest.raises(Boom):
            system.spawn(Parent, name="parent")
        (child,) = children
        assert child.path == "/user/parent/child"
        assert not child.is_alive
        await child.join()


async def test_context_spawn_raises_in_the_spawning_handler() -> None:
    made = Made()

    class Spawner(Actor[str]):
        def receive(self, message: str) -> Any:
            try:
                self.context.spawn(Fragile, made, name="kid")
            except Boom as exc:
                return f"refused: {exc}"
            return [c.name for c in self.context.children]

    async with ActorSystem() as system:
        ref = system.spawn(Spawner)
        assert await ref.ask("spawn") == "refused: construction 1"
        assert await ref.ask("spawn") == ["kid"]  # the name was free again
        assert system.failures == 0


async def test_a_failure_escaping_the_spawning_handler_is_that_actors_failure() -> None:
    made = Made()

    class Spawner(Actor):
        def receive(self, message: Any) -> Any:
            self.context.spawn(Fragile, made)

    strategy = OneForOne(decider={Boom: Directive.RESUME})
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(Spawner, name="spawner")
        with pytest.raises(Boom):
            await ref.ask("spawn")
        assert system.failures == 1  # the spawner's, not a child's
        assert made.count == 1


async def test_a_restart_constructs_in_the_actors_task_under_supervision() -> None:
    made = Made(fail={2})  # the first instance is fine, its replacement fails
    strategy = OneForOne(
        decider={RuntimeError: Directive.RESTART, Boom: Directive.STOP}
    )
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(Fragile, made)
        ref.tell("crash")
        reason = await ref.join()
        assert isinstance(reason, Boom) and str(reason) == "construction 2"
        assert system.failures == 2 and system.restarts == 1


async def test_a_partial_is_a_factory_named_after_its_class() -> None:
    async with ActorSystem() as system:
        with pytest.raises(TypeError, match="not an Actor"):
            system.spawn(partial(str, "x"))  # type: ignore[arg-type]
        ref = system.spawn(partial(Fragile, Made(fail=set())))
        assert ref.name.startswith("fragile-")  # named after the partial's class


async def test_spawn_pool_raises_when_a_workers_factory_fails_at_once() -> None:
    made = Made(fail={3})

    async with ActorSystem() as system:
        with pytest.raises(Boom, match="construction 3"):
            system.spawn_pool(Fragile, 4, made, name="pool")
        await wait_all_blocked()
        assert made.count == 3  # the fourth worker was never made
        assert system.failures == 0 and system.restarts == 0
        guardian = system._runtime.guardian
        assert guardian is not None and "pool" not in guardian.children
        # The workers made before it stopped with the pool.
        pool = system.spawn_pool(Fragile, 2, Made(fail=set()), name="pool")
        assert await pool.ask("ok") == "ok"


async def test_workers_made_again_after_a_pool_restart_fail_under_its_supervision(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Constructions 1 and 2 make the pool's first workers; the one-for-all
    # restart of the pool (its sibling failed) makes them again in their own
    # tasks: construction 3 fails there, and the pool's supervisor restarts
    # that worker instead of the pool's restart hook failing.
    made = Made(fail={3})

    class Crasher(Actor):
        def receive(self, message: Any) -> Any:
            raise RuntimeError("crash")

    class Parent(Actor[str]):
        supervisor_strategy: ClassVar[SupervisorStrategy | None] = OneForAll()

        def on_start(self) -> None:
            self.pool = self.context.spawn_pool(Fragile, 2, made, name="pool")
            self.crasher = self.context.spawn(Crasher, name="crasher")

        def receive(self, message: str) -> PoolRef[str]:
            if message == "crash":
                self.crasher.tell(message)
            return self.pool

    caplog.set_level(logging.INFO, logger="actors")
    async with ActorSystem() as system:
        parent = system.spawn(Parent, name="parent")
        pool = await parent.ask("crash")
        await wait_all_blocked()
        assert made.count == 5  # 2, then 2 again, then the failed one once more
        assert system.failures == 2 and system.restarts == 2
        assert await pool.ask("ok") == "ok"
    failed = [
        getattr(record, "actor_path", None)
        for record in caplog.records
        if getattr(record, "actor_event", None) == "failure"
    ]
    # The third construction is whichever worker's task ran first after the
    # restart (Trio does not promise an order among tasks started together).
    assert failed[0] == "/user/parent/crasher"
    workers = (["/user/parent/pool/worker-0"], ["/user/parent/pool/worker-1"])
    assert failed[1:] in workers


async def test_spawn_from_a_thread_raises_the_factorys_exception_there() -> None:
    made = Made()

    def work() -> BaseException | None:
        try:
            system.from_thread.spawn(Fragile, made)
        except Boom as exc:
            return exc
        return None

    async with ActorSystem() as system:
        error = await anyio.to_thread.run_sync(work)
        assert isinstance(error, Boom)
        assert made.count == 1
