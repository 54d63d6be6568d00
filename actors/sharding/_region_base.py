"""``RegionBase``: what a shard region holds (its tables, its store side)
and its plumbing: background store calls bounded in time, one background
round of a kind at a time, finding a peer region. ``ShardRegion`` adds the
behaviour (routing, leases, hand-off, leaving), as Akka's actor cell keeps
its parts apart.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from .. import Actor, ActorNotFound, ActorRef, Result
from ._coordinator import Coordination
from ._errors import PlacementUnavailable
from ._lease import Leases
from ._region_messages import Leave
from ._state import Deliver, TypeState
from ._store import PlacementStore

__all__ = ["RegionBase", "ShardTable", "region_name"]

T = TypeVar("T")
V = TypeVar("V")

#: Ended remote peer regions remembered (the oldest forgotten beyond): a
#: node's incarnation never comes back, so this only keeps the table small.
_MAX_DOWN = 4096


def region_name(type_name: str, node: str) -> str:
    """The actor name of a node's region of a type."""
    return f"sharding-{type_name}-{node}"


class ShardTable(dict[int, V]):
    """A region's table by shard whose every change (an entry set, replaced
    or removed) first calls ``changed(shard)``: the region's homes, held
    messages, moves and hosted shards, each of which a change of may end the
    shard's remote fast path (the region opens it again where it may)."""

    __slots__ = ("_changed",)

    def __init__(self, changed: Callable[[int], object]) -> None:
        super().__init__()
        self._changed = changed

    def __setitem__(self, shard: int, value: V) -> None:
        self._changed(shard)
        super().__setitem__(shard, value)

    def __delitem__(self, shard: int) -> None:
        self._changed(shard)
        super().__delitem__(shard)

    def setdefault(self, shard: int, default: V) -> V:
        self._changed(shard)
        return super().setdefault(shard, default)

    def pop(self, shard: int, *default: Any) -> Any:
        self._changed(shard)
        return super().pop(shard, *default)

    def popitem(self) -> tuple[int, V]:
        raise TypeError("a ShardTable is changed by shard")

    def clear(self) -> None:
        for shard in self:
            self._changed(shard)
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a ShardTable is changed by shard")


class RegionBase(Actor[Any]):
    """What the shard region of one entity type on one node holds.

    Args:
        types: the type's shared state on this node.
        leases: this node's leases of the type's shards.
        coordination: the store side of membership, allocation, rebalance.
        remember: where remembered entities are kept (None: nowhere).
        renew_every: seconds between lease renewals (and rebalance rounds).
        store_timeout: seconds a store call may take before it counts as
            unanswered (on the system's clock).
        hosting: False for a proxy (the type's role is not this node's): it
            never joins, never takes a shard, and forwards every message to
            the shard's holder or to a member the strategy picks.
        wire: on a node of ``actors.remote``, the region's side of the wire
            to the peer regions of other nodes (``_wire.RegionWire``); None:
            its peers are regions of its own system only.
    """

    def __init__(
        self,
        types: TypeState,
        leases: Leases,
        coordination: Coordination,
        remember: PlacementStore | None,
        renew_every: float,
        store_timeout: float,
        hosting: bool = True,
        wire: Any = None,
    ) -> None:
        self.types = types
        self.leases = leases
        self.coordination = coordination
        self.remember = remember
        self.renew_every = renew_every
        self.store_timeout = store_timeout
        self.hosting = hosting
        self.wire = wire
        #: the message kinds that come from peers on other nodes, and the
        #: kind of a peer's remote fast path (None: no peers on other nodes)
        self.wire_kinds: frozenset[type] = frozenset() if wire is None else wire.kinds
        self.fast_kind: type | None = None if wire is None else wire.fast_kind
        #: remote peer regions watched, and those that ended (their node
        #: down, or their sharding left): never sent to again
        self.watched: dict[ActorRef[Any], tuple[str, object]] = {}
        #: (remote peer -> when it ended, event loop's clock) for as long as
        #: the remote layer refuses its incarnation (``Remote.gone_ttl``)
        self.down: dict[ActorRef[Any], float] = {}
        #: the nodes whose regions ended while their membership may still
        #: name them (node -> (their address, since when)): declared down in
        #: the store for as long as the remote layer refuses them
        self.downed: dict[str, tuple[object, float]] = {}
        #: whether a peer declared this node's incarnation down (it hosts
        #: nothing again: the node rejoins as a new incarnation)
        self.downed_self = False
        # A change of the tables of a shard's homes, held messages, moves
        # and hosting ends its remote fast path (``_close_fast``); the
        # region opens it where a shard is homed on another node. A new
        # incarnation (a restart) knows no home yet: every path shut.
        close = self._close_fast
        types.remote[:] = [None] * len(types.remote)
        #: shard -> its Shard actor, for the shards hosted here
        self.shards: ShardTable[ActorRef[Any]] = ShardTable(close)
        #: shard -> messages held until the shard has a home
        self.pending: ShardTable[deque[Deliver]] = ShardTable(close)
        #: shards whose home is being found; those given to this node by a peer
        self.locating: set[int] = set()
        self.allocated: set[int] = set()
        #: shard -> the peer region its messages go to
        self.homes: ShardTable[tuple[str, ActorRef[Any]]] = ShardTable(close)
        self.handing_off: set[int] = set()
        #: shards this node handed off (a Forward for one goes on to the
        #: home it found next; bounded by the shard count)
        self.handed_to: set[int] = set()
        #: (coordinator) shards asked to move -> the node that held them, and
        #: the rebalance rounds the move has been in progress
        self.moving: dict[int, tuple[str, int]] = {}
        self.busy: set[str] = set()  # background rounds under way
        self.leaving: Leave | None = None
        #: (leaving) the peers told so, to tell them each shard's move
        self.told: list[ActorRef[Any]] = []
        #: shard -> the leaving node it was homed on: this node's new
        #: messages for it wait in ``parked`` until that node's ShardMoved,
        #: so they never overtake what it still forwards (per-sender order)
        self.moving_away: ShardTable[str] = ShardTable(close)
        self.parked: dict[int, deque[Deliver]] = {}
        #: shards handed off here (not leaving, or remembered) offered to
        #: their next home at once (TakeShard), with or without a message
        self.rehoming: set[int] = set()
        #: peers that announced their leave; (leaving) peers yet to ack ours
        self.departed: set[str] = set()
        self.unacked: set[str] = set()

    def on_stop(self) -> None:
        if self.wire is not None:  # what waits for peers goes now, or counts
            self.wire.links.flush()

    def _close_fast(self, shard: int) -> None:
        """End ``shard``'s remote fast path: its messages take the slow path
        (this region) again."""
        self.types.remote[shard] = None

    def _open_fast(self, shard: int) -> None:
        """Open ``shard``'s remote fast path when this region would send its
        messages to a peer region on another node at once: the shard homed
        there, nothing of it held, moving or hosted here."""
        wire = self.wire
        home = self.homes.get(shard)
        if (
            wire is None
            or home is None
            or not wire.is_remote(home[1])
            or shard in self.pending
            or shard in self.moving_away
            or shard in self.shards
        ):
            return
        self.types.remote[shard] = wire.home(home[1])

    def _store_call(
        self, call: Callable[[], Awaitable[T]], then: Callable[[Result[T]], object]
    ) -> None:
        timeout = self.store_timeout
        # On the system's clock (a test's manual clock: deterministic), as
        # the leases and their fence are.
        clock = self.types.system.clock
        move_on_after = anyio.move_on_after if clock is None else clock.move_on_after

        async def bounded() -> T:
            with move_on_after(timeout):
                return await call()
            raise PlacementUnavailable(f"the store did not answer within {timeout} s")

        self.context.run(bounded, then=then)

    def _round(self, name: str, call: Callable[[], Awaitable[T]], then: Any) -> None:
        """One background round of a kind at a time (renew, join, rebalance)."""
        if name in self.busy:
            return
        self.busy.add(name)

        def done(result: Result[T]) -> object:
            self.busy.discard(name)
            return then(result)

        self._store_call(call, done)

    def _peer(self, node: str) -> ActorRef[Any] | None:
        """The region of this type on ``node``: in this system, or (on a node
        of ``actors.remote``) at the incarnation its membership entry names;
        None when it is not known or has ended."""
        name = region_name(self.types.entity.type_name, node)
        try:
            peer = self.context.system.lookup("/user/" + name)
        except ActorNotFound:
            wire = self.wire
            if wire is None:
                return None
            address = self.coordination.addresses.get(node)
            remote: ActorRef[Any] | None = (
                None if address is None else wire.peer(address, name)
            )
            if remote is None:
                return None
            ended = self.down.get(remote)
            if ended is not None:
                if anyio.current_time() - ended < wire.remote.gone_ttl:
                    return None
                del self.down[remote]  # the remote layer takes it again
            if remote not in self.watched:
                self.watched[remote] = (node, address)
                self.context.watch(remote)  # NodeDown, or its end
            return remote
        self.context.watch(peer)
        return peer

    def _tell(self, peer: ActorRef[Any], message: object) -> None:
        """Tell a peer region (or a remote asker) a region message: as it is
        in this system, as its wire form to another node."""
        wire = self.wire
        if wire is not None and wire.is_remote(peer):
            wire.to_peer(peer, message)
        else:
            peer.tell(message)

    def _peer_ended(self, ref: ActorRef[Any]) -> None:
        """A remote peer region ended: never send to it again."""
        known = self.watched.pop(ref, None)
        if known is not None:
            now = anyio.current_time()
            self.down[ref] = now
            if len(self.down) > _MAX_DOWN:
                del self.down[next(iter(self.down))]
            node, address = known
            if len(self.downed) < _MAX_DOWN:
                self.downed[node] = (address, now)
            self.wire.peer_gone(ref)
