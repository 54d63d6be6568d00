"""The shard coordinator's decisions, read from the placement store (Akka's
``ShardCoordinator``, without its state: everything it needs is in the
store, so any region can take the role over, by holding the type's
coordinator lease, ``coordinator/<type>``).

* Members: every region of a type keeps an entry ``regions/<type>/<node>``
  (expiring, renewed with its leases); a node whose entry is gone takes no
  new shard. On a node of ``actors.remote`` the entry's value also names
  the node's incarnation, where its peers on other nodes reach its region:
  ``{"node": ..., "address": [remote node, incarnation]}``.
* Downing: a node whose failure detector declared a peer's node down (it
  can never talk to that incarnation again) writes ``down/<type>/<node>``
  naming that incarnation, and renews it while its remote layer refuses
  the incarnation (``Remote.gone_ttl``) unless the peer's membership names
  another one; a node that finds a mark of its own incarnation hosts
  nothing more: it stops renewing its leases (they expire; nobody takes its
  shards earlier) and leaves the membership (Akka's downing: a downed
  member must not go on; it comes back as a new incarnation, which a mark
  of the old one does not stop).
* Allocation: a shard without a lease goes where the strategy says among the
  members (a region that receives a shard's message from a peer takes the
  shard itself: it was allocated).
* Rebalance: the coordinator asks the strategy which shards to move and asks
  their holders to hand them off; a moved shard is allocated again at its
  next message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, final

from ._allocation import AllocationStrategy
from ._errors import PlacementConflict
from ._lease import lease_key
from ._store import PlacementStore

__all__ = ["Coordination", "down_key", "region_key", "version_key"]


def down_key(type_name: str, node: str) -> str:
    """The store key marking ``node``'s region of a type as declared down by
    a peer (an expiring entry the peers renew while the node is a member)."""
    return f"down/{type_name}/{node}"


def region_key(type_name: str, node: str) -> str:
    """The store key of a node's region of a type (its membership)."""
    return f"regions/{type_name}/{node}"


@final
class Coordination:
    """The store reads and writes of one region's coordinator duties and
    membership (every method may raise ``PlacementUnavailable``)."""

    __slots__ = (
        "_coordinator",
        "_member",
        "_recent",
        "_value",
        "addresses",
        "node",
        "own_address",
        "store",
        "strategy",
        "type_name",
        "version",
        "versions",
    )

    def __init__(
        self,
        store: PlacementStore,
        strategy: AllocationStrategy,
        type_name: str,
        node: str,
        address: list[str] | None = None,
        version: str = "0",
    ) -> None:
        self.store = store
        self.strategy = strategy
        self.type_name = type_name
        self.node = node
        self._member: int | None = None
        self._coordinator: int | None = None
        #: where this node's region is reached ([remote node, incarnation]),
        #: None when its system is not a node
        self.own_address = address
        #: this node's membership entry (with its incarnation on a node)
        self.version = version
        self._value = json.dumps(
            {"node": node, "address": address, "version": version}
        ).encode()
        #: member -> the ``address`` field of its entry as last read (not
        #: validated here: the wire does), for the members of the last read
        self.addresses: dict[str, Any] = {}
        #: member -> its application version, as last read
        self.versions: dict[str, str] = {}
        #: shard -> the member this node allocated it to, until a lease
        #: names it (bounded by the shard count)
        self._recent: dict[int, str] = {}

    async def _hold(
        self, key: str, revision: int | None, value: bytes | None = None
    ) -> int | None:
        """Create or renew an entry naming this node (``value``, by default
        its name); its new revision, or None when another node holds it."""
        if value is None:
            value = self.node.encode()
        if revision is not None:
            try:
                return await self.store.update(key, value, revision)
            except PlacementConflict:
                pass
        try:
            return await self.store.create(key, value)
        except PlacementConflict:
            entry = await self.store.get(key)
            if entry is None or entry.value != value:
                return None
            return await self.store.update(key, value, entry.revision)

    async def join(self) -> bool:
        """Write (or renew) this node's membership entry.

        Returns:
            True when a peer declared this node's incarnation down
            (``down_key``): it must host nothing more (its membership entry
            is not written). A mark of an earlier incarnation of the node is
            not this one's: it expires once its peers see this one.
        """
        mark = await self.store.get(down_key(self.type_name, self.node))
        if mark is not None and _marks(mark.value, self.own_address):
            return True
        self._member = await self._hold(
            region_key(self.type_name, self.node), self._member, self._value
        )
        return False

    async def declare_down(self, node: str, address: object) -> bool:
        """Write (or renew) the mark that ``node`` (whose region at the node
        incarnation ``address`` this node's failure detector declared down)
        must host nothing more (the caller renews it for as long as its
        remote layer refuses that incarnation).

        Returns:
            False once ``node``'s membership entry names another incarnation
            (it was restarted: the mark is left to expire).
        """
        entry = await self.store.get(region_key(self.type_name, node))
        if entry is not None and _fields(entry.value).get("address") != address:
            return False
        key = down_key(self.type_name, node)
        value = json.dumps({"by": self.node, "address": address}).encode()
        mark = await self.store.get(key)
        if mark is None:
            await self.store.create(key, value)
        else:
            await self.store.update(key, value, mark.revision)
        return True

    async def leave(self) -> None:
        """Delete this node's membership entry (it takes no new shard)."""
        self._member = None
        await self.store.delete(region_key(self.type_name, self.node))

    async def members(self) -> list[str]:
        """The nodes with a live region of the type, by name."""
        prefix = region_key(self.type_name, "")
        found = await self.store.list(prefix)
        addresses: dict[str, Any] = {}
        versions: dict[str, str] = {}
        for entry in found:
            node = entry.key[len(prefix) :]
            fields = _fields(entry.value)
            address = fields.get("address")
            if address is not None:
                addresses[node] = address
            version = fields.get("version")
            if type(version) is str:
                versions[node] = version
        self.addresses, self.versions = addresses, versions
        return [entry.key[len(prefix) :] for entry in found]

    async def address(self, node: str) -> Any:
        """The ``address`` field of ``node``'s membership entry (None: no
        entry, or none in it), read from the store and kept in
        ``addresses``."""
        entry = await self.store.get(region_key(self.type_name, node))
        address = None if entry is None else _fields(entry.value).get("address")
        if address is not None:
            self.addresses[node] = address
        return address

    async def layout(self) -> dict[str, set[int]]:
        """Every member with the shards whose leases name it."""
        current: dict[str, set[int]] = {node: set() for node in await self.members()}
        prefix = lease_key(self.type_name, 0)[:-1]
        for entry in await self.store.list(prefix):
            owner = current.get(entry.value.decode())
            if owner is not None:
                owner.add(int(entry.key[len(prefix) :]))
        return current

    async def home(self, shard: int, *, allocated: bool, leaving: bool) -> str | None:
        """Where ``shard``'s messages go: the node holding its lease, or, when
        none does, this node if the shard was ``allocated`` to it, else the
        strategy's choice among the members (this node left out when it is
        ``leaving``). None: no member may take it now."""
        entry = await self.store.get(lease_key(self.type_name, shard))
        if entry is not None:
            return entry.value.decode()
        if allocated and not leaving:
            return self.node
        current = await self.layout()
        if leaving:
            current.pop(self.node, None)
        else:  # a member, even before its own entry is written
            current.setdefault(self.node, set())
        if not current:
            return None
        # The shards this node allocated that no lease names yet count where
        # they went: allocations decided at once (a burst of first messages)
        # spread instead of all going to the member that had the fewest.
        leased = set().union(*current.values())
        recent = self._recent
        for other, node in list(recent.items()):
            if other in leased or node not in current:
                del recent[other]
            elif other != shard:
                current[node].add(other)
        choice = self.strategy.allocate(shard, self._newest(current))
        recent[shard] = choice
        return choice

    def _newest(self, current: dict[str, set[int]]) -> dict[str, set[int]]:
        """The members of ``current`` that run the highest application
        version (a rolling upgrade puts new shards on new nodes, as Akka's
        allocation by ``app-version``); members of unknown version count as
        the lowest."""
        versions = {**self.versions, self.node: self.version}
        keys = {node: version_key(versions.get(node)) for node in current}
        top = max(keys.values())
        return {node: shards for node, shards in current.items() if keys[node] == top}

    async def rebalance(
        self, moving: Mapping[int, str]
    ) -> tuple[dict[int, str], dict[int, str]]:
        """As the coordinator (holding ``coordinator/<type>``, taken or renewed
        here): the shards to move now, with the node holding each, given the
        shards asked to move before (``moving``: shard -> the node that held
        it; in progress while that node still holds it). Empty when another
        node is the coordinator, or a move is still in progress.

        Returns:
            (the shards to move -> their holders, the moves still in
            progress -> their old holders).
        """
        key = f"coordinator/{self.type_name}"
        self._coordinator = await self._hold(key, self._coordinator)
        if self._coordinator is None:
            return {}, {}
        # Among the newest members only: a shard on an older node stays there
        # until that node leaves (it would come back to the newest anyway).
        current = self._newest(await self.layout())
        still = {s: old for s, old in moving.items() if s in current.get(old, ())}
        moved = self.strategy.rebalance(current, still)
        plan = {
            shard: node
            for node, shards in current.items()
            for shard in shards
            if shard in moved
        }
        return plan, still


def _fields(value: bytes) -> dict[str, Any]:
    """The fields of a membership entry's value (empty for a plain node
    name, or for a value that is not ours)."""
    if not value.startswith(b"{"):
        return {}
    try:
        fields = json.loads(value)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


def _marks(value: bytes, address: object) -> bool:
    """Whether a down mark's value names the incarnation at ``address`` (a
    mark that names none, or that is not ours, marks whatever incarnation
    reads it: the safe side)."""
    marked = _fields(value).get("address")
    return marked is None or marked == address


def version_key(version: str | None) -> tuple[tuple[int, int | str], ...]:
    """An application version as a sortable key: its ``.``/``-``/``+``
    separated parts, numbers by value (``"1.10"`` > ``"1.9"``) and before
    words at the same place; None (unknown) below every version."""
    if version is None:
        return ((-1, 0),)
    parts = re.split(r"[.+-]", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)
