"""Sharding rows: entities addressed by key beside the same actors used
directly through their refs.

* ``sharding/tell/active``: 100 running entities are told ``count`` messages
  in turn through their ``EntityRef``s, then each is asked for its count
  (timed until every answer is in). The other, ``direct tell``: the same 100
  actors spawned directly, told the same messages through their
  ``ActorRef``s. Unit: one message; the ratio is what addressing by key costs
  on the fast path (the issue's bar: at least 0.8x the throughput, a time
  ratio of at most 1.25x).
* ``sharding/ask/active``: one task asks a running entity ``count`` times in
  turn through its ``EntityRef``; the other asks the same actor through its
  ``ActorRef``. Unit: one round trip.
* ``sharding/activation``: ``count`` entities, none running, each asked once
  (the first message to a passive entity: its shard's lease taken once per
  shard, the entity started, the message delivered, the reply). The other,
  ``spawn + ask``: spawning each actor directly and asking it once. Unit: one
  activation.

* ``sharding/idle``: bytes still allocated (``tracemalloc``) per idle
  entity: ``count`` entities each asked once, then idle with empty
  mailboxes, after a full garbage collection (the first entity, and its
  shard's lease, paid before the count starts). The other, ``spawned``: the
  same actors spawned directly and asked once, their refs kept. The cells
  read **bytes per entity**, not nanoseconds (as ``footprint/idle``). Unit:
  one entity, in bytes.

* ``sharding/rebalance``: ``2 * count`` shards of one running entity each,
  all held by node ``a``, and node ``b`` joins (both in one system, one
  store): from ``b``'s entry until it holds ``count`` (half: the rebalance
  is done), the coordinator moving at most 100 at once
  (``LeastShardAllocation(absolute_limit=100, relative_limit=0.1)``), its
  rounds 0.25 s apart (``renew_every``). 1,000 shards in a full run. The
  other, ``leases only``: the same ``count`` leases released by one node and
  taken by the other, one after the other, on the same store: what moving
  them costs at least, without hand-offs and rounds. Unit: one shard moved.
  The default CPU clock counts the work; ``--clock wall`` reads how long the
  rebalance takes (the rounds' waits included).

Starting sharding and the entities of the ``active`` rows is not timed. The
leases are long (600 s): a loop of tells holds the event loop, and a node
that cannot renew its leases in time stops its entities (as it must).
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from actors import Actor, ActorSystem
from actors.sharding import (
    Entity,
    LeastShardAllocation,
    MemoryPlacementStore,
    Sharding,
    shard_of,
)
from actors.sharding.lowlevel import Leases

from .._clock import now
from .._registry import Impl, Row, Sample, register

__all__: list[str] = []

ENTITIES = 100
TELLS, QUICK_TELLS = 200_000, 2_000
ASKS, QUICK_ASKS = 20_000, 500
ACTIVATIONS, QUICK_ACTIVATIONS = 5_000, 200
IDLE, QUICK_IDLE = 2_000, 200
#: shards moved by sharding/rebalance (half of the shards)
MOVES, QUICK_MOVES = 500, 50
#: seconds between a region's rounds (renewals, rebalance) in that row
ROUND = 0.25


class Counter(Actor[Any]):
    """Counts what it is told; ``None`` answers the count."""

    def __init__(self, key: str = "") -> None:
        self.count = 0

    def receive(self, message: Any) -> int:
        if message is not None:
            self.count += 1
        return self.count


COUNTER = Entity("counter", Counter, shards=100, passivate_after=None)


def _sharding(system: ActorSystem) -> Sharding:
    # Ten-minute leases: a sample's loop of tells never yields, and on a
    # loaded machine it may hold the event loop past a 10 s lease's renewal,
    # which would rightly fence the shards (their entities stop).
    store = MemoryPlacementStore(600.0)
    return Sharding(system, [COUNTER], store=store)


@asynccontextmanager
async def _sharded() -> AsyncIterator[Sharding]:
    """A system with sharding of ``COUNTER`` (the sharded samples' setup)."""
    async with ActorSystem() as system, _sharding(system) as sharding:
        yield sharding


async def _tell_all(refs: Sequence[Any], count: int) -> Sample:
    """``count`` tells spread over ``refs`` (each running first), until each
    has counted its share (the same loop for entity refs and actor refs)."""
    for ref in refs:
        await ref.ask(None)  # running
    start = now()
    for n in range(count):
        refs[n % ENTITIES].tell(n)
    received = 0
    for ref in refs:
        received += await ref.ask(None, timeout=300.0)
    return Sample(now() - start, received)


async def _ask_in_turn(ref: Any, count: int) -> Sample:
    """``count`` asks of ``ref`` one after the other (running first)."""
    await ref.ask(None)
    ask = ref.ask
    start = now()
    last = 0
    for n in range(count):
        last = await ask(n)
    return Sample(now() - start, last)


async def sharded_tell(count: int) -> Sample:
    async with _sharded() as sharding:
        refs = [sharding.entity_ref(COUNTER, str(i)) for i in range(ENTITIES)]
        sample = await _tell_all(refs, count)
    return sample


async def direct_tell(count: int) -> Sample:
    async with ActorSystem() as system:
        refs = [system.spawn(Counter, str(i)) for i in range(ENTITIES)]
        sample = await _tell_all(refs, count)
    return sample


async def sharded_ask(count: int) -> Sample:
    async with _sharded() as sharding:
        sample = await _ask_in_turn(sharding.entity_ref(COUNTER, "0"), count)
    return sample


async def direct_ask(count: int) -> Sample:
    async with ActorSystem() as system:
        sample = await _ask_in_turn(system.spawn(Counter), count)
    return sample


async def sharded_activation(count: int) -> Sample:
    async with _sharded() as sharding:
        refs = [sharding.entity_ref(COUNTER, str(i)) for i in range(count)]
        start = now()
        activated = 0
        for ref in refs:
            activated += 1 + await ref.ask(None)
        elapsed = now() - start
    return Sample(elapsed, activated)


async def spawned_activation(count: int) -> Sample:
    async with ActorSystem() as system:
        start = now()
        activated = 0
        for i in range(count):
            activated += 1 + await system.spawn(Counter, str(i)).ask(None)
        elapsed = now() - start
    return Sample(elapsed, activated)


def _key_per_shard(shards: int) -> list[str]:
    found: dict[int, str] = {}
    i = 0
    while len(found) < shards:
        found.setdefault(shard_of(f"s{i}", shards), f"s{i}")
        i += 1
    return list(found.values())


async def rebalanced(count: int) -> Sample:
    entity = Entity("moving", Counter, shards=2 * count, passivate_after=None)
    store = MemoryPlacementStore(10.0)
    strategy = LeastShardAllocation(absolute_limit=100, relative_limit=0.1)

    def node(system: ActorSystem, name: str, store: MemoryPlacementStore) -> Sharding:
        return Sharding(
            system,
            [entity],
            store=store,
            node=name,
            strategy=strategy,
            renew_every=ROUND,
        )

    async with ActorSystem() as system, node(system, "a", store) as a:
        for key in _key_per_shard(2 * count):  # one running entity per shard
            await a.entity_ref(entity, key).ask(None)
        start = now()
        async with node(system, "b", store.connect()) as b:
            while b.statistics().shards_per_node["moving"]["b"] < count:
                await anyio.sleep(ROUND / 4)
            elapsed = now() - start
            moved = b.statistics().shards_per_node["moving"]["b"]
    return Sample(elapsed, moved)


async def leases_moved(count: int) -> Sample:
    store = MemoryPlacementStore(10.0)
    a = Leases(store, "moving", "a", anyio.current_time, 2.5)
    b = Leases(store.connect(), "moving", "b", anyio.current_time, 2.5)
    for shard in range(count):
        await a.acquire(shard)
    start = now()
    moved = 0
    for shard in range(count):
        await a.release(shard)
        moved += await b.acquire(shard)
    return Sample(now() - start, moved)


async def _settle() -> None:
    for _ in range(3):
        await anyio.wait_all_tasks_blocked()


async def sharded_idle(count: int) -> Sample:
    # One entity per shard first: the shards' leases and Shard actors, paid
    # once per shard, stay out of the per-entity figure.
    async with ActorSystem() as system, _sharding(system) as sharding:
        warm: dict[int, str] = {}
        i = 0
        while len(warm) < COUNTER.shards:
            warm.setdefault(shard_of(f"warm-{i}", COUNTER.shards), f"warm-{i}")
            i += 1
        for key in warm.values():
            await sharding.entity_ref(COUNTER, key).ask(None)
        await _settle()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for i in range(count):
                await sharding.entity_ref(COUNTER, str(i)).ask(None)
            await _settle()
            gc.collect()
            size = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        idle = sharding.statistics().activations - len(warm)
    return Sample(size * 1e-9, idle)  # bytes as seconds * 1e-9


async def spawned_idle(count: int) -> Sample:
    async with ActorSystem() as system:
        first = system.spawn(Counter, "first")
        await first.ask(None)
        await _settle()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            refs = []
            for i in range(count):
                ref = system.spawn(Counter, str(i))
                await ref.ask(None)
                refs.append(ref)
            await _settle()
            gc.collect()
            size = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        idle = sum(ref.is_alive for ref in refs)
    return Sample(size * 1e-9, idle)


register(
    Row(
        "sharding/tell/active",
        f"{ENTITIES} running entities told through their EntityRefs, vs the "
        "same actors told through their ActorRefs",
        TELLS,
        QUICK_TELLS,
        (Impl("ours", sharded_tell), Impl("direct tell", direct_tell)),
        unit="message",
    )
)
register(
    Row(
        "sharding/ask/active",
        "a running entity asked in turn through its EntityRef, vs the same "
        "actor asked through its ActorRef",
        ASKS,
        QUICK_ASKS,
        (Impl("ours", sharded_ask), Impl("direct ask", direct_ask)),
        unit="round trip",
    )
)
register(
    Row(
        "sharding/activation",
        "the first message to each of many passive entities (lease, start, "
        "reply), vs spawning each actor and asking it",
        ACTIVATIONS,
        QUICK_ACTIVATIONS,
        (
            Impl("ours", sharded_activation),
            Impl("spawn + ask", spawned_activation),
        ),
        unit="activation",
    )
)
register(
    Row(
        "sharding/idle",
        f"bytes retained per idle entity, {IDLE:,} activated (cells: bytes, "
        "not ns), vs the same actors spawned directly",
        IDLE,
        QUICK_IDLE,
        (Impl("ours", sharded_idle), Impl("spawned", spawned_idle)),
        unit="entity, in bytes",
    )
)
register(
    Row(
        "sharding/rebalance",
        f"{2 * MOVES:,} shards on one node, another joins: until it holds half "
        "(at most 100 moves a round), vs the leases alone released and taken",
        MOVES,
        QUICK_MOVES,
        (Impl("ours", rebalanced), Impl("leases only", leases_moved)),
        unit="shard moved",
    )
)
