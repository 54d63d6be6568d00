"""``self.context`` is there in ``__init__`` when the runtime builds the
instance; an instance made outside the runtime says so clearly."""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem, OneForOne

pytestmark = pytest.mark.anyio


class Child(Actor):
    def receive(self, message: Any) -> Any:
        return ("child", message)


class UsesContextEarly(Actor):
    def __init__(self, done: anyio.Event) -> None:
        self.me = self.context.self_ref
        self.path = self.context.path
        self.child = self.context.spawn(Child, name="child")
        self.context.timers.start_single("t", "tick", 0)
        self.done = done

    def receive(self, message: Any) -> Any:
        if message == "tick":
            self.done.set()
            return None
        return (self.me, self.path, self.child)


async def test_context_is_available_in_init() -> None:
    done = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(UsesContextEarly, done, name="early")
        me, path, child = await ref.ask("who")
        assert me == ref
        assert path == "/user/early"
        assert isinstance(child, ActorRef)
        assert await child.ask(1) == ("child", 1)
        await done.wait()


class Counter(Actor):
    def receive(self, message: Any) -> Any:
        return self.context.self_ref


def test_context_of_an_instance_made_outside_the_runtime_is_a_clear_error() -> None:
    counter = Counter()
    with pytest.raises(AttributeError, match="made outside the runtime") as info:
        counter.context  # noqa: B018
    assert "system.spawn(Counter)" in str(info.value)
    assert not hasattr(counter, "context")


async def test_a_restart_gives_the_new_instance_its_context_in_init_too() -> None:
    class Fails(Actor):
        def __init__(self) -> None:
            self.me = self.context.self_ref

        def receive(self, message: Any) -> Any:
            if message == "boom":
                raise ValueError("boom")
            return self.me

    async with ActorSystem() as system:
        ref = system.spawn(Fails)
        ref.tell("boom")
        assert await ref.ask("who") == ref
        assert system.restarts == 1


@pytest.mark.parametrize("wrap", ["lambda", "partial"])
async def test_context_is_there_in_init_when_the_factory_is_a_lambda_or_partial(
    wrap: str,
) -> None:
    done = anyio.Event()
    factory: Any = (
        (lambda: UsesContextEarly(done))
        if wrap == "lambda"
        else functools.partial(UsesContextEarly, done)
    )
    async with ActorSystem() as system:
        ref = system.spawn(factory, name="early")
        me, path, _ = await ref.ask("who")
        assert (me, path) == (ref, "/user/early")
        await done.wait()


async def test_an_instance_made_outside_the_runtime_can_be_spawned() -> None:
    counter = Counter()
    async with ActorSystem() as system:
        ref = system.spawn(lambda: counter)
        assert await ref.ask("who") == ref


# An instance is one actor's: a factory that hands out an instance another
# actor has (or had) would give that actor this one's context (its self_ref,
# its children): refused in the spawner.
async def test_a_factory_returning_another_actors_instance_is_a_type_error() -> None:
    counter = Counter()
    async with ActorSystem() as system:
        first = system.spawn(lambda: counter)
        with pytest.raises(TypeError, match="new instance"):
            system.spawn(lambda: counter)
        assert await first.ask("who") == first


class Switches(Actor):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        self.become(self.switched)
        return "initial"

    def switched(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return "switched"


# A restart starts from a fresh instance (its initial behaviour, an empty
# stash): a factory returning the instance it returned before fails the
# restart with a TypeError instead of resuming the old one in disguise.
async def test_a_restart_whose_factory_returns_the_same_instance_fails() -> None:
    switches = Switches()
    strategy = OneForOne(max_restarts=1, within=60)
    with pytest.raises(TypeError, match="returned the instance it replaces"):
        async with ActorSystem(strategy=strategy) as system:
            ref = system.spawn(lambda: switches)
            assert await ref.ask("x") == "initial"
            assert await ref.ask("x") == "switched"
            ref.tell("boom")
            await ref.join()


class StartsWorkInInit(Actor):
    def __init__(self, seen: list[str], done: anyio.Event) -> None:
        async def work() -> None:
            try:
                seen.append(Counter().context.path)
            except AttributeError:
                seen.append("no context")
            done.set()

        self.context.run(work)

    def receive(self, message: Any) -> Any:
        return message


# Background work an actor starts in its __init__ runs after the construction
# is over: an instance it makes outside the runtime has no context (it took
# the constructing actor's).
async def test_work_started_in_init_does_not_see_the_construction() -> None:
    seen: list[str] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(StartsWorkInInit, seen, done)
        await done.wait()
    assert seen == ["no context"]


class MakesAnInstance(Actor):
    def receive(self, message: Any) -> Any:
        try:
            return Counter().context.path
        except AttributeError:
            return "no context"


class SpawnsInInit(Actor):
    def __init__(self) -> None:
        self.child = self.context.spawn(MakesAnInstance, name="child")

    def receive(self, message: Any) -> Any:
        return self.child


# An actor spawned from its parent's __init__ runs in a task started during
# that construction: an instance its handlers make outside the runtime has no
# context either (it took the parent's).
async def test_a_child_spawned_in_init_does_not_see_its_parents_construction() -> None:
    async with ActorSystem() as system:
        child = await system.spawn(SpawnsInInit).ask("child")
        assert await child.ask("make one") == "no context"
