"""Outgoing asks: the pending table, matching replies to their asks, late
replies, and lookups.

An ask of a remote ref sends an ask envelope carrying an id of this node
(63 random bits from the operating system's CSPRNG, as ``secrets`` draws
them, taken in blocks of ``ID_BLOCK``: a third party cannot guess the id of
an ask in flight to answer it) and parks on a
[``Pending``][actors.remote._asks.Pending] (the channel core's one-answer
``Slot``) until its reply or failure comes back from the
asked node (``_inbound`` finds it by id), the peer is lost, or the timeout
expires. While it is in flight its peer is depended on (heartbeats: a silent
node is declared down and the ask fails with ``NodeUnreachable``). An answer
that comes after its ask ended (timed out, cancelled) is counted in
``late_replies``, never delivered to another ask.

A lookup is a NATS request to a node's inbox or name subject: one reply,
from whichever incarnation answers, or ``NodeUnreachable`` at once when
nobody listens.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .. import ActorRef, AskTimeout, MailboxFull, SystemNotRunning
from ..channel.lowlevel import EMPTY, Backend, Slot
from ..nats import Client, NoRespondersError, RequestTimeoutError
from ._envelopes import LookupReplyEnvelope, decode_frame
from ._errors import ActorNotFound, DecodeError, NodeUnreachable
from ._heartbeat import HeartbeatMonitor
from ._local import Local
from ._node import NodeAddress, RefAddress
from ._peers import Peers
from ._ref import RemoteRef
from ._subjects import Subjects
from ._wire import Wire

__all__ = ["ID_BLOCK", "Asks", "Pending", "check_seconds"]

#: Ask ids drawn at once: one ``os.urandom`` per this many asks, where
#: ``secrets.randbits(63)`` per ask is a system call and three calls. Each
#: id is as unguessable (63 bits of the same source, never reused).
ID_BLOCK = 256
_unpack_ids = struct.Struct(f"<{ID_BLOCK}Q").unpack
_ID_MASK = (1 << 63) - 1

#: Seconds a lookup waits, at most, for a new peer's share (the handshake).
HANDSHAKE_TIMEOUT = 1.0

#: ``Pending.state`` once answered: a reply, or a failure (the handler's, the
#: remote runtime's, or this node's: the peer was lost).
REPLIED, FAILED = 1, 2


def check_seconds(name: str, value: object) -> float:
    """``value`` as a finite number of seconds > 0.

    Raises:
        TypeError: it is not a number. ValueError: it is not finite and > 0.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{name} must be a number of seconds, not {type(value).__name__}"
        )
    if not 0 < value < math.inf:
        raise ValueError(f"{name} must be a finite number > 0, not {value!r}")
    return float(value)


class Pending(Slot):
    """A remote ask in flight: filled once, by a reply, a failure, or the
    loss of its peer; its asker parks on it with the backend's own waiting
    primitive (no Event, no cancel scope per ask), linked in the system's
    ask deadlines (``prev``, ``next``, ``deadline``: no timer per ask)."""

    __slots__ = ("answered", "asks", "deadline", "next", "peer", "prev")

    prev: Pending | None
    next: Pending | None
    deadline: float

    def __init__(self, asks: Asks, peer: NodeAddress) -> None:
        # The slot's fields set here (no super().__init__(): a call saved
        # per ask).
        self.handle = None
        self.state = EMPTY
        self.outcome = None
        self.waiting = False
        self.abandoned = False
        self.on_done = None
        self.asks = asks
        self.peer = peer
        #: Filled by an answer from the peer (not by a loss).
        self.answered = False

    def lost(self) -> None:
        # Answered, then cancelled before the asker could take the answer: a
        # late reply, counted as one that came after its ask ended.
        if self.answered:
            self.asks.late_replies += 1


class Asks:
    """The outgoing asks of one node (see the module doc).

    Args:
        wire: the node's encoder; anonymous: the encoder of frames without a
            sender (lookups).
        peers: the peer table.
        monitor: the heartbeat monitor (a peer with asks in flight is
            depended on).
        local: this node's actors (a lookup of this node resolves locally).
        subjects: the node's subjects.
        system_name: the system's name (for error messages).
        backend: the event loop's backend (for parking).
        park: the system's ask deadlines (``RemoteHost.answer_deadlines``):
            ``park(pending, timeout)`` waits for an answer sharing the timer
            of the system's asks with that timeout; None: a timer per ask
            (``Slot.park_for``).
    """

    def __init__(
        self,
        wire: Wire,
        anonymous: Wire,
        peers: Peers,
        monitor: HeartbeatMonitor,
        local: Local,
        subjects: Subjects,
        system_name: str,
        backend: Backend,
        park: Callable[[Pending, float], Awaitable[bool]] | None = None,
    ) -> None:
        self._wire = wire
        self._anonymous = anonymous
        self._peers = peers
        self._monitor = monitor
        self._local = local
        self._subjects = subjects
        self._system_name = system_name
        self._backend = backend
        self._park = park
        self._client: Client | None = None
        #: The asks in flight, by id.
        self.pending: dict[int, Pending] = {}
        #: Replies that came after their ask had ended (timed out, cancelled).
        self.late_replies = 0
        #: Ask ids not used yet (taken from the end; see ID_BLOCK).
        self._ids: list[int] = []

    def _new_id(self) -> int:
        """A fresh random ask id: 63 bits from the operating system's CSPRNG
        (a block of ``ID_BLOCK`` is drawn when the last one is used)."""
        ids = self._ids
        if not ids:
            ids[:] = [n & _ID_MASK for n in _unpack_ids(os.urandom(8 * ID_BLOCK))]
        return ids.pop()

    def attach(self, client: Client) -> None:
        """The node is connected (lookups are requests of ``client``)."""
        self._client = client

    # -- asking ----------------------------------------------------------------

    async def ask(
        self,
        ref: RemoteRef[Any],
        message: object,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """See [``RemoteRef.ask``][actors.remote.RemoteRef.ask]; ``headers``:
        the NATS headers its frame carries (the trace context of a traced
        system)."""
        if type(timeout) is not float or not 0.0 < timeout < math.inf:
            timeout = check_seconds("timeout", timeout)  # an int, or a bad one
        pending_asks = self.pending
        ids = self._ids  # _new_id() inlined: a call saved per ask
        ask_id = ids.pop() if ids else self._new_id()
        while ask_id in pending_asks:  # one in 2**63 per ask in flight
            ask_id = self._new_id()
        envelope = self._wire.ask(ref.address.path, ask_id, message)
        peer = ref.node
        pending = Pending(self, peer)
        pending_asks[ask_id] = pending
        self._monitor.depend(peer)
        answered = False
        try:
            outbound = self._peers.outbounds.get(peer) or self._peers.outbound(peer)
            if outbound is None:
                # Still a checkpoint, as every ask is: a retry loop around
                # an ask to a gone node must not starve the event loop.
                await anyio.lowlevel.checkpoint()
                raise NodeUnreachable(f"node {peer} is gone")
            remaining = timeout
            # A lone ask goes out at once; else in its FIFO place, waiting
            # for room (within the timeout) when the buffer is full.
            if not outbound.put_now(envelope, headers):
                try:
                    outbound.try_put(envelope, headers)
                except MailboxFull:
                    deadline = anyio.current_time() + timeout
                    remaining = 0.0  # unless the put below completes in time
                    with anyio.move_on_after(timeout):
                        await outbound.put(envelope, headers)
                        remaining = deadline - anyio.current_time()
            if pending.state:
                answered = True
                await anyio.lowlevel.checkpoint()  # every ask is a checkpoint
            elif remaining == timeout and self._park is not None:
                # The usual case: one timer per timeout value, shared.
                answered = await self._park(pending, timeout)
            elif remaining > 0:
                answered = await pending.park_for(self._backend, remaining)
        except BaseException:
            if pending.leave():
                pending.lost()
            raise
        finally:
            del self.pending[ask_id]
            self._monitor.undepend(peer)
        if not answered:
            raise AskTimeout(f"{ref.address} did not reply within {timeout} s")
        if pending.state == FAILED:
            # A checkpoint before the failure: an answer read inline (asyncio)
            # can wake the asker before a cancel scope's pending cancellation
            # is delivered, and a retry loop around a failing ask must still
            # see it (the replies' path stays without one).
            await anyio.lowlevel.checkpoint()
            raise pending.outcome
        return pending.outcome

    # -- answers -----------------------------------------------------------------

    def awaiting(self, ask_id: int) -> Pending | None:
        """The ask ``ask_id`` if it still waits for its answer; else None,
        and the answer is counted as late."""
        pending = self.pending.get(ask_id)
        if pending is None or pending.state:
            self.late_replies += 1
            return None
        return pending

    def replied(self, pending: Pending, value: object) -> None:
        """The asked node answered with ``value``."""
        pending.answered = True
        if not pending.fill(REPLIED, value, self._backend):
            self.late_replies += 1

    def failed(self, pending: Pending, error: BaseException) -> None:
        """The asked node answered with ``error`` (or it could not be
        decoded)."""
        pending.answered = True
        if not pending.fill(FAILED, error, self._backend):
            self.late_replies += 1

    def fail(self, ask_id: int, error: BaseException) -> None:
        """Fail the ask ``ask_id``, if it is in flight (its envelope was
        dropped)."""
        pending = self.pending.get(ask_id)
        if pending is not None:
            pending.fill(FAILED, error, self._backend)

    def peer_lost(self, peer: NodeAddress, error: NodeUnreachable) -> None:
        """``peer`` is gone: its asks fail with ``error``."""
        backend = self._backend
        for pending in list(self.pending.values()):
            if pending.peer == peer:
                pending.fill(FAILED, error, backend)

    def stopped(self, error: BaseException) -> None:
        """The node has stopped: every ask in flight fails with ``error``."""
        backend = self._backend
        for pending in list(self.pending.values()):
            pending.fill(FAILED, error, backend)

    # -- lookups -----------------------------------------------------------------

    async def lookup(
        self, node: str | NodeAddress, path: str, timeout: float
    ) -> ActorRef[Any]:
        """See [``Remote.lookup``][actors.remote.Remote.lookup]."""
        if isinstance(node, NodeAddress):
            subject = self._subjects.inbox_of(node)
        elif isinstance(node, str):
            subject = self._subjects.name_of(node)
        else:
            raise TypeError(
                f"node must be a str or a NodeAddress, not {type(node).__name__}"
            )
        if type(path) is not str:
            raise TypeError(f"path must be a str, not {type(path).__name__}")
        if not 0 < len(path) <= 1024:
            raise ValueError(f"path must be 1 to 1024 characters, not {path!r}")
        check_seconds("timeout", timeout)
        client = self._client
        if client is None:
            raise SystemNotRunning("the remote layer is not running")
        ask_id = self._new_id()
        anonymous = self._anonymous
        frame = anonymous.sealed(subject, None, [anonymous.lookup(ask_id, path)])
        try:
            msg = await client.request(subject, frame, timeout=timeout)
        except NoRespondersError:
            raise NodeUnreachable(
                f"no node {node} listens ({subject}): is it running, and in "
                f"system {self._system_name!r} (python -m actors.node --system "
                f"{self._system_name})?"
            ) from None
        except RequestTimeoutError:
            raise NodeUnreachable(
                f"node {node} did not answer a lookup within {timeout} s: it is "
                "busy or stopped, or it has another cluster secret, or none where "
                "this node has one (or one where this node has none), and drops "
                "this node's frames unread (its statistics count them under "
                "bad_input 'not authenticated')"
            ) from None
        # The answer to our own request: checked and decoded here (the one
        # reply a node takes outside its inbox, see _inbound).
        data: bytes | memoryview = msg.data
        secret = anonymous.secret
        if secret is not None:
            opened = secret.open(msg.subject, None, msg.data)
            if opened is None:
                raise NodeUnreachable(
                    f"the answer to a lookup of node {node} failed authentication "
                    "(another cluster secret, or forged)"
                )
            data = opened
        answer = decode_frame(data, client.max_payload)
        sender = answer.sender
        for envelope in answer.envelopes:
            if type(envelope) is LookupReplyEnvelope and envelope.ask_id == ask_id:
                break
        else:
            raise DecodeError(f"node {node} answered a lookup without a lookup reply")
        if sender is None:
            raise DecodeError(f"node {node} answered a lookup without its address")
        if not envelope.found:
            raise ActorNotFound(f"no actor {path!r} on node {sender}")
        resolved = self._local.resolve(
            RefAddress(sender.node, sender.incarnation, path)
        )
        assert isinstance(resolved, ActorRef)
        if sender != self._local.address:
            # The first lookup of a peer waits for its share (bounded: an
            # older node never answers, see Peers.handshake).
            await self._peers.handshake(sender, min(timeout, HANDSHAKE_TIMEOUT))
        return resolved
