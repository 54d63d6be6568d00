"""The one place where bytes from the network become actions: the trust
boundary.

Every NATS message to this node's inbox or name subject comes here, and
goes through these checks in this order before anything acts on it (each
failure is counted under a cause from a fixed set, see ``_bad_input``, and
the frame dropped whole, leaving no state behind):

1. its size (at most the server's ``max_payload``);
2. its frame number, read from the reply subject (no byte of the payload
   read yet): a frame from a node carries one, on the numbered lane
   (``.nr.<this node>.<incarnation>.<n>``) or the out-of-band lane
   (``...o<n>``, heartbeats and acks);
3. with a cluster secret, its tag (``_secret``): an HMAC-SHA256 over the
   subject (this node), the numbered reply (sender, receiver, number) and
   the frame (version, sender, envelopes);
4. its version (the first bytes): another one is dropped;
5. its shape (``decode_frame``: malformed, truncated or unknown-kind
   frames are dropped);
6. its sender: a node's frame needs a number, its sender must not be gone,
   and the peer table must have room for it; with a secret, a program that
   is not a node may only look actors up;
7. its number: strictly above the last one accepted from that sender
   incarnation on that lane, else it is a replay (or a duplicate) and is
   dropped. The number is taken before any envelope is handled.

Then each envelope goes to the handler of its kind (``Inbound.handlers``,
one method per kind), which decodes its body by its type tag, checks it
against what this node knows (a reply only from the node its ask went to,
an ack only of frames sent, no stop of the runtime's own actors), and only
then hands plain values to the concept that acts on them: the local actors
(stops, lookups), the shares (``_shares``: a node's tells go through them,
which bound what a peer has outstanding per actor and give credits back;
marks follow each frame's tells), the serving of inbound asks, the outgoing
asks (replies), the peers (heartbeats, acks, credits, shares: the control
envelopes, whose handlers are ``_inbound_control``'s) and the death watch.

Frame numbers also drive acks and loss: the receiver counts the numbers
skipped as lost frames (NATS core is at most once: a broker restart loses
what was in flight), and acks each time ``ACK_BYTES`` came from that peer
since its last ack, and with each heartbeat ack, so the peer's window opens
again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .. import ActorStopped
from ..nats import Client, Msg
from ._asks import Asks
from ._bad_input import BadInput
from ._codec import Codec
from ._envelopes import (
    VERSION,
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
    ShareEnvelope,
    StopEnvelope,
    TellEnvelope,
    UnwatchEnvelope,
    WatchEnvelope,
    decode_frame,
)
from ._errors import DecodeError, RemoteActorError
from ._inbound_control import InboundControl
from ._local import Local
from ._node import NodeAddress
from ._observer import Observer, Receipt
from ._peers import Peers, Received
from ._secret import Secret
from ._serving import Serving
from ._shares import Shares
from ._subjects import frame_number
from ._watch import MAX_REMOTE_WATCHES, Watch
from ._wire import Wire

__all__ = ["ACK_BYTES", "Inbound"]

logger = logging.getLogger("actors.remote")

#: The first two bytes of a frame of this version (an array of three, then
#: the version as a positive fixint).
_HEAD = bytes((0x93, VERSION))

#: A receiver acks a peer's frames each time this many bytes came from it
#: since its last ack (and with each heartbeat ack).
ACK_BYTES = 64 * 1024

Handler = Callable[[Any, NodeAddress | None, str | None], None]


class Inbound(InboundControl):
    """The inbound side of one node (see the module doc).

    Args:
        address: this node's incarnation (numbered frames to it have reply
            subjects ending in ``.nr.<node>.<incarnation>.<number>``).
        codec: the node's codec (bodies are decoded here).
        wire: the node's encoder (heartbeat acks, lookup replies).
        peers, local, serving, asks, watch, shares: what acts on the
            envelopes (tells from nodes go through ``shares``).
        secret: the cluster secret (None: the trusted-broker mode).
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
        secret: Secret | None = None,
    ) -> None:
        self._codec = codec
        self._secret = secret
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
        #: Bad input from the network: ``bad(peer, cause, error)`` counts
        #: it per cause (``bad.counts``) and logs at a bounded rate.
        self.bad = BadInput()
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
            ShareEnvelope: self._share,
        }

    def attach(self, client: Client) -> None:
        """The node is connected through ``client``: accept frames."""
        self._client = client
        self.accepting = True

    def leaving(self) -> None:
        """The node's actors have stopped and it leaves: frames that still
        come (sent before their senders knew) are checked as ever, but their
        tells are dead letters (reason "node stopping") and their asks fail
        with ``ActorStopped`` (answered while the node's writers run):
        counted, never dropped unseen."""
        self.handlers = {
            **self.handlers,
            TellEnvelope: self._tell_leaving,
            AskEnvelope: self._ask_leaving,
        }

    def _tell_leaving(
        self, envelope: TellEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        try:
            message = self._codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            self.bad(sender, "undecodable message", exc)
            return
        local = self._local
        local.dead_letter(local.here(envelope.path), message, "node stopping", sender)

    def _ask_leaving(
        self, envelope: AskEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        error = ActorStopped(f"node {self._local.address} is stopping")
        self._serving.fail(sender, reply_to, envelope.ask_id, error)

    @property
    def bad_input(self) -> dict[str, int]:
        """Bad input counted so far, by cause (see ``_bad_input.CAUSES``)."""
        return self.bad.counts

    # -- frames ------------------------------------------------------------------

    def on_frame(self, msg: Msg) -> None:
        """The NATS client's callback for the node's subjects (see the
        module doc for the checks, in their order)."""
        client = self._client
        if not self.accepting or client is None:
            return
        data = msg.data
        reply = msg.reply
        bad = self.bad
        max_payload = client.max_payload  # a property: read once per frame
        size = len(data)
        if size > max_payload:
            bad(reply, "oversize frame", f"{size} bytes")
            return
        # The frame number (written out: a call saved per frame).
        seq = oob = None
        numbered = None  # the reply subject, when it carries a number
        if reply is not None:
            dot = reply.rfind(".")
            if reply.endswith(self._numbered, 0, dot):
                token = reply[dot + 1 :]
                if token[:1] == "o":
                    oob = frame_number(token[1:])
                    if oob is not None:
                        numbered = reply
                elif token.isascii() and token.isdigit() and len(token) <= 18:
                    # frame_number(token) written out: a numbered frame's
                    # (every frame from a node) call saved.
                    seq = int(token)
                    numbered = reply
        payload: bytes | memoryview = data
        secret = self._secret
        if secret is not None:
            opened = secret.open(msg.subject, numbered, data)
            if opened is None:
                bad(reply, "not authenticated", "no valid tag for the cluster secret")
                return
            payload = opened
        if payload[:2] != _HEAD and payload[:1] == _HEAD[:1] and len(payload) > 1:
            bad(reply, "unknown version", f"version byte {payload[1]:#x}")
            return
        try:
            frame = decode_frame(payload, max_payload)
        except DecodeError as exc:
            bad(reply or msg.subject, "malformed frame", exc)
            return
        sender = frame.sender
        received = None
        if sender is None:
            # A program that is not a node gets its answers on the reply
            # subject; with a secret, it may only look actors up (a lookup
            # has no frame number, so a replayed one is answered again).
            if secret is not None and any(
                type(envelope) is not LookupEnvelope for envelope in frame.envelopes
            ):
                bad(reply, "anonymous frame refused", "not a lookup")
                return
            reply_to = reply
        else:
            reply_to = None
            if numbered is None:
                bad(sender, "unnumbered frame", reply)
                return
            peers = self._peers
            peer = peers.peers.get(sender) or peers.peer(sender)
            if peer is None:
                if sender in peers.gone:
                    bad(sender, "from a gone node", "declared down before")
                else:
                    bad(sender, "peer table full", f"max_peers={peers.max_peers}")
                return
            received = peer.received
            if received is None:
                received = peer.received = Received()
            if seq is not None:
                last = received.seq
                if seq <= last:
                    bad(sender, "replayed frame", f"number {seq} after {last}")
                    return
                if seq > last + 1 and last:
                    # Frames in between never came (at most once): counted.
                    lost = peers.lost_frames
                    if sender not in lost and len(lost) >= peers.max_peers:
                        del lost[next(iter(lost))]  # bounded: the oldest goes
                    lost[sender] = lost.get(sender, 0) + seq - last - 1
                received.seq = seq
                received.unacked += size
                received.frames += 1
                received.bytes += size
                received.envelopes += len(frame.envelopes)
            else:
                assert oob is not None
                if oob <= received.oob:
                    bad(
                        sender, "replayed frame", f"number o{oob} after o{received.oob}"
                    )
                    return
                received.oob = oob
        observer = self.observer
        if observer is not None:
            self._parent = observer.frame(msg.headers)
        handlers = self.handlers
        try:
            for envelope in frame.envelopes:
                handler = handlers.get(type(envelope))
                if handler is None:
                    # A kind that only answers a request (a lookup reply).
                    bad(sender, "unexpected envelope", type(envelope).__name__)
                    continue
                try:
                    handler(envelope, sender, reply_to)
                except Exception as exc:
                    bad(sender, "envelope not handled", repr(exc))
        finally:
            self._parent = None
            if self._shares.touched:
                self._shares.frame_done()
        if seq is not None and received is not None and received.unacked >= ACK_BYTES:
            assert sender is not None
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
            # _serve written out: a call saved per inbound ask.
            try:
                message = self._codec.decode(envelope.tag, envelope.body)
            except DecodeError as exc:
                self.bad(sender, "undecodable message", exc)
                self._serving.fail(sender, reply_to, envelope.ask_id, exc)
                return
            self._serving.serve(
                envelope.path, envelope.ask_id, message, sender, reply_to
            )
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
        receipt: Receipt,
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
        local = self._local
        ref = local.find(envelope.path)
        if ref is None:
            return
        if local.is_protected(ref):
            # Akka's untrusted mode refuses system messages from peers; here
            # the runtime's own actors never obey a remote stop, in any mode.
            self.bad(sender, "stop refused", envelope.path)
            return
        ref.stop()

    def _watched(
        self, envelope: WatchEnvelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        if sender is not None:
            watch = self._watch
            if watch.remote_watches >= MAX_REMOTE_WATCHES:
                self.bad(sender, "watch table full", envelope.path)
                return
            watch.watched_by(sender, envelope.path)

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
