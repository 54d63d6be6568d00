"""``Leases``: the shard leases one node holds for one entity type, on a
placement store whose entries expire.

The guarantee (Akka's lease-based shard ownership, with the store's
compare-and-set as the only arbiter): a node hosts a shard's entities only
while it holds the shard's lease, an entry ``shards/<type>/<shard>`` whose
value names the node. The lease is taken with ``create`` (only if absent)
and renewed with ``update`` at the revision last written, which restarts the
entry's time to live. The holder counts its lease as valid until
``t + ttl - margin``, where ``t`` is its clock's time *before* it sent the
write that succeeded: the store stamped the write later, so the entry lives
at least until ``t + ttl`` on the store's clock. A holder that could not
renew by then stops the shard's entities at ``t + ttl - margin``, ``margin``
seconds before any other node can take the lease; another node takes it
only once the entry has expired. So two nodes never host one shard at once,
even when the holder is cut off from the store, provided the clocks of the
nodes and the store run at the same rate within ``margin`` over one ``ttl``
(the same assumption as Akka's leases and every lease on wall clocks).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Literal, NamedTuple, final

from ._errors import PlacementConflict, PlacementUnavailable
from ._store import PlacementStore

__all__ = ["LeaseEvent", "LeaseTerm", "Leases", "lease_key"]


LeaseKind = Literal["acquired", "renewed", "released", "given-up"]


class LeaseEvent(NamedTuple):
    """A change of one of this node's shard leases
    (``Sharding(on_lease=...)``): what an operator (or a test checking that
    two nodes never held a shard at once) records."""

    #: the entity type
    type_name: str
    #: the shard
    shard: int
    #: ``"acquired"``, ``"renewed"``, ``"released"`` (given back after its
    #: entities stopped) or ``"given-up"`` (not renewed in time, or lost)
    kind: LeaseKind
    #: when, on the leases' clock (seconds of ``time.monotonic()``, or of
    #: the system's clock when it has one): after an acquire or renewal
    #: succeeded, before a release was sent
    at: float
    #: until when the node counts the lease valid (acquired, renewed), else
    #: None
    valid_until: float | None


@final
class LeaseTerm:
    """How long this node's lease of one shard is valid: what an entity's
    guard reads before each message (``until > now()``: two attribute loads
    and a clock read, no lookup). One per shard for the life of its
    ``Leases``: ``until`` is the lease's ``valid_until`` while the node holds
    it, ``-inf`` while it does not; ``revision`` is the store revision last
    written (0 while not held)."""

    __slots__ = ("now", "revision", "until")

    def __init__(self, now: Callable[[], float]) -> None:
        #: the leases' clock (seconds)
        self.now = now
        self.until = -math.inf
        self.revision = 0

    def __repr__(self) -> str:
        return f"LeaseTerm(until={self.until}, revision={self.revision})"


def lease_key(type_name: str, shard: int) -> str:
    """The store key of a shard's lease."""
    return f"shards/{type_name}/{shard}"


@final
class Leases:
    """The leases ``node`` holds on the shards of ``type_name``.

    Args:
        store: the placement store (its ``ttl`` is the lease time, not None).
        type_name: the entity type.
        node: this node's identity, the leases' value (a new incarnation is
            a new identity: a restarted node does not take its old leases for
            its own).
        now: this node's clock, in seconds.
        margin: seconds before the store could expire a lease at which its
            holder gives it up (0 < margin < ttl).
        observer: called with each ``LeaseEvent`` (None: nobody).

    Raises:
        ValueError: the store's entries never expire, or ``margin`` is not
            within (0, ttl).
    """

    __slots__ = (
        "_held",
        "_key",
        "_terms",
        "margin",
        "node",
        "now",
        "observer",
        "store",
        "ttl",
        "type_name",
    )

    def __init__(
        self,
        store: PlacementStore,
        type_name: str,
        node: str,
        now: Callable[[], float],
        margin: float,
        observer: Callable[[LeaseEvent], object] | None = None,
    ) -> None:
        ttl = store.ttl
        if ttl is None:
            raise ValueError(
                "shard leases need a placement store whose entries expire "
                "(e.g. MemoryPlacementStore(ttl=10)): its ttl is None"
            )
        if not 0 < margin < ttl:
            raise ValueError(
                f"the lease margin must be within (0, {ttl}) s, not {margin}"
            )
        self.store = store
        self.type_name = type_name
        self.node = node
        self.now = now
        self.ttl = ttl
        self.margin = margin
        self._key = node.encode()
        self.observer = observer
        #: shard -> its term, for the shards held (valid until on this
        #: node's clock)
        self._held: dict[int, LeaseTerm] = {}
        #: shard -> its term, held or not (made at the first ``term``)
        self._terms: dict[int, LeaseTerm] = {}

    def term(self, shard: int) -> LeaseTerm:
        """The term of ``shard``'s lease (the same object for as long as these
        leases live: an entity's guard keeps it)."""
        term = self._terms.get(shard)
        if term is None:
            term = self._terms[shard] = LeaseTerm(self.now)
        return term

    def _hold(self, shard: int, revision: int, until: float) -> None:
        term = self.term(shard)
        term.revision = revision
        term.until = until
        self._held[shard] = term

    def _drop(self, shard: int) -> LeaseTerm | None:
        term = self._held.pop(shard, None)
        if term is not None:
            term.until = -math.inf
        return term

    def holds(self, shard: int) -> bool:
        """Whether this node holds ``shard``'s lease (and has not given it up)."""
        return shard in self._held

    def valid_until(self, shard: int) -> float | None:
        """When this node gives ``shard``'s lease up unless renewed (None: not
        held)."""
        held = self._held.get(shard)
        return None if held is None else held.until

    @property
    def held(self) -> list[int]:
        """The shards whose leases this node holds."""
        return sorted(self._held)

    async def owner(self, shard: int) -> str | None:
        """The node the store names as ``shard``'s holder, or None (no live
        lease).

        Raises:
            PlacementUnavailable: the store did not answer.
        """
        entry = await self.store.get(lease_key(self.type_name, shard))
        return None if entry is None else entry.value.decode()

    async def acquire(self, shard: int) -> bool:
        """Take ``shard``'s lease if nobody holds it (or renew it if this node
        does).

        Returns:
            True: this node holds it now; False: another node does.

        Raises:
            PlacementUnavailable: the store did not answer (whether the lease
                was taken is unknown: the next ``acquire`` finds out).
        """
        if shard in self._held:
            return True
        key = lease_key(self.type_name, shard)
        before = self.now()
        try:
            revision = await self.store.create(key, self._key)
        except PlacementConflict:
            entry = await self.store.get(key)
            if entry is None or entry.value != self._key:
                return False
            # Ours (an earlier create whose answer was lost): renew it.
            before = self.now()
            try:
                revision = await self.store.update(key, self._key, entry.revision)
            except PlacementConflict:
                return False
        until = before + self.ttl - self.margin
        self._hold(shard, revision, until)
        self._tell(shard, "acquired", until)
        return True

    def _tell(self, shard: int, kind: LeaseKind, until: float | None) -> None:
        observer = self.observer
        if observer is not None:
            observer(LeaseEvent(self.type_name, shard, kind, self.now(), until))

    async def renew(self) -> list[int]:
        """Renew every lease held.

        Returns:
            The shards lost for certain (another revision in the store: the
            lease expired and someone else took it); they are no longer held
            and their entities must stop at once. A lease the store did not
            answer for stays held until its ``valid_until``.
        """
        lost: list[int] = []
        for shard in list(self._held):
            held = self._held.get(shard)
            if held is None:
                continue  # released meanwhile
            revision = held.revision
            key = lease_key(self.type_name, shard)
            before = self.now()
            try:
                new = await self.store.update(key, self._key, revision)
            except PlacementConflict:
                if self._held.get(shard) is held and held.revision == revision:
                    self._drop(shard)
                    lost.append(shard)
                    self._tell(shard, "given-up", None)
            except PlacementUnavailable:
                continue
            else:
                if self._held.get(shard) is held and held.revision == revision:
                    until = before + self.ttl - self.margin
                    self._hold(shard, new, until)
                    self._tell(shard, "renewed", until)
                else:
                    # Released while this renewal was on its way: the release
                    # found the old revision gone; give the new one back.
                    with contextlib.suppress(PlacementConflict, PlacementUnavailable):
                        await self.store.delete(key, new)  # else it expires
        return lost

    def expiring(self) -> list[int]:
        """The shards whose leases reached their ``valid_until`` unrenewed:
        they are given up (no longer held) and their entities must stop now,
        ``margin`` seconds before anyone else may take them."""
        now = self.now()
        gone = [shard for shard, term in self._held.items() if term.until <= now]
        for shard in gone:
            self._drop(shard)
            self._tell(shard, "given-up", None)
        return gone

    def give_up(self) -> list[int]:
        """Give every lease up now, without releasing it (it expires: the
        entities may still be stopping); their entities must stop now."""
        gone = sorted(self._held)
        for shard in gone:
            self._drop(shard)
            self._tell(shard, "given-up", None)
        return gone

    def next_deadline(self) -> float | None:
        """The earliest ``valid_until`` of the leases held (None: none held)."""
        return min((term.until for term in self._held.values()), default=None)

    async def release(self, shard: int) -> bool:
        """Give ``shard``'s lease back at once (after its entities stopped), so
        the next holder need not wait for it to expire.

        Returns:
            True if the store deleted it; False if it was not held, or the
            store did not answer or held another revision (it then expires
            on its own).
        """
        held = self._drop(shard)
        if held is None:
            return False
        revision, held.revision = held.revision, 0
        self._tell(shard, "released", None)
        try:
            await self.store.delete(lease_key(self.type_name, shard), revision)
        except (PlacementConflict, PlacementUnavailable):
            return False
        return True
