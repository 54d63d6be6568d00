"""``Sharding``: cluster sharding on one actor system (one node): the regions
of the entity types it hosts, entity refs by key, statistics.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, NamedTuple, TypeVar, overload

import anyio

from .. import ActorRef, ActorSystem
from ._allocation import AllocationStrategy, LeastShardAllocation
from ._cluster import Cluster, Subscriber
from ._coordinator import Coordination
from ._entity import Entity
from ._entity_ref import EntityRef
from ._errors import (
    ShardingError,
    UnknownEntityType,
)
from ._hash import check_key
from ._lease import LeaseEvent, Leases
from ._membership import Member
from ._memory_store import MemoryPlacementStore
from ._region import ShardRegion, region_name
from ._region_messages import Leave
from ._state import TypeState
from ._store import PlacementStore

__all__ = ["Sharding", "ShardingStatistics"]

logger = logging.getLogger("actors.sharding")

M = TypeVar("M")

#: Seconds a lease lives unless the store says otherwise (the memory store
#: made when none is given).
DEFAULT_LEASE = 10.0

# Letters, digits, _ . - (what a JetStream KV key allows), not ending in ".".
_NODE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,126}[A-Za-z0-9_-])?")


class ShardingStatistics(NamedTuple):
    """A snapshot of one node's sharding (``Sharding.statistics()``)."""

    #: node -> number of shards it hosts, per entity type: {type: {node: n}}
    shards_per_node: dict[str, dict[str, int]]
    #: (type, shard) -> entities running in it, for the shards hosted here
    entities_per_shard: dict[tuple[str, int], int]
    #: shards handed off by this node so far
    hand_offs: int
    #: messages waiting now (no home yet, hand-off, passivation)
    buffered: int
    #: messages dropped as dead letters (buffer full, shard fenced, leaving)
    dropped: int
    #: entities started so far (first start, after passivation, after hand-off)
    activations: int
    #: entities passivated so far
    passivations: int


class Sharding:
    """Cluster sharding for the entity types this node hosts (an ``async
    with`` scope inside the system's).

    On entry it starts one shard region per entity type (an actor named
    ``sharding-<type>-<node>``) and the node's cluster membership,
    ``self.cluster``, which ``system.cluster`` is while it runs (the first
    ``Sharding`` entered on a system); on exit it hands every shard off
    (entities stopped after their queued messages, leases given back) and
    stops them.

    A node a peer declared down (its failure detector) hosts nothing more
    and never comes back as itself (Akka's downing): ``cluster.wait_downed()``
    returns, and the node rejoins as a new incarnation, a new system
    (``python -m actors.node`` does it at once).

    Args:
        system: the running actor system.
        entities: the entity types this node hosts or sends to (type names
            unique; see ``roles``).
        store: the placement store (its entries must expire: the shard
            leases); None: a ``MemoryPlacementStore`` of 10 s leases on the
            system's clock (one process only).
        remember_store: where remembered entities are kept (entries that do
            not expire); None: a ``MemoryPlacementStore`` without ttl (lost
            with the process) when a type remembers its entities.
        node: this node's identity in the store, unique per incarnation
            (1 to 128 letters, digits and ``_.-``, not ending in ``.``);
            None: a random one.
        roles: this node's roles: a type whose ``Entity.role`` is not among
            them is not hosted here, only proxied (its refs work, its
            messages go to the nodes that host it; Akka's proxy region).
        version: this node's application version, in its membership entry
            (``members``): new shards go to the members of the highest
            version (a rolling upgrade; numbers compared by value).
        strategy: where shards go (default: least shards per node).
        renew_every: seconds between lease renewals (default: a quarter of
            the lease).
        lease_margin: seconds before a lease could expire at which a node that
            could not renew it stops the shard's entities (default: a quarter
            of the lease).
        on_lease: called with every [``LeaseEvent``][actors.sharding.LeaseEvent]
            of this node's shard leases (acquired, renewed, released, given
            up), in the event loop's thread; None: nobody. An exception it
            raises is logged.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: two entity types share a name, ``node`` is malformed,
            the store's entries do not expire, or the timings do not fit the
            lease (``renew_every`` and ``lease_margin`` > 0, their sum below
            the lease).
    """

    def __init__(
        self,
        system: ActorSystem,
        entities: Iterable[Entity[Any]],
        *,
        store: PlacementStore | None = None,
        remember_store: PlacementStore | None = None,
        node: str | None = None,
        roles: Iterable[str] = (),
        version: str = "0",
        strategy: AllocationStrategy | None = None,
        renew_every: float | None = None,
        lease_margin: float | None = None,
        on_lease: Callable[[LeaseEvent], object] | None = None,
    ) -> None:
        if not isinstance(system, ActorSystem):
            raise TypeError(f"system is an ActorSystem, not {system!r}")
        types: dict[str, Entity[Any]] = {}
        for entity in entities:
            if not isinstance(entity, Entity):
                raise TypeError(f"entities holds Entity objects, not {entity!r}")
            if entity.type_name in types:
                raise ValueError(f"two entity types are named {entity.type_name!r}")
            types[entity.type_name] = entity
        if isinstance(roles, str):
            raise TypeError(f"roles is a collection of str, not the str {roles!r}")
        role_set = frozenset(roles)
        if not all(type(role) is str for role in role_set):
            raise TypeError(
                f"roles holds str values, not {sorted(map(repr, role_set))}"
            )
        if type(version) is not str:
            raise TypeError(f"version is a str, not {version!r}")
        if node is None:
            node = f"node-{secrets.token_hex(6)}"
        elif type(node) is not str or _NODE.fullmatch(node) is None:
            raise ValueError(
                f"node must be 1 to 128 letters, digits or '_.-' (not ending in "
                f"'.'), not {node!r}"
            )
        clock = system.clock
        if store is None:
            store = MemoryPlacementStore(DEFAULT_LEASE, clock=clock)
        elif not isinstance(store, PlacementStore):
            raise TypeError(f"store is a PlacementStore, not {store!r}")
        lease = store.ttl
        if lease is None:
            raise ValueError(
                "the placement store's entries must expire (they are the shard "
                "leases): give it a ttl, e.g. MemoryPlacementStore(ttl=10)"
            )
        if remember_store is None and any(e.remember for e in types.values()):
            remember_store = MemoryPlacementStore(None, clock=clock)
        renew = lease / 4 if renew_every is None else float(renew_every)
        margin = lease / 4 if lease_margin is None else float(lease_margin)
        if not (renew > 0 and margin > 0 and renew + margin < lease):
            raise ValueError(
                f"renew_every ({renew} s) and lease_margin ({margin} s) must be "
                f"> 0 and add up to less than the lease ({lease} s)"
            )
        self.system = system
        self.node = node
        self.store = store
        self.remember_store = remember_store
        self.roles = role_set
        self.version = version
        #: this node's cluster membership (``system.cluster`` while entered)
        self.cluster = Cluster(system, store, node, version, renew)
        self.strategy = strategy if strategy is not None else LeastShardAllocation()
        self.renew_every = renew
        if on_lease is not None and not callable(on_lease):
            raise TypeError(f"on_lease must be callable or None, not {on_lease!r}")
        self._lease_observer = on_lease
        self.lease_margin = margin
        self._entities = types
        self._types: dict[str, TypeState] = {}
        self._regions: dict[str, ActorRef[Any]] = {}
        #: the regions' queues to their peers on other nodes (on a node)
        self._links: list[Any] = []
        self._running = False

    @property
    def entities(self) -> list[Entity[Any]]:
        """The entity types known here (hosted or proxied)."""
        return list(self._entities.values())

    def hosts(self, type_name: str) -> bool:
        """Whether this node hosts ``type_name`` (False: unknown, or proxied
        because its role is not among this node's)."""
        entity = self._entities.get(type_name)
        return entity is not None and (entity.role is None or entity.role in self.roles)

    async def __aenter__(self) -> Sharding:
        if self._running or self._types:
            raise ShardingError("this Sharding was entered already")
        try:
            self._start()
        except BaseException:
            # Undo what was spawned: ``async with`` never reaches
            # ``__aexit__`` when entering fails (a region's name taken, the
            # system stopping).
            with anyio.CancelScope(shield=True):
                await self._stop_spawned()
            raise
        self._running = True
        return self

    def _start(self) -> None:
        """Spawn the membership actor and a region per entity type."""
        clock = self.system.clock
        # The leases and their guard read this clock (time.monotonic: what
        # anyio.current_time reads on asyncio, without its backend lookup).
        now = time.monotonic if clock is None else clock.now
        remote = self.system.remote
        wires: Any = None
        address: list[str] | None = None
        if remote is not None:
            # A node of actors.remote (msgspec is installed): its regions
            # reach their peers on other nodes over the wire.
            from . import _wire as wires

            address = wires.text_of(wires.node_of(remote))
        self.cluster._start(None if address is None else address[1])
        for name, entity in self._entities.items():
            state = TypeState(entity, self.node, self.system, now)
            wire = None if wires is None else wires.RegionWire(remote, state)
            state.on_downed = self.cluster._declared_down
            leases = Leases(
                self.store, name, self.node, now, self.lease_margin, self._on_lease
            )
            state.leases = leases
            coordination = Coordination(
                self.store, self.strategy, name, self.node, address, self.version
            )
            region = self.system.spawn(
                ShardRegion,
                state,
                leases,
                coordination,
                self.remember_store,
                self.renew_every,
                self.renew_every,  # a store call's timeout
                entity.role is None or entity.role in self.roles,
                wire,
                name=region_name(name, self.node),
            )
            state.region = region
            self._types[name] = state
            self._regions[name] = region
            if wire is not None:
                self._links.append(wire.links)
            telemetry = self.system.telemetry
            if telemetry is not None:  # opentelemetry is installed
                from ._telemetry import watch

                watch(telemetry, state)

    async def _stop_spawned(self) -> None:
        """Stop the regions and the membership actor spawned so far."""
        for region in self._regions.values():
            region.stop()
            await region.join()
        for state in self._types.values():
            state.region = None
        self._regions.clear()
        self._links.clear()
        self._types.clear()
        await self.cluster._stop()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.leave()

    async def leave(self, timeout: float = 10.0) -> None:
        """Hand every shard off and stop the regions (what leaving the ``async
        with`` does): entities stop after their queued messages, leases are
        given back, and what waits for a home is dropped as dead letters.
        Waits at most ``timeout`` seconds (event loop's clock); then the
        regions are stopped as they are.
        """
        if not self._running:
            return
        self._running = False
        cluster = self.cluster
        with anyio.move_on_after(timeout), anyio.CancelScope(shield=True):
            await cluster._set_status("leaving")
            for region in self._regions.values():
                done = anyio.Event()
                region.tell(Leave(done))
                if region.is_alive:
                    await done.wait()
            for links in self._links:  # the last forwards and moves go out
                await links.drained()
            await cluster._set_status("exiting")
        for name, region in self._regions.items():
            region.stop()
            await region.join()
            self._types[name].region = None
        await cluster._stop()  # its "exiting" entry expires

    @property
    def members(self) -> list[Member]:
        """The members as last read from the store (``self.cluster.members``,
        which ``system.cluster.members`` is too)."""
        return self.cluster.members

    def subscribe(
        self, subscriber: Subscriber, *, initial_state: bool = False
    ) -> Callable[[], None]:
        """Send every membership event this node sees from now on to
        ``subscriber`` (``self.cluster.subscribe``, see
        [``Cluster.subscribe``][actors.sharding.Cluster.subscribe]).

        Returns:
            A function that unsubscribes it.

        Raises:
            TypeError: ``subscriber`` is neither an actor ref nor callable.
        """
        return self.cluster.subscribe(subscriber, initial_state=initial_state)

    def _on_lease(self, event: LeaseEvent) -> None:
        observer = self._lease_observer
        if observer is None:
            return
        try:
            observer(event)
        except Exception:
            logger.exception("lease observer %r failed on %r", observer, event)

    @overload
    def entity_ref(self, entity: Entity[M], key: str) -> EntityRef[M]: ...

    @overload
    def entity_ref(self, entity: str, key: str) -> EntityRef[Any]: ...

    def entity_ref(self, entity: Entity[Any] | str, key: str) -> EntityRef[Any]:
        """The ref of entity ``key`` of a type (its ``Entity``, which types
        the ref, or its name). Cheap; equal refs for equal (type, key).

        Raises:
            UnknownEntityType: the type is not hosted here.
            TypeError, ValueError: ``key`` is not a valid key (a non-empty
                ``str`` of at most 1024 UTF-8 bytes).
        """
        name = entity.type_name if isinstance(entity, Entity) else entity
        state = self._types.get(name) if type(name) is str else None
        if state is None:
            known = ", ".join(sorted(self._entities)) or "none"
            raise UnknownEntityType(
                f"entity type {name!r} is not hosted by this Sharding "
                f"(hosted: {known}); pass it in entities=[...]"
            )
        return EntityRef(state, check_key(key))

    def region(self, type_name: str) -> ActorRef[Any]:
        """The shard region actor of a type on this node.

        Raises:
            UnknownEntityType: the type is not hosted here.
        """
        region = self._regions.get(type_name)
        if region is None:
            raise UnknownEntityType(f"entity type {type_name!r} has no region here")
        return region

    def statistics(self) -> ShardingStatistics:
        """A snapshot of this node's sharding (see ``ShardingStatistics``)."""
        per_node: dict[str, dict[str, int]] = {}
        entities: dict[tuple[str, int], int] = {}
        hand_offs = buffered = dropped = activations = passivations = 0
        for name, state in self._types.items():
            per_node[name] = {self.node: len(state.hosted)}
            for shard, hosted in state.hosted.items():
                entities[(name, shard)] = len(hosted.entities)
            hand_offs += state.hand_offs
            buffered += sum(state.inflight)
            dropped += state.dropped
            activations += state.activations
            passivations += state.passivations
        return ShardingStatistics(
            per_node, entities, hand_offs, buffered, dropped, activations, passivations
        )
