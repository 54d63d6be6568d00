"""Sharding rows across two nodes: entities addressed by key from another
node beside the same actors used directly through remote refs.

Two systems of this process, nodes ``a`` and ``b`` of ``actors.remote`` on
this process's ``nats-server``, each with a ``Sharding`` of one entity type
hosted only on ``b`` (its role), on one placement store (a
``MemoryPlacementStore`` of 600 s leases shared by both: the leases are not
what these rows measure). Every message goes from ``a`` to an entity on
``b``.

* ``sharding/tell/remote``: 100 running entities on ``b`` are sent
  ``count`` messages in turn from ``a`` through their ``EntityRef``s
  (``await ref.send(n)``: it waits for room, as the ``remote/tell`` rows),
  then each is asked for its count (timed until every answer is in). The
  other, ``direct remote tell``: the same 100 entity actors, looked up on
  ``b`` from ``a`` by their paths, sent the same messages through their
  ``RemoteRef``s. Unit: one message; the ratio is what addressing by key
  costs across nodes (the issue's bar: at least 0.8x the throughput, a time
  ratio of at most 1.25x).
* ``sharding/activation/remote``: ``count`` entities of ``b``, none running,
  each asked once from ``a`` (the first message to a passive entity on
  another node: its shard located and leased once per shard, the entity
  started, the message delivered, the reply). The other, ``spawn + remote
  ask``: for each, an actor spawned on ``b``, looked up from ``a`` (a round
  trip) and asked once through its remote ref. Unit: one activation.

Starting the nodes, their sharding and the entities of the ``tell`` row is
not timed. Without ``nats-server`` the rows are not registered (a note on
stderr says why).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from actors.sharding import Entity, MemoryPlacementStore, Sharding

from .._clock import now
from .._registry import Impl, Row, Sample, register
from ._systems import missing, two_nodes
from .sharding import Counter

__all__: list[str] = []

ENTITIES = 100
TELLS, QUICK_TELLS = 100_000, 2_000
ACTIVATIONS, QUICK_ACTIVATIONS = 1_000, 50
#: Seconds a sample waits for an answer before the row fails.
GUARD = 120.0
LEASE = 600.0


COUNTER = Entity("rcounter", Counter, shards=100, passivate_after=None, role="host")


@asynccontextmanager
async def _nodes() -> AsyncIterator[tuple[Sharding, Sharding]]:
    """Sharding of ``COUNTER`` on nodes ``a`` (sender, a proxy) and ``b``
    (its host), one store; yields ``(a, b)`` once ``b`` is a member."""
    store = MemoryPlacementStore(LEASE)
    async with two_nodes() as (a, b):
        host = Sharding(b, [COUNTER], store=store.connect(), node="b", roles={"host"})
        async with host:
            with anyio.fail_after(GUARD):
                while not await store.list("regions/rcounter/"):
                    await anyio.sleep(0.005)
            async with Sharding(a, [COUNTER], store=store.connect(), node="a") as proxy:
                yield proxy, host


async def _send_all(refs: Sequence[Any], count: int) -> Sample:
    """``count`` sends spread over ``refs`` (each running first), until each
    has counted its share (the same loop for entity refs and remote refs)."""
    for ref in refs:
        await ref.ask(None, timeout=GUARD)  # running
    sends = [ref.send for ref in refs]
    start = now()
    for n in range(count):
        await sends[n % ENTITIES](n)
    received = 0
    for ref in refs:
        received += await ref.ask(None, timeout=GUARD)
    return Sample(now() - start, received)


async def sharded_tell(count: int) -> Sample:
    async with _nodes() as (proxy, _):
        refs = [proxy.entity_ref(COUNTER, str(i)) for i in range(ENTITIES)]
        sample = await _send_all(refs, count)
    return sample


async def direct_tell(count: int) -> Sample:
    async with _nodes() as (proxy, host):
        keys = [str(i) for i in range(ENTITIES)]
        for key in keys:  # running on b: their actors exist
            await proxy.entity_ref(COUNTER, key).ask(None, timeout=GUARD)
        remote = proxy.system.remote
        assert remote is not None
        refs = []
        for key in keys:
            path = host._types["rcounter"].active[key].ref.path
            refs.append(await remote.lookup("b", path))
        sample = await _send_all(refs, count)
    return sample


async def sharded_activation(count: int) -> Sample:
    async with _nodes() as (proxy, _):
        refs = [proxy.entity_ref(COUNTER, f"x{i}") for i in range(count)]
        start = now()
        activated = 0
        for ref in refs:
            activated += 1 + await ref.ask(None, timeout=GUARD)
        elapsed = now() - start
    return Sample(elapsed, activated)


async def spawned_activation(count: int) -> Sample:
    async with _nodes() as (proxy, host):
        remote = proxy.system.remote
        assert remote is not None
        start = now()
        activated = 0
        for i in range(count):
            ref = host.system.spawn(Counter, str(i), name=f"c{i}")
            far = await remote.lookup("b", f"/user/c{i}")
            activated += 1 + await far.ask(None, timeout=GUARD)
            del ref
        elapsed = now() - start
    return Sample(elapsed, activated)


_why = missing()
if _why is not None:
    print(f"benchmarks: sharding remote rows skipped: {_why}", file=sys.stderr)
else:
    register(
        Row(
            "sharding/tell/remote",
            f"{ENTITIES} running entities of another node sent messages through "
            "their EntityRefs, vs the same actors through their RemoteRefs",
            TELLS,
            QUICK_TELLS,
            (Impl("ours", sharded_tell), Impl("direct remote tell", direct_tell)),
            unit="message",
        )
    )
    register(
        Row(
            "sharding/activation/remote",
            "the first message to each of many passive entities of another node "
            "(locate, lease, start, reply), vs a spawn there, a lookup and an ask",
            ACTIVATIONS,
            QUICK_ACTIVATIONS,
            (
                Impl("ours", sharded_activation),
                Impl("spawn + remote ask", spawned_activation),
            ),
            unit="activation",
        )
    )
