"""Sharding on one node: entity refs by key before the entity exists,
activation on demand, per-sender order, passivation with what arrives
meanwhile held and delivered, the buffer bound, hand-off on leave,
statistics."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, DeadLetter
from actors.sharding import (
    BufferFull,
    Entity,
    EntityRef,
    MemoryPlacementStore,
    Sharding,
    ShardingError,
    UnknownEntityType,
    shard_of,
)
from actors.testing import ManualClock

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


async def test_an_entity_ref_works_before_its_entity_exists() -> None:
    log = Log()
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("account", recorders(log))]) as sharding,
    ):
        ref = sharding.entity_ref("account", "42")
        assert log.started == []
        assert await ref.ask(5) == 1
        assert await ref.ask("key") == "42"
        assert log.started == ["42"]
        assert sharding.statistics().activations == 1


async def test_entity_refs_are_equal_for_equal_type_and_key() -> None:
    entity = Entity("account", recorders(Log()), shards=10)
    async with ActorSystem() as system, Sharding(system, [entity]) as sharding:
        one: EntityRef[Any] = sharding.entity_ref(entity, "7")
        assert one == sharding.entity_ref("account", "7")
        assert hash(one) == hash(sharding.entity_ref("account", "7"))
        assert one != sharding.entity_ref("account", "8")
        assert one.shard == shard_of("7", 10)
        assert repr(one) == "EntityRef('account', '7')"


async def test_each_key_has_its_own_entity() -> None:
    log = Log()
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("account", recorders(log), shards=4)]) as sharding,
    ):
        for i in range(20):
            sharding.entity_ref("account", str(i)).tell(i)
        for i in range(20):
            assert await sharding.entity_ref("account", str(i)).ask("get") == [i]
        stats = sharding.statistics()
        assert sum(stats.entities_per_shard.values()) == 20
        assert stats.shards_per_node["account"][sharding.node] == len(
            {shard_of(str(i), 4) for i in range(20)}
        )


async def test_messages_keep_their_senders_order_across_the_entitys_activation() -> (
    None
):
    # The first messages take the slow path (region, shard) while the entity
    # starts; later ones would take the fast path, but not before them.
    log = Log()
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("t", recorders(log))]) as sharding,
    ):
        ref = sharding.entity_ref("t", "k")
        for i in range(300):
            ref.tell(i)
            if i % 7 == 0:
                await anyio.lowlevel.checkpoint()
        assert await ref.ask("get") == list(range(300))


async def test_senders_in_many_tasks_each_keep_their_order() -> None:
    log = Log()
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("t", recorders(log))]) as sharding,
    ):

        async def sender(name: str) -> None:
            ref = sharding.entity_ref("t", "k")
            for i in range(100):
                await ref.send((name, i))
                if i % 3 == 0:
                    await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            for name in "abcd":
                tg.start_soon(sender, name)
        seen = await sharding.entity_ref("t", "k").ask("get")
        for name in "abcd":
            assert [i for n, i in seen if n == name] == list(range(100))


async def test_an_idle_entity_is_passivated_and_started_again_by_its_next_message() -> (
    None
):
    clock = ManualClock()
    log = Log()
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [Entity("t", recorders(log), passivate_after=10)]) as sharding,
    ):
        ref = sharding.entity_ref("t", "k")
        assert await ref.ask(1) == 1
        await clock.advance(9)
        assert log.stopped == []
        assert await ref.ask(2) == 2  # activity: the idle time starts again
        await clock.advance(10)
        assert log.stopped == []
        await clock.advance(5)
        assert log.stopped == ["k"]
        assert sharding.statistics().passivations == 1
        assert await ref.ask(3) == 1  # a fresh instance
        assert log.started == ["k", "k"]


async def test_messages_arriving_while_an_entity_passivates_are_delivered_after_it_restarts() -> (  # noqa: E501
    None
):
    clock = ManualClock()
    log = Log(hold_stop=anyio.Event())
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [Entity("t", recorders(log), passivate_after=10)]) as sharding,
    ):
        ref = sharding.entity_ref("t", "k")
        ref.tell("before")
        assert await ref.ask("get") == ["before"]
        async with anyio.create_task_group() as tg:
            tg.start_soon(clock.advance, 20)
            await log.stopping.wait()  # passivating, held in on_stop
            for i in range(5):
                ref.tell(i)
            assert sharding.statistics().buffered == 5
            assert log.hold_stop is not None
            log.hold_stop.set()
        assert await ref.ask("get") == [0, 1, 2, 3, 4]
        assert log.stopped == ["k"] and log.started == ["k", "k"]
        assert sharding.statistics().buffered == 0


async def test_past_the_buffer_a_tell_raises_buffer_full_and_the_message_is_a_dead_letter() -> (  # noqa: E501
    None
):
    clock = ManualClock()
    log = Log(hold_stop=anyio.Event())
    letters: list[DeadLetter] = []
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(
            system, [Entity("t", recorders(log), passivate_after=10, buffer=3)]
        ) as sharding,
    ):
        system.dead_letters.subscribe(letters.append)
        ref = sharding.entity_ref("t", "k")
        await ref.ask("get")
        async with anyio.create_task_group() as tg:
            tg.start_soon(clock.advance, 20)
            await log.stopping.wait()
            for i in range(3):
                ref.tell(i)
            with pytest.raises(BufferFull, match="3 messages for shard"):
                ref.tell("too many")
            assert log.hold_stop is not None
            log.hold_stop.set()
        assert await ref.ask("get") == [0, 1, 2]
        assert sharding.statistics().dropped == 1
        assert [(d.message, d.reason) for d in letters] == [
            ("too many", "sharding buffer full")
        ]


async def test_leaving_hands_off_after_the_entities_handled_what_was_queued() -> None:
    log = Log()
    async with ActorSystem() as system:
        async with Sharding(system, [Entity("t", recorders(log))]) as sharding:
            ref = sharding.entity_ref("t", "k")
            await ref.ask("get")
            for i in range(200):
                ref.tell(i)
        assert log.handled["k"] == list(range(200))
        assert log.stopped == ["k"]
        assert sharding.statistics().hand_offs == 1


class Gated(Actor[Any]):
    """Waits for ``gate`` inside its handler of ``"first"``; records the rest."""

    def __init__(self, entered: anyio.Event, gate: anyio.Event, handled: list[Any]):
        self.entered, self.gate, self.handled = entered, gate, handled

    async def receive(self, message: Any) -> None:
        if message == "first":
            self.entered.set()
            await self.gate.wait()
        self.handled.append(message)


async def test_leaving_a_lone_node_finishes_what_the_entity_took_in_its_batch() -> None:
    # The entity's message loop took "first" and the ten after it at once;
    # the leave starts while it is inside "first": the hand-off must wait for
    # the ten (they are still queued for it), not stop it after "first".
    entered, gate, handled = anyio.Event(), anyio.Event(), []
    entity = Entity("g", lambda key: Gated(entered, gate, handled))
    async with ActorSystem() as system:
        sharding = Sharding(system, [entity])
        async with sharding:
            ref = sharding.entity_ref(entity, "k")
            ref.tell("first")
            for n in range(10):
                ref.tell(n)
            await entered.wait()
            async with anyio.create_task_group() as tg:
                tg.start_soon(sharding.leave)
                with anyio.fail_after(10):  # the hand-off began: it retired "k"
                    while any(sharding.statistics().entities_per_shard.values()):
                        await anyio.lowlevel.checkpoint()
                gate.set()
        assert handled == ["first", *range(10)]
        assert system.dead_letters.count == 0
        assert sharding.statistics().hand_offs == 1


async def test_leaving_gives_the_leases_back() -> None:
    store = MemoryPlacementStore(10)
    async with ActorSystem() as system:
        async with Sharding(system, [Entity("t", recorders(Log()))], store=store) as s:
            await s.entity_ref("t", "k").ask("get")
            assert [e.key for e in await store.list("shards/")] == [
                f"shards/t/{shard_of('k', 100)}"
            ]
        assert await store.list("shards/") == []


async def test_a_failing_entity_is_restarted_by_its_shard() -> None:
    log = Log()
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("t", recorders(log))]) as sharding,
    ):
        ref = sharding.entity_ref("t", "k")
        await ref.ask(1)
        with pytest.raises(RuntimeError, match="on purpose"):
            await ref.ask("fail")
        assert await ref.ask("get") == []  # a fresh instance from the factory
        assert log.started == ["k", "k"]


async def test_an_entity_that_stops_itself_starts_again_on_its_next_message() -> None:
    log = Log()
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("t", recorders(log))]) as sharding,
    ):
        ref = sharding.entity_ref("t", "k")
        await ref.ask(1)
        await ref.ask("stop-yourself")
        with anyio.fail_after(5):
            while sharding.statistics().entities_per_shard.get(("t", ref.shard)):
                await anyio.sleep(0.001)
        assert await ref.ask("get") == []
        assert log.started == ["k", "k"]


async def test_an_unknown_type_or_a_bad_key_is_refused_with_a_clear_error() -> None:
    async with (
        ActorSystem() as system,
        Sharding(system, [Entity("account", recorders(Log()))]) as sharding,
    ):
        with pytest.raises(UnknownEntityType, match=r"'order'.*hosted: account"):
            sharding.entity_ref("order", "1")
        with pytest.raises(TypeError, match="str"):
            sharding.entity_ref("account", 1)  # type: ignore[call-overload]
        with pytest.raises(ValueError, match="empty"):
            sharding.entity_ref("account", "")


async def test_a_ref_outliving_its_sharding_raises_a_sharding_error() -> None:
    async with ActorSystem() as system:
        async with Sharding(system, [Entity("t", recorders(Log()))]) as sharding:
            ref = sharding.entity_ref("t", "k")
            await ref.ask("get")
        with pytest.raises(ShardingError, match="not running"):
            ref.tell(1)


async def test_bad_sharding_options_are_refused() -> None:
    async with ActorSystem() as system:
        entity = Entity("t", recorders(Log()))
        with pytest.raises(ValueError, match="two entity types"):
            Sharding(system, [entity, entity])
        with pytest.raises(ValueError, match="expire"):
            Sharding(system, [entity], store=MemoryPlacementStore(None))
        with pytest.raises(ValueError, match="lease"):
            Sharding(system, [entity], renew_every=6, lease_margin=5)
        with pytest.raises(ValueError, match="node"):
            Sharding(system, [entity], node="a/b")
        with pytest.raises(TypeError, match="Entity"):
            Sharding(system, ["t"])  # type: ignore[list-item]
