"""Finding actors: by path (system.lookup), by child name (context.child) and
by registered name (system.register / whereis / unregister, as Erlang/OTP's);
a registration ends with its actor."""

from __future__ import annotations

from typing import Any

import pytest

from actors import (
    Actor,
    ActorNotFound,
    ActorStopped,
    ActorSystem,
    SystemNotRunning,
)

from ._support import Recorder

pytestmark = pytest.mark.anyio


class Parent(Actor):
    """Spawns a child named "kid"; answers context.child(message)."""

    def on_start(self) -> None:
        self.context.spawn(Recorder, [], name="kid")

    def receive(self, message: Any) -> Any:
        return self.context.child(message)


async def test_lookup_finds_an_actor_by_its_path() -> None:
    async with ActorSystem() as system:
        parent = system.spawn(Parent, name="parent")
        kid = await parent.ask("kid")
        assert system.lookup("/user/parent") == parent
        assert system.lookup("/user/parent/kid") == kid
        assert system.lookup("/user/parent/kid").path == "/user/parent/kid"


async def test_lookup_of_a_missing_or_terminated_actor_raises_actor_not_found() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [], name="gone")
        ref.stop()
        await ref.join()
        for path in ("/user/gone", "/user/nobody/here", "/system", "/"):
            with pytest.raises(ActorNotFound, match="no actor"):
                system.lookup(path)
        assert issubclass(ActorNotFound, LookupError)


async def test_lookup_refuses_a_relative_path_or_a_non_string() -> None:
    async with ActorSystem() as system:
        with pytest.raises(ValueError, match="absolute"):
            system.lookup("user/a")
        with pytest.raises(TypeError, match="path"):
            system.lookup(3)  # type: ignore[arg-type]
    with pytest.raises(SystemNotRunning):
        system.lookup("/user/a")


async def test_context_child_finds_a_child_by_name_or_none() -> None:
    async with ActorSystem() as system:
        parent = system.spawn(Parent)
        kid = await parent.ask("kid")
        assert kid is not None and kid.name == "kid"
        assert await parent.ask("nobody") is None
        kid.stop()
        await kid.join()
        assert await parent.ask("kid") is None


async def test_whereis_finds_a_registered_actor() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        assert system.whereis("db") is None
        system.register("db", ref)
        assert system.whereis("db") == ref
        assert system.registered == {"db": ref}
        system.register("db", ref)  # again, the same: nothing changes
        system.unregister("db")
        assert system.whereis("db") is None
        system.unregister("db")  # unknown: nothing happens
        assert ref.is_alive


async def test_a_taken_name_is_a_value_error_naming_its_holder() -> None:
    async with ActorSystem() as system:
        first = system.spawn(Recorder, [], name="first")
        second = system.spawn(Recorder, [], name="second")
        system.register("db", first)
        with pytest.raises(ValueError, match="'db' is taken by /user/first"):
            system.register("db", second)
        with pytest.raises(ValueError, match="registered already as 'db'"):
            system.register("other", first)


async def test_a_registration_ends_with_its_actor() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        system.register("db", ref)
        ref.stop()
        await ref.join()
        assert system.whereis("db") is None
        replacement = system.spawn(Recorder, [])
        system.register("db", replacement)  # the name is free again
        assert system.whereis("db") == replacement


async def test_a_registration_ends_when_the_actor_fails_for_good() -> None:
    class Fragile(Actor):
        def receive(self, message: Any) -> Any:
            raise RuntimeError("boom")

    async with ActorSystem() as system:
        ref = system.spawn(Fragile, restart="temporary")
        system.register("fragile", ref)
        ref.tell("x")
        reason = await ref.join()
        assert isinstance(reason, RuntimeError)
        assert system.whereis("fragile") is None


async def test_a_pool_can_be_registered() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Recorder, 2, [])
        system.register("workers", pool)
        assert system.whereis("workers") is pool
        pool.stop()
        await pool.join()
        assert system.whereis("workers") is None


async def test_register_refuses_bad_arguments() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        with pytest.raises(TypeError, match="name"):
            system.register(1, ref)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="empty"):
            system.register("", ref)
        with pytest.raises(TypeError, match="ref"):
            system.register("x", "not a ref")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="name"):
            system.whereis(None)  # type: ignore[arg-type]
        async with ActorSystem() as other:
            foreign = other.spawn(Recorder, [])
            with pytest.raises(TypeError, match="of this system"):
                system.register("x", foreign)
        ref.stop()
        with pytest.raises(ActorStopped):
            system.register("x", ref)
    with pytest.raises(SystemNotRunning):
        system.register("x", ref)


async def test_register_from_inside_an_actor() -> None:
    class Named(Actor):
        def on_start(self) -> None:
            self.context.system.register("me", self.context.self_ref)

        def receive(self, message: Any) -> Any:
            return message

    async with ActorSystem() as system:
        ref = system.spawn(Named)
        assert await ref.ask("started") == "started"
        assert system.whereis("me") == ref
