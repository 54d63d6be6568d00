"""Rebalance towards a node that joins while other nodes keep sending: a
shard the coordinator moves goes to its next home at once (it is offered
there, ``TakeShard``), and its old holder never takes it back because a
peer that still knew the old home sent it a message (a take-back held the
rebalance up: the move counted as in progress, and the next round planned
nothing)."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from actors.sharding import (
    Entity,
    LeaseEvent,
    LeastShardAllocation,
    MemoryPlacementStore,
    Sharding,
)
from actors.testing import ManualClock

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio

KEYS = [str(i) for i in range(200)]


def _take_backs(events: list[LeaseEvent]) -> int:
    """Leases a node took again after it had released them."""
    released: set[int] = set()
    again = 0
    for event in events:
        if event.kind == "released":
            released.add(event.shard)
        elif event.kind == "acquired" and event.shard in released:
            again += 1
    return again


async def test_a_joining_node_gets_its_share_while_a_peer_sends_to_the_old_home() -> (
    None
):
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity("t", recorders(log), shards=20, passivate_after=None, role="host")
    strategy = LeastShardAllocation(absolute_limit=2, relative_limit=1.0)
    leases: dict[str, list[LeaseEvent]] = {"a": [], "b": []}

    def node(system: ActorSystem, name: str, **options: object) -> Sharding:
        return Sharding(
            system,
            [entity],
            store=store.connect(),
            node=name,
            strategy=strategy,
            on_lease=leases.setdefault(name, []).append,
            **options,  # type: ignore[arg-type]
        )

    async with ActorSystem(clock=clock) as system:
        async with node(system, "a", roles={"host"}) as a, node(system, "c") as c:
            await clock.advance(0)
            for key in KEYS:  # every shard on a, and c's region knows it
                c.entity_ref("t", key).tell("before")
            await c.entity_ref("t", "0").ask("get")
            await clock.advance(0)
            assert a.statistics().shards_per_node["t"]["a"] == 20
            async with node(system, "b", roles={"host"}) as b:
                await clock.advance(0)
                rounds = 0
                while b.statistics().shards_per_node["t"]["b"] < 10:
                    await clock.advance(2.5)  # one rebalance round per tick
                    for key in KEYS:  # from c, which knew a as every home
                        c.entity_ref("t", key).tell("after")
                    await clock.advance(0)
                    rounds += 1
                    assert rounds <= 8, (rounds, a.statistics().shards_per_node)
                assert a.statistics().shards_per_node["t"]["a"] == 10
                assert _take_backs(leases["a"]) == 0
                # 10 moves, 2 a round (a round's moves end within it)
                assert rounds <= 6
                for key in KEYS:  # nothing lost
                    await c.entity_ref("t", key).ask("get")
                for key in KEYS:
                    handled = log.handled[key]
                    assert handled[0] == "before"
                    assert handled[1:] == ["after"] * rounds
        assert all(s.statistics().dropped == 0 for s in (a, b, c))


async def test_a_moved_shard_is_placed_on_the_joining_node_without_a_message() -> None:
    # Nobody sends: each shard the coordinator moves is offered to its next
    # home at once, so the joining node holds its share after the rounds
    # the limit takes (10 moves, 2 a round), not at some later message.
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    entity = Entity("t", recorders(Log()), shards=20, passivate_after=None)
    strategy = LeastShardAllocation(absolute_limit=2, relative_limit=1.0)
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [entity], store=store, node="a", strategy=strategy) as a,
    ):
        for key in KEYS:
            a.entity_ref("t", key).tell("before")
        await a.entity_ref("t", "0").ask("get")
        assert a.statistics().shards_per_node["t"]["a"] == 20
        async with Sharding(
            system, [entity], store=store.connect(), node="b", strategy=strategy
        ) as b:
            await clock.advance(0)
            for _ in range(5):
                await clock.advance(2.5)
            assert b.statistics().shards_per_node["t"]["b"] == 10
            assert a.statistics().shards_per_node["t"]["a"] == 10
            leased = {e.value for e in await store.list("shards/t/")}
            assert leased == {b"a", b"b"}
            assert len(await store.list("shards/t/")) == 20
