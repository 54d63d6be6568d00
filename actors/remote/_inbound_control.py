"""The control envelopes of the inbound side: heartbeats, acks, credits
and shares, the bookkeeping between two nodes that no actor sees (a base
class of [``Inbound``][actors.remote._inbound.Inbound], one concept of it,
as Akka Artery's control lane). Each handler gets an envelope from a frame
``Inbound.on_frame`` has checked (authenticated, numbered, not replayed),
checks its values against what this node knows (an ack only of frames
sent, a share within bounds) and hands them to the peer table or the
shares.
"""

from __future__ import annotations

from ._bad_input import BadInput
from ._credits import MAX_SHARE
from ._envelopes import (
    AckEnvelope,
    CreditEnvelope,
    CreditQueryEnvelope,
    CreditStateEnvelope,
    HeartbeatAckEnvelope,
    HeartbeatEnvelope,
    ShareEnvelope,
)
from ._node import NodeAddress
from ._peers import Peers
from ._shares import Shares
from ._wire import Wire

__all__ = ["InboundControl"]


class InboundControl:
    """The handlers of the control envelope kinds (see the module doc); the
    state is ``Inbound``'s."""

    #: Set by ``Inbound.__init__`` (see there).
    _peers: Peers
    _shares: Shares
    _wire: Wire
    bad: BadInput

    def _heartbeat(
        self,
        envelope: HeartbeatEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
    ) -> None:
        if sender is None:
            return
        peers = self._peers
        outbound = peers.outbound(sender)
        if outbound is None:
            return
        outbound.put_urgent(self._wire.heartbeat_ack(envelope.seq))
        # With an ack of the last frame number, always: an ack lost on the
        # way must not leave the peer's window full.
        peer = peers.peers.get(sender)
        received = None if peer is None else peer.received
        if received is not None and received.seq:
            peers.ack(sender, received)

    def _heartbeat_ack(
        self,
        envelope: HeartbeatAckEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
    ) -> None:
        if sender is not None:
            self._peers.alive(sender)

    def _ack(
        self, envelope: AckEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        if sender is not None:
            outbound = self._peers.outbounds.get(sender)
            if outbound is not None and not outbound.acked(envelope.seq):
                self.bad(sender, "ack beyond the frames sent", envelope.seq)

    def _credit(
        self, envelope: CreditEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        if sender is not None:
            credits = self._peers.credits.get(sender)
            if credits is not None:
                credits.granted(envelope.path, envelope.count)

    def _credit_query(
        self,
        envelope: CreditQueryEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
    ) -> None:
        if sender is None:
            return
        held = self._shares.held_for(sender, envelope.path)
        outbound = self._peers.outbound(sender)
        if outbound is not None:
            outbound.put_urgent(
                self._wire.credit_state(envelope.path, envelope.query, held)
            )

    def _credit_state(
        self,
        envelope: CreditStateEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
    ) -> None:
        if sender is not None:
            credits = self._peers.credits.get(sender)
            if credits is not None:
                credits.state(envelope.path, envelope.query, envelope.held)

    def _share(
        self, envelope: ShareEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        if sender is None:
            return
        share = envelope.share
        if not 1 <= share <= MAX_SHARE:
            # Out of bounds: it would let the peer wedge us (0) or make
            # this node's senders run ahead of any receiver's memory bound.
            self.bad(sender, "bad share", share)
            return
        self._peers.shared(sender, share, envelope.ask)
