"""Pruning the peer table: the gone and retired incarnations whose time is
over are forgotten, quiet peers are retired, and a full table makes room
(a base class of [``Peers``][actors.remote._peers.Peers], one concept of
it: how the table stays within ``max_peers`` without letting a flood of
made-up incarnations push out an established peer).

A peer quiet for ``idle_timeout`` seconds (no frame either way, nothing
buffered or in flight, no credit outstanding, not monitored) is *retired*:
its buffer and writer go, and its frame numbers are kept for ``gone_ttl``
seconds, so a buffer made for it again goes on numbering from there and a
frame replayed from it is still refused. A full table retires the idle peer
with the least traffic, or declares a suspect down.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import anyio

from ._credits import Credits
from ._heartbeat import HeartbeatMonitor
from ._node import NodeAddress
from ._outbound import Outbound
from ._peer import Peer, Retired

__all__ = ["PeerPruning"]


class PeerPruning:
    """Pruning rounds and room in a full table (see the module doc); the
    table's state is ``Peers``'."""

    #: Set by ``Peers.__init__`` (see there).
    peers: dict[NodeAddress, Peer]
    outbounds: dict[NodeAddress, Outbound]
    credits: dict[NodeAddress, Credits]
    gone: dict[NodeAddress, float]
    retired: OrderedDict[NodeAddress, Retired]
    max_peers: int
    evict: Callable[[NodeAddress], None] | None
    _monitor: HeartbeatMonitor
    _gone_ttl: float
    _idle_timeout: float


    def prune(self, now: float) -> None:
        """One pruning round at ``now`` (seconds, ``anyio.current_time``):
        forget the gone and retired incarnations whose time is over, and
        retire the peers quiet for ``idle_timeout``."""
        gone = self.gone
        for address in [a for a, until in gone.items() if until <= now]:
            del gone[address]
        retired = self.retired
        while retired and next(iter(retired.values()))[1] <= now:
            retired.popitem(last=False)
        for address, peer in list(self.peers.items()):
            marks = peer.activity()
            if marks != peer.marks:
                peer.marks = marks
                peer.quiet = now
                continue
            quiet = peer.quiet
            if (
                quiet is not None
                and now - quiet >= self._idle_timeout
                and self._retirable(address, peer)
            ):
                self._retire(address, peer, now)

    def _retirable(self, address: NodeAddress, peer: Peer) -> bool:
        outbound = peer.outbound
        credits = self.credits.get(address)
        return not (
            peer.suspect
            or self._monitor.is_monitoring(address)
            or (outbound is not None and not outbound.idle)
            # Credits outstanding: the share would be counted afresh.
            or (credits is not None and not credits.idle)
        )

    def _retire(self, address: NodeAddress, peer: Peer, now: float) -> None:
        """Retire ``peer``: its buffer closes (its writer ends), its frame
        numbers are kept. A full retired table drops the entry with the
        least traffic (not the oldest: a flood of made-up peers cannot push
        out an established one's numbers)."""
        del self.peers[address]
        outbound = peer.outbound
        if outbound is not None:
            self.outbounds.pop(address, None)
            outbound.close()
        self.credits.pop(address, None)
        retired = self.retired
        retired[address] = (peer.activity(), now + self._gone_ttl, peer.traffic())
        if len(retired) > self.max_peers:
            del retired[min(retired, key=lambda a: retired[a][2])]

    def _make_room(self, address: NodeAddress, now: float) -> bool:
        """Make room in the full table for ``address`` (O(``max_peers``)):
        retire the idle peer with the least traffic among those quiet since
        the last pruning round or with less traffic than ``address`` had
        before it was retired; else declare a suspect down. An established
        peer is never pushed out by newcomers with less traffic (a flood of
        made-up incarnations churns among itself). Whether there is room."""
        known = self.retired.get(address)
        score = 0 if known is None else known[2]
        weakest = None
        least = 0
        for other, peer in self.peers.items():
            traffic = peer.traffic()
            if (
                (weakest is None or traffic < least)
                and (traffic < score or peer.activity() == peer.marks)
                and self._retirable(other, peer)
            ):
                weakest, least = other, traffic
        if weakest is not None:
            self._retire(weakest, self.peers[weakest], now)
            return True
        # Nobody listened on a suspect: it makes room, declared down.
        suspect = next((a for a, p in self.peers.items() if p.suspect), None)
        if suspect is None or self.evict is None:
            return False
        self.evict(suspect)
        return True

    async def run_pruning(self, interval: float) -> None:
        """A pruning round each ``interval`` seconds, until cancelled."""
        while True:
            await anyio.sleep(interval)
            self.prune(anyio.current_time())
