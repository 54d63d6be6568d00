"""``Downing``: a shard region's part in downing (Akka's: a member the others
cannot reach must not go on), on the placement store.

A region whose remote layer declared a peer's node down (its failure
detector; the remote layer then refuses that incarnation for
``Remote.gone_ttl`` seconds) writes ``down/<type>/<node>`` and renews it
meanwhile, so the peer's shards do not stay with a node nobody can send to.
A region that finds a mark of its own incarnation hosts nothing more: its
entities stop, its leases are given up (they expire: nobody takes its
shards earlier), its membership goes, and its node's ``Cluster`` reports
it (``MemberDown`` of itself, ``wait_downed``). As Akka's downed member, this
incarnation never hosts again (its peers refuse it for ``gone_ttl``): the
node comes back as a new incarnation (``python -m actors.node`` restarts its
system at once), whose region a mark of the old one does not stop.
"""

from __future__ import annotations

import logging

import anyio

from .. import Result
from ._region_base import RegionBase
from ._region_messages import Downed

__all__ = ["Downing"]

logger = logging.getLogger("actors.sharding")


class Downing(RegionBase):
    """The downing part of ``ShardRegion`` (see the module docstring)."""

    def _fence(self, shard: int) -> None:  # pragma: no cover - ShardRegion's
        raise NotImplementedError

    def _mark_downed(self) -> None:
        """Renew the marks of the peers declared down, while the remote layer
        refuses them (at every tick)."""
        gone_ttl = None if self.wire is None else self.wire.remote.gone_ttl
        now = anyio.current_time()
        for node, (address, since) in list(self.downed.items()):
            if gone_ttl is not None and now - since >= gone_ttl:
                del self.downed[node]  # reachable again: its mark expires
            else:
                self._declare_down(node, address)

    def _joined(self, result: Result[bool]) -> object:
        if result.ok:
            return Downed(result.value)
        return result

    def _declare_down(self, node: str, address: object) -> None:
        coordination = self.coordination
        downed = self.downed

        def then(result: Result[bool]) -> object:
            if result.ok and not result.value:
                downed.pop(node, None)  # gone from the membership: done
            return result

        self._round(
            f"down-{node}", lambda: coordination.declare_down(node, address), then
        )

    def _downed(self) -> None:
        """A peer declared this node down: host nothing more (entities stop
        now, leases expire, the membership entry goes), route as a proxy."""
        if not self.hosting:
            return
        self.downed_self = True
        logger.error(
            "node %s was declared down by a peer (its failure detector): this "
            "incarnation hosts no shard of %r again (the peers' remote layers "
            "refuse it); the node must rejoin as a new incarnation (python -m "
            "actors.node restarts its system; else see Cluster.wait_downed)",
            self.leases.node,
            self.types.entity.type_name,
        )
        self.hosting = False
        on_downed = self.types.on_downed
        if on_downed is not None:
            on_downed()
        for shard in self.leases.give_up():
            self._fence(shard)
        for shard in list(self.shards):
            self._fence(shard)
        self._store_call(self.coordination.leave, lambda r: r)

    def _on_downed(self, message: Downed) -> None:
        if message.down:
            self._downed()
