"""``self.context`` is there in ``__init__`` when the runtime builds the
instance; an instance made outside the runtime says so clearly."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem

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
