"""The one place where bytes from the network become actions.

Every NATS message to this node's inbox or name subject comes here: the
frame is decoded once (``decode_frame``: a malformed, oversize,
wrong-version or unknown-kind frame is counted and dropped as a whole), then
each envelope goes to the handler of its kind (``Inbound.handlers``, one
method per kind), which decodes its body by its type tag, checks it against
what this node knows, and only then hands plain values to the concept that
acts on them: the local actors (tells, stops, lookups), the serving of
inbound asks, the outgoing asks (replies), the peers (heartbeats, acks,
credits), the death watch, and the shares (``_shares``: a node's tells go
through them, which bound what a peer has outstanding per actor and give
credits back; marks follow each frame's tells). Then the frame's number is
accounted for.

Frame numbers: a frame from a node is numbered (the last token of its reply
subject, see ``_outbound``). The receiver keeps the highest number per peer,
counts the numbers skipped as lost frames (NATS core is at most once: a
broker restart loses what was in flight), and acks each time ``ACK_BYTES``
came from that peer since its last ack, and with each heartbeat ack, so the
peer's window opens again.

Bad input is counted in ``bad_input`` per (peer, cause) and logged once per
key, and dropped; nothing from the network stops the node.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..nats import Client, Msg
from ._asks import Asks
from ._codec import Codec
from ._envelopes import (
    AckEnvelope,
    AskEnvelope,
    CreditEnvelope,
    CreditQueryEnvelope,
    CreditStateEnvelope,
    DeathEnvelope,
    FailureEnvelope,
    HeartbeatAckEnvelope,
    HeartbeatEnvelope,
    LookupEnvelope,
    ReplyEnvelope,
    StopEnvelope,
    TellEnvelope,
    UnwatchEnvelope,
    WatchEnvelope,
    decode_frame,
)
from ._errors import DecodeError, RemoteActorError
from ._local import Local
from ._node import NodeAddress
from ._observer import Observer, Receipt
from ._peers import Peers, Received
from ._serving import Serving
from ._shares import Shares
from ._subjects import frame_number
from ._watch import Watch
from ._wire import Wire

__all__ = ["ACK_BYTES", "Inbound"]

logger = logging.getLogger("actors.remote")

#: A receiver acks a peer's frames each time this many bytes came from it
#: since its last ack (and with each heartbeat ack).
ACK_BYTES = 64 * 1024

Handler = Callable[[Any, NodeAddress | None, str | None], None]


class Inbound:
    """The inbound side of one node (see the module doc).

    Args:
        address: this node's incarnation (numbered frames to it have reply
            subjects ending in ``.nr.<node>.<incarnation>.<number>``).
        codec: the node's codec (bodies are decoded here).
        wire: the node's encoder (heartbeat acks, lookup replies).
        peers, local, serving, asks, watch, shares: what acts on the
            envelopes (tells from nodes go through ``shares``).
    Frames are accepted once ``attach`` gave the client (the largest frame
    accepted is its server's ``max_payload``, read at each frame).
    """

    def __init__(
        self,
        address: NodeAddress,
        codec: Codec,
        wire: Wire,
        peers: Peers,
        local: Local,
        serving: Serving,
        asks: Asks,
        watch: Watch,
        shares: Shares,
    ) -> None:
        self._codec = codec
        self._wire = wire
        self._peers = peers
        self._local = local
        self._serving = serving
        self._asks = asks
        self._watch = watch
        self._shares = shares
        self._client: Client | None = None
        #: How the reply subject of a numbered frame to this node ends,
        #: before the number.
        self._numbered = f".nr.{address.node}.{address.incarnation}"
        #: Frames are handled (set by attach, cleared when the node begins
        #: to stop).
        self.accepting = False
        #: The hook points of a traced node (None: telemetry is off).
        self.observer: Observer | None = None
        #: The trace context of the frame being handled (a traced node).
        self._parent: object = None
        #: Bad input from the network, counted per (peer, cause).
        self.bad_input: dict[tuple[str, str], int] = {}
        #: The handler of each envelope kind.
        self.handlers: dict[type, Handler] = {
            TellEnvelope: self._tell,
            AskEnvelope: self._ask,
            ReplyEnvelope: self._reply,
            FailureEnvelope: self._reply,
            HeartbeatEnvelope: self._heartbeat,
            HeartbeatAckEnvelope: self._heartbeat_ack,
            AckEnvelope: self._ack,
            LookupEnvelope: self._lookup,
            StopEnvelope: self._stop,
            WatchEnvelope: self._watched,
            UnwatchEnvelope: self._unwatched,
            DeathEnvelope: self._death,
            CreditEnvelope: self._credit,
            CreditQueryEnvelope: self._credit_query,
            CreditStateEnvelope: self._credit_state,
        }

    def attach(self, client: Client) -> None:
        """The node is connected through ``client``: accept frames."""
        self._client = client
        self.accepting = True

    def bad(self, peer: object, cause: str, error: BaseException) -> None:
        """Count bad input from ``peer`` (logged at the first of each key)."""
        key = (str(peer), cause)
        count = self.bad_input.get(key, 0)
        self.bad_input[key] = count + 1
        if not count:
            logger.warning(
                "bad input from %s (%s), dropped: %s (logged once per peer and cause)",
                peer,
                cause,
                error,
            )

    # -- frames ------------------------------------------------------------------

    def on_frame(self, msg: Msg) -> None:
        """The NATS client's callback for the node's subjects."""
        client = self._client
        if not self.accepting or client is None:
            return
        try:
            frame = decode_frame(msg.data, client.max_payload)
        except DecodeError as exc:
            self.bad(msg.reply or msg.subject, "malformed frame", exc)
            return
        sender = frame.sender
        # A program that is not a node gets its answers on the reply subject.
        reply_to = msg.reply if sender is None else None
        # A numbered frame (see Outbound): its reply subject ends with
        # ".nr.<this node>.<incarnation>.<number>"; unnumbered ones (out of
        # band: heartbeats, acks) have none. Read before the envelopes are
        # handled, accounted for after (written out: a call saved per frame).
        seq = None
        reply = msg.reply
        if sender is not None and reply is not None:
            dot = reply.rfind(".")
            if reply.endswith(self._numbered, 0, dot):
                seq = frame_number(reply[dot + 1 :])
        observer = self.observer
        if observer is not None:
            self._parent = observer.frame(msg.headers)
        handlers = self.handlers
        try:
            for envelope in frame.envelopes:
                try:
                    handlers[type(envelope)](envelope, sender, reply_to)
                except KeyError:
                    # A kind that only answers a request (a lookup reply).
                    self.bad(
                        sender, f"unexpected {type(envelope).__name__}", ValueError()
                    )
                except Exception as exc:
                    self.bad(sender, f"{type(envelope).__name__} not handled", exc)
        finally:
            self._parent = None
            if self._shares.touched:
                self._shares.frame_done()
        if seq is not None:
            assert sender is not None
            self._received(sender, seq, len(msg.data), len(frame.envelopes))

    def _received(self, sender: NodeAddress, seq: int, size: int, count: int) -> None:
        peers = self._peers
        peer = peers.peers.get(sender) or peers.peer(sender)
        if peer is None:
            return  # gone
        received = peer.received
        if received is None:
            received = peer.received = Received()
        last = received.seq
        if seq <= last:
            return
        if seq > last + 1 and last:
            # Frames in between never came (at most once): counted.
            lost = self._peers.lost_frames
            lost[sender] = lost.get(sender, 0) + seq - last - 1
        received.seq = seq
        received.unacked += size
        received.frames += 1
        received.bytes += size
        received.envelopes += count
        if received.unacked >= ACK_BYTES:
            self._peers.ack(sender, received)

    # -- the envelope kinds ------------------------------------------------------

    def _tell(
        self, envelope: TellEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        observer = self.observer
        if observer is None:
            self._deliver(envelope, sender)
            return
        receipt = observer.receive(self._parent, "tell", envelope.path, sender)
        try:
            self._deliver(envelope, sender)
        except BaseException as exc:
            receipt.end(exc)
            raise
        else:
            receipt.end(None)
        finally:
            receipt.detach()

    def _deliver(self, envelope: TellEnvelope, sender: NodeAddress | None) -> None:
        try:
            message = self._codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            self.bad(sender, "undecodable message", exc)
            return
        self._shares.deliver(envelope.path, message, sender)

    def _ask(
        self, envelope: AskEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        observer = self.observer
        if observer is None:
            self._serve(envelope, sender, reply_to, None)
            return
        receipt = observer.receive(self._parent, "ask", envelope.path, sender)
        try:
            # The receipt ends when the answer is sent.
            self._serve(envelope, sender, reply_to, receipt)
        except BaseException as exc:
            receipt.end(exc)
            raise
        finally:
            receipt.detach()

    def _serve(
        self,
        envelope: AskEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
        receipt: Receipt | None,
    ) -> None:
        ask_id = envelope.ask_id
        try:
            message = self._codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            self.bad(sender, "undecodable message", exc)
            self._serving.fail(sender, reply_to, ask_id, exc, receipt)
            return
        self._serving.serve(envelope.path, ask_id, message, sender, reply_to, receipt)

    def _reply(
        self,
        envelope: ReplyEnvelope | FailureEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
    ) -> None:
        asks = self._asks
        pending = asks.awaiting(envelope.ask_id)
        if pending is None:
            return  # late: counted
        if sender != pending.peer:
            self.bad(sender, "answer from another node", ValueError(envelope.ask_id))
            return
        try:
            value = self._codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            asks.failed(pending, exc)
            return
        if type(envelope) is ReplyEnvelope:
            asks.replied(pending, value)
        elif isinstance(value, BaseException):
            asks.failed(pending, value)
        else:
            asks.failed(
                pending, RemoteActorError("?", f"a failure carrying {value!r:.200}")
            )

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
            if outbound is not None:
                outbound.acked(envelope.seq)

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

    def _lookup(
        self, envelope: LookupEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        found = self._local.find(envelope.path) is not None
        self._serving.answer(
            sender,
            reply_to,
            envelope.ask_id,
            self._wire.lookup_reply(envelope.ask_id, found),
        )

    def _stop(
        self, envelope: StopEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        ref = self._local.find(envelope.path)
        if ref is not None:
            ref.stop()

    def _watched(
        self, envelope: WatchEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        if sender is not None:
            self._watch.watched_by(sender, envelope.path)

    def _unwatched(
        self,
        envelope: UnwatchEnvelope,
        sender: NodeAddress | None,
        reply_to: str | None,
    ) -> None:
        if sender is not None:
            self._watch.unwatched_by(sender, envelope.path)

    def _death(
        self, envelope: DeathEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        if sender is None:
            return
        watch = self._watch
        watchers = watch.dying(sender, envelope.path)
        if watchers is None:
            return  # nobody here watched it
        reason: object
        try:
            reason = self._codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            self.bad(sender, "undecodable death reason", exc)
            reason = exc
        watch.died(sender, envelope.path, watchers, reason)
