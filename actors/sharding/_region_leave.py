"""``Departure``: a shard region's part in a graceful leave (Akka's
``ShardRegion`` hand-off on leaving, with its order kept across nodes).

A leaving region leaves the membership, tells its peers (``Leaving``: they
hold back their new messages for its shards, answer ``LeavingAck`` once
whatever they sent before is in its mailbox), hands its shards off, sends
what waited for each to the shard's next home and then the shard's
``ShardMoved`` to the peers, which send on what they held back. A peer whose
locate finds a node that announced its leave parks the shard's messages
until that node's ``ShardMoved`` (or its end): they never overtake what the
leaving node still forwards (per-sender order).
"""

from __future__ import annotations

from .. import Result
from ._downing import Downing
from ._region_messages import Leave, Leaving, ShardMoved
from ._state import Deliver

__all__ = ["Departure"]


class Departure(Downing):
    """The leaving part of ``ShardRegion`` (see the module docstring)."""

    def hand_off(self, shard: int) -> None:  # pragma: no cover - ShardRegion's
        raise NotImplementedError

    def _locate(self, shard: int) -> None:  # pragma: no cover - ShardRegion's
        raise NotImplementedError

    def _route(self, message: Deliver) -> None:  # pragma: no cover - ShardRegion's
        raise NotImplementedError

    def _moved(self, shard: int) -> None:
        for peer in self.told:
            self._tell(peer, ShardMoved(shard))

    def _peer_leaving(self, node: str) -> None:
        self.departed.add(node)
        for shard, (name, _) in list(self.homes.items()):
            if name == node:
                del self.homes[shard]
                self.moving_away[shard] = node

    def _unpark(self, shard: int) -> None:
        self.moving_away.pop(shard, None)
        for message in self.parked.pop(shard, ()):
            self._route(message)

    def _drop_pending(self, shard: int, reason: str) -> None:
        types = self.types
        for message in self.pending.pop(shard, ()):
            types.delivered(shard)
            types.drop(message.message, reason)

    def _leave(self, message: Leave) -> None:
        """Leave the membership, tell the peers (they hold back their new
        messages for this node's shards), then hand the shards off; each
        handed-off shard's messages go to its next home, then its
        ``ShardMoved`` to the peers."""
        if self.leaving is not None:
            return
        self.leaving = message
        if self.downed_self:
            # Declared down: hosts nothing, peers refuse it: a dead letter.
            for shard in list(self.pending):
                self._drop_pending(shard, "this node was declared down")
            self._leave_if_done()
            return
        coordination = self.coordination
        node = self.leases.node

        async def announce() -> list[str]:
            await coordination.leave()
            return [peer for peer in await coordination.members() if peer != node]

        def then(result: Result[list[str]]) -> object:
            self.busy.discard("leave")
            for peer_node in result.value if result.ok else []:
                peer = self._peer(peer_node)
                if peer is not None:
                    self._tell(peer, Leaving(node, self.context.self_ref))
                    self.told.append(peer)
                    self.unacked.add(peer_node)
            for shard in list(self.shards):
                self.hand_off(shard)
            for shard in list(self.pending):
                if shard not in self.handing_off:
                    self._locate(shard)
            self._leave_if_done()
            return result

        self.busy.add("leave")
        self._store_call(announce, then)

    def _leave_if_done(self) -> None:
        leaving = self.leaving
        if leaving is None or "leave" in self.busy or self.unacked:
            return  # still announcing, or peers may still send
        if self.shards or self.handing_off:
            return
        if any(self.pending.values()) or self.locating:
            return
        self.context.timers.cancel_all()
        leaving.done.set()
