"""ActorSystem: shutdown order, unique names, bad input, refs after exit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    StopReason,
    SystemNotRunning,
)

from ._support import Recorder

pytestmark = pytest.mark.anyio


class Node(Actor):
    """Spawns the children it is given; logs its name when its on_stop ends."""

    def __init__(self, log: list[str], children: tuple[str, ...] = ()) -> None:
        self.log = log
        self.children = children

    def on_start(self) -> None:
        for name in self.children:
            self.context.spawn(Node, self.log, name=name)

    async def on_stop(self) -> None:
        # Several scheduling points: the system must wait for all of them.
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        self.log.append(self.context.name)

    def receive(self, message: Any) -> Any:
        return self.context.children


async def test_exit_stops_children_first_and_later_started_first() -> None:
    log: list[str] = []
    async with ActorSystem() as system:
        a = system.spawn(Node, log, ("a1", "a2"), name="a")
        b = system.spawn(Node, log, ("b1",), name="b")
        c = system.spawn(Node, log, name="c")
        assert [r.name for r in await a.ask("children")] == ["a1", "a2"]
        assert [r.name for r in await b.ask("children")] == ["b1"]
        await c.ask("started")
    # Every async on_stop ran to its end before the async with returned.
    assert log == ["c", "b1", "b", "a2", "a1", "a"]


async def test_stopping_a_parent_stops_its_children_first() -> None:
    log: list[str] = []
    async with ActorSystem() as system:
        a = system.spawn(Node, log, ("a1", "a2", "a3"), name="a")
        children = await a.ask("children")
        a.stop()
        await a.join()
        assert log == ["a3", "a2", "a1", "a"]
        for child in children:
            assert await child.join() is StopReason.PARENT


async def test_sibling_names_are_unique() -> None:
    log: list[str] = []
    async with ActorSystem() as system:
        first = system.spawn(Recorder, [], name="same")
        with pytest.raises(ValueError, match="same"):
            system.spawn(Recorder, [], name="same")
        # The same name under another parent is fine.
        parent = system.spawn(Node, log, ("same",), name="parent")
        assert [r.path for r in await parent.ask("children")] == ["/user/parent/same"]
        # Once the first has terminated, its name is free again.
        first.stop()
        await first.join()
        second = system.spawn(Recorder, [], name="same")
        assert second != first
        assert await second.ask("hi") == "hi"


class Twins(Actor):
    def receive(self, message: Any) -> Any:
        self.context.spawn(Recorder, [], name="kid")
        try:
            self.context.spawn(Recorder, [], name="kid")
        except ValueError as exc:
            return exc
        return None


async def test_child_names_are_unique_among_siblings() -> None:
    async with ActorSystem() as system:
        parent = system.spawn(Twins, name="parent")
        error = await parent.ask("spawn twins")
        assert isinstance(error, ValueError)
        assert "/user/parent" in str(error) and "kid" in str(error)
        assert parent.is_alive


@pytest.mark.parametrize("name", ["", "a/b"])
async def test_a_malformed_name_raises_value_error(name: str) -> None:
    async with ActorSystem() as system:
        with pytest.raises(ValueError, match="name"):
            system.spawn(Recorder, [], name=name)


class NotAnActor:
    pass


@pytest.mark.parametrize("factory", [NotAnActor, int, 42])
async def test_a_factory_that_is_not_an_actor_class_raises_type_error_at_spawn(
    factory: Any,
) -> None:
    async with ActorSystem() as system:
        with pytest.raises(TypeError):
            system.spawn(factory)
        assert system.failures == 0


def not_an_actor() -> object:
    return "not an actor"


async def test_a_factory_returning_a_non_actor_raises_at_spawn() -> None:
    async with ActorSystem() as system:
        with pytest.raises(TypeError, match="not an Actor") as caught:
            system.spawn(not_an_actor, name="odd")  # type: ignore[arg-type]
        assert "/user/odd" in str(caught.value)
        assert system.failures == 0 and system.restarts == 0


class CrashesOnce(Actor):
    def receive(self, message: Any) -> Any:
        raise RuntimeError("crash")


async def test_a_restart_that_keeps_getting_a_non_actor_fails_the_system() -> None:
    # The default strategy restarts it, until the restart intensity is exceeded;
    # then the failure nobody handled surfaces from the async with.
    made: list[object] = []

    def factory() -> object:
        made.append(CrashesOnce() if not made else "not an actor")
        return made[-1]

    with pytest.raises(TypeError, match="not an Actor"):
        async with ActorSystem() as system:
            system.spawn(factory).tell("crash")  # type: ignore[arg-type]
            await anyio.sleep_forever()  # cancelled by the system's failure
    assert system.restarts == 3


@pytest.mark.parametrize(
    ("capacity", "error"), [(0, ValueError), (-1, ValueError), (1.5, TypeError)]
)
async def test_a_bad_capacity_raises_at_spawn(
    capacity: Any, error: type[Exception]
) -> None:
    async with ActorSystem() as system:
        with pytest.raises(error, match="capacity"):
            system.spawn(Recorder, [], name="r", capacity=capacity)
        # Nothing was registered under the name.
        assert await system.spawn(Recorder, [], name="r").ask(1) == 1


@pytest.mark.parametrize("drain", [0, -1])
async def test_a_drain_below_one_raises_value_error(drain: int) -> None:
    async with ActorSystem() as system:
        with pytest.raises(ValueError):
            system.spawn(Recorder, [], drain=drain)
    with pytest.raises(ValueError):
        ActorSystem(drain=drain)


async def test_spawning_outside_a_running_system_raises_system_not_running() -> None:
    system = ActorSystem()
    with pytest.raises(SystemNotRunning):
        system.spawn(Recorder, [])
    async with system:
        pass
    with pytest.raises(SystemNotRunning):
        system.spawn(Recorder, [])


async def test_a_system_is_entered_only_once() -> None:
    system = ActorSystem()
    async with system:
        pass
    with pytest.raises(RuntimeError):
        async with system:
            pass


Use = Callable[[Any], Any]


async def test_a_ref_used_after_the_system_exited_raises_system_not_running() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        stopped_earlier = system.spawn(Recorder, [])
        stopped_earlier.stop()
        await stopped_earlier.join()
    assert issubclass(SystemNotRunning, ActorStopped)
    for each in (ref, stopped_earlier):
        with pytest.raises(SystemNotRunning):
            each.tell("x")
        with pytest.raises(SystemNotRunning):
            await each.send("x")
        with pytest.raises(SystemNotRunning):
            await each.ask("x")
        assert not each.is_alive
        each.stop()  # does nothing
    assert await ref.join() is StopReason.SYSTEM
    assert await stopped_earlier.join() is StopReason.NORMAL


async def test_a_failure_in_the_body_still_stops_every_actor() -> None:
    log: list[str] = []
    with pytest.raises(KeyError):
        async with ActorSystem() as system:
            a = system.spawn(Node, log, ("a1",), name="a")
            await a.ask("started")
            raise KeyError("body")
    assert log == ["a1", "a"]
