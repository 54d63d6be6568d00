"""ActorRef identity: name, path, equality, hashing, repr, parent refs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from actors import Actor, ActorRef, ActorSystem

from ._support import Recorder

pytestmark = pytest.mark.anyio


class Parent(Actor):
    def receive(self, message: Any) -> Any:
        match message:
            case ("spawn", name):
                return self.context.spawn(Parent, name=name)
            case "self":
                return self.context.self_ref
            case "parent":
                return self.context.parent
        return None


async def test_a_ref_has_its_name_and_a_path_down_from_user() -> None:
    async with ActorSystem() as system:
        parent = system.spawn(Parent, name="parent")
        child = await parent.ask(("spawn", "child"))
        grandchild = await child.ask(("spawn", "grandchild"))
        assert (parent.name, parent.path) == ("parent", "/user/parent")
        assert (child.name, child.path) == ("child", "/user/parent/child")
        assert grandchild.path == "/user/parent/child/grandchild"
        assert await child.ask("parent") == parent
        assert await grandchild.ask("parent") == child
        guardian = await parent.ask("parent")
        assert guardian.path == "/user"


async def test_default_names_come_from_the_class_and_differ() -> None:
    async with ActorSystem() as system:
        first = system.spawn(Recorder, [])
        second = system.spawn(Recorder, [])
        assert first.name.startswith("recorder")
        assert second.name.startswith("recorder")
        assert first.name != second.name
        assert first.path == f"/user/{first.name}"


async def test_refs_to_one_actor_are_equal_and_hash_alike() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Parent, name="a")
        other = system.spawn(Parent, name="b")
        assert await ref.ask("self") == ref
        twin = copy.copy(ref)  # another ref object naming the same actor
        assert twin == ref and twin is not ref
        assert hash(twin) == hash(ref)
        assert ref != other and ref != "a" and ref != ref.path
        assert len({ref, twin, other}) == 2
        assert {ref: 1}[twin] == 1


async def test_a_ref_keeps_its_identity_after_its_actor_stops() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Parent, name="a")
        inside = await ref.ask("self")
        ref.stop()
        await ref.join()
        assert inside == ref and hash(inside) == hash(ref)
        assert (ref.name, ref.path) == ("a", "/user/a")


async def test_the_repr_names_the_path_and_whether_it_is_alive() -> None:
    async with ActorSystem() as system:
        ref: ActorRef[Any] = system.spawn(Parent, name="shown")
        assert repr(ref) == "<ActorRef /user/shown alive>"
        ref.stop()
        assert repr(ref) == "<ActorRef /user/shown stopped>"
        assert "running" in repr(system)
    assert "not running" in repr(system)
