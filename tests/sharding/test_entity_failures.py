"""An entity's failures stay its own: a failing entity is restarted by its
shard however often it fails, a factory that refuses a key fails only the
message for that key, and a shard restarted after a failure of its own
starts its entities afresh (never a stopped ref). As Akka's shard, whose
children are restarted one by one, without limit."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem, DeadLetter
from actors.sharding import Entity, Sharding

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


class Picky(Actor[Any]):
    """Refuses the key "bad" in its factory; "parent" answers its shard."""

    def __init__(self, key: str) -> None:
        if key == "bad":
            raise ValueError(f"no entity for {key!r}")
        self.key = key
        self.count = 0

    def receive(self, message: Any) -> Any:
        if message == "parent":
            return self.context.parent
        self.count += 1
        return self.count


async def test_an_entity_that_keeps_failing_never_stops_the_other_entities_of_its_shard() -> (  # noqa: E501
    None
):
    log = Log()
    # One shard: "poison" and "good" are siblings under the same shard.
    entity = Entity("t", recorders(log), shards=1, passivate_after=None)
    async with ActorSystem() as system, Sharding(system, [entity]) as sharding:
        good = sharding.entity_ref(entity, "good")
        poison = sharding.entity_ref(entity, "poison")
        assert await good.ask(1) == 1
        for _ in range(6):  # past the default intensity of 3 restarts in 5 s
            with pytest.raises(RuntimeError, match="on purpose"):
                await poison.ask("fail")
        assert await poison.ask("get") == []  # restarted, not stopped
        assert await good.ask(2) == 2  # the same instance, its state kept
        assert log.started.count("good") == 1
        assert system.escalations == 0
        assert system.restarts == 6


async def test_a_factory_that_refuses_a_key_fails_only_the_message_for_it() -> None:
    entity = Entity("t", Picky, shards=1, passivate_after=None)
    async with ActorSystem() as system, Sharding(system, [entity]) as sharding:
        seen: list[DeadLetter] = []
        system.dead_letters.subscribe(seen.append)
        good = sharding.entity_ref(entity, "good")
        assert await good.ask("x") == 1
        bad = sharding.entity_ref(entity, "bad")
        with anyio.fail_after(2):  # at once, not after the ask's timeout
            with pytest.raises(ValueError, match="no entity for 'bad'"):
                await bad.ask("x", timeout=30)
        bad.tell("lost")
        with anyio.fail_after(2):
            while not seen:
                await anyio.sleep(0.001)
        assert [(d.message, d.reason) for d in seen] == [
            ("lost", "entity factory failed")
        ]
        assert await good.ask("x") == 2  # the shard and its entity went on
        assert system.failures == 0 and system.escalations == 0
        assert sharding.statistics().dropped == 2


async def test_a_restarted_shard_starts_its_entities_afresh() -> None:
    entity = Entity("t", Picky, shards=1, passivate_after=None)
    async with ActorSystem() as system, Sharding(system, [entity]) as sharding:
        good = sharding.entity_ref(entity, "good")
        assert await good.ask("x") == 1
        shard: ActorRef[Any] = await good.ask("parent")
        shard.tell("not a shard message")  # the shard fails and is restarted
        with anyio.fail_after(5):  # restarted: its entities forgotten
            while system.restarts == 0 or sharding.statistics().entities_per_shard.get(
                ("t", 0)
            ):
                await anyio.sleep(0.001)
        # Its entities stopped with the failed incarnation: the next message
        # starts a fresh one, through the old ref and a new one alike.
        assert await good.ask("x") == 1
        assert await sharding.entity_ref(entity, "good").ask("x") == 2
