"""Membership on the placement store, with Akka Cluster's member states: a
node's entry goes joining, up, then (on a graceful leave) leaving and
exiting, and expires; every node sees the steps as events in order
(MemberJoined, MemberUp, MemberLeft, MemberExited, MemberRemoved), and
MemberDown when an entry vanishes while its node is joining or up (a node
lost). New shards go to the members of the highest application version."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, ClusterNotStarted
from actors.sharding import (
    Cluster,
    Entity,
    Member,
    MemberDown,
    MemberEvent,
    MemberExited,
    MemberJoined,
    MemberLeft,
    MemberRemoved,
    MemberUp,
    MemoryPlacementStore,
    Sharding,
    shard_of,
)
from actors.sharding._coordinator import version_key
from actors.testing import ManualClock

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


def _of(node: str, seen: list[MemberEvent]) -> list[MemberEvent]:
    return [event for event in seen if event.member.node == node]


async def test_nodes_see_each_other_join_leave_and_go_down_in_order() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    entity = Entity("t", recorders(Log()))
    seen: list[MemberEvent] = []
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [entity], store=store, node="a", version="2") as a,
    ):
        a.subscribe(seen.append)
        b = Sharding(system, [entity], store=store.connect(), node="b", version="1")
        async with b:
            await clock.advance(2.5)
            assert a.members == [Member("a", "up", "2"), Member("b", "up", "1")]
        await clock.advance(2.5)
        # b left between two reads of a: every step, in order.
        assert (
            _of("b", seen)
            == [
                MemberJoined(Member("b", "joining", "1")),
                MemberUp(Member("b", "up", "1")),
                MemberLeft(Member("b", "leaving", "1")),
                MemberExited(Member("b", "exiting", "1")),
            ][-len(_of("b", seen)) :]
        )
        assert _of("b", seen)[-2:] == [
            MemberLeft(Member("b", "leaving", "1")),
            MemberExited(Member("b", "exiting", "1")),
        ]
        assert [m.status for m in a.members if m.node == "b"] == ["exiting"]
        for _ in range(5):  # its entry expires: removed, not down
            await clock.advance(2.5)
        assert _of("b", seen)[-1] == MemberRemoved(Member("b", "exiting", "1"))
        c_store = store.connect()
        c = Sharding(system, [entity], store=c_store, node="c")
        await c.__aenter__()
        await clock.advance(2.5)
        assert MemberUp(Member("c", "up", "0")) in seen
        c_store.unavailable = True  # c is lost: its entry is not renewed
        for _ in range(5):
            await clock.advance(2.5)
        assert seen[-1] == MemberDown(Member("c", "down", "0"))
        assert [m.node for m in a.members] == ["a"]
        assert sum(isinstance(e, MemberDown) for e in seen) == 1
        c_store.unavailable = False
        await c.leave()


async def test_a_node_is_joining_until_it_reads_its_own_entry_back() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    async with ActorSystem(clock=clock) as system:
        a = Sharding(system, [], store=store, node="a")
        seen: list[MemberEvent] = []
        a.subscribe(seen.append)
        async with a:
            await clock.advance(0)
            assert seen == [
                MemberJoined(Member("a", "joining", "0")),
                MemberUp(Member("a", "up", "0")),
            ]
            assert a.members == [Member("a", "up", "0")]


async def test_an_unsubscribed_callback_gets_nothing_more() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    seen: list[MemberEvent] = []
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [], store=store, node="a") as a,
    ):
        await clock.advance(2.5)
        unsubscribe = a.subscribe(seen.append)
        async with Sharding(system, [], store=store.connect(), node="b"):
            await clock.advance(2.5)
        assert MemberUp(Member("b", "up", "0")) in seen
        unsubscribe()
        count = len(seen)
        async with Sharding(system, [], store=store.connect(), node="c"):
            await clock.advance(2.5)
        assert len(seen) == count
        with pytest.raises(TypeError, match="callable"):
            a.subscribe(1)  # type: ignore[arg-type]


def test_versions_sort_by_their_numbers_then_words() -> None:
    assert version_key("1.10") > version_key("1.9") > version_key("1.2.3")
    assert version_key("2") > version_key("1.99-rc1") > version_key(None)
    assert version_key("1.0-rc1") > version_key("1.0")  # a word after the numbers


async def test_new_shards_go_to_the_nodes_of_the_newest_version() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity("t", recorders(log), shards=12)
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [entity], store=store, node="old", version="1.9") as old,
        Sharding(
            system, [entity], store=store.connect(), node="new", version="1.10"
        ) as new,
    ):
        await clock.advance(0)
        for i in range(40):
            assert await old.entity_ref("t", str(i)).ask(i) == 1
        assert old.statistics().shards_per_node["t"]["old"] == 0
        used = len({shard_of(str(i), 12) for i in range(40)})
        assert new.statistics().shards_per_node["t"]["new"] == used
        for _ in range(4):  # rebalance rounds: nothing moves to the old node
            await clock.advance(2.5)
            await anyio.wait_all_tasks_blocked()
        assert old.statistics().activations == 0
        assert new.statistics().shards_per_node["t"]["new"] == used


class Events(Actor[MemberEvent]):
    """Keeps the membership events it is told; ``"get"`` answers them."""

    def __init__(self) -> None:
        self.seen: list[MemberEvent | str] = []

    def receive(self, message: MemberEvent | str) -> list[MemberEvent | str]:
        if message == "get":
            return [e for e in self.seen if e != "get"]
        self.seen.append(message)
        return []


async def test_system_cluster_is_the_membership_of_the_sharding_there() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    async with ActorSystem(clock=clock) as system:
        with pytest.raises(ClusterNotStarted, match=r"enter actors\.sharding"):
            system.cluster  # noqa: B018
        with pytest.raises(ClusterNotStarted):
            Cluster.of(system)
        async with Sharding(system, [], store=store, node="a", version="3") as a:
            assert system.cluster is a.cluster is Cluster.of(system)
            await clock.advance(0)
            assert system.cluster.members == [Member("a", "up", "3")]
            assert system.cluster.self_member == Member("a", "up", "3")
            assert system.cluster.node == "a" and system.cluster.version == "3"
            assert a.members == system.cluster.members  # it delegates
            # A second Sharding on the system (a test's second node) has its
            # own Cluster; the system's stays the first one's.
            async with Sharding(system, [], store=store.connect(), node="b") as b:
                await clock.advance(2.5)
                assert system.cluster is a.cluster is not b.cluster
                assert [m.node for m in b.cluster.members] == ["a", "b"]
        with pytest.raises(ClusterNotStarted):
            system.cluster  # noqa: B018


async def test_an_actor_subscribed_is_told_the_events_and_the_current_state() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [], store=store, node="a"),
    ):
        await clock.advance(0)
        early = system.spawn(Events)
        late = system.spawn(Events)
        system.cluster.subscribe(early)
        async with Sharding(system, [], store=store.connect(), node="b"):
            await clock.advance(2.5)
            # As Akka's InitialStateAsEvents: one event per member as it is.
            system.cluster.subscribe(late, initial_state=True)
            assert await late.ask("get") == [
                MemberUp(Member("a", "up", "0")),
                MemberUp(Member("b", "up", "0")),
            ]
        await clock.advance(2.5)
        # b joined and left between a's reads: its last steps, in order.
        told = await early.ask("get")
        assert MemberUp(Member("b", "up", "0")) in told
        assert told.index(MemberUp(Member("b", "up", "0"))) < told.index(
            MemberExited(Member("b", "exiting", "0"))
        )
        assert MemberExited(Member("b", "exiting", "0")) in await late.ask("get")
        # A stopped subscriber's subscription ends at the next event.
        late.stop()
        await late.join()
        async with Sharding(system, [], store=store.connect(), node="c"):
            await clock.advance(2.5)
        assert late not in system.cluster._subscribers
        assert MemberUp(Member("c", "up", "0")) in await early.ask("get")
        with pytest.raises(TypeError, match="ActorRef or a callable"):
            system.cluster.subscribe(1)  # type: ignore[arg-type]


class Blocked(Actor[Any]):
    """Takes one message and waits on ``gate`` with it (its mailbox fills)."""

    def __init__(self, gate: anyio.Event, took: anyio.Event) -> None:
        self.gate = gate
        self.took = took

    async def receive(self, message: Any) -> None:
        self.took.set()
        await self.gate.wait()


async def test_an_event_a_full_subscriber_cannot_take_is_a_dead_letter() -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [], store=store, node="a"),
    ):
        await clock.advance(0)
        gate, took = anyio.Event(), anyio.Event()
        ref = system.spawn(Blocked, gate, took, capacity=1)
        ref.tell("first")
        await took.wait()  # in hand; the next one fills its mailbox
        ref.tell("second")
        before = system.dead_letters.count
        system.cluster.subscribe(ref, initial_state=True)
        letters = system.dead_letters.recent
        assert system.dead_letters.count == before + 1
        assert letters[-1].message == MemberUp(Member("a", "up", "0"))
        assert letters[-1].reason == "mailbox full"
        gate.set()
