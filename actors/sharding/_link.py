"""``PeerLink``: everything this node's region of a type sends to one peer
region on another node, in order, in one FIFO queue: the messages of the
remote fast path (an ``EntityRef`` whose shard that peer hosts puts them
here itself) and the region's own (forwards, locates and their answers,
hand-off and leave). One background task of the region, ``Links.run``,
drains the queues into the remote layer: a run of fast-path messages at the
head of a queue goes as one envelope (``WireTells``, up to ``MAX_BATCH``
messages or ``MAX_BATCH_BYTES`` of bodies), each other message as its own.

Nothing the remote layer refuses for want of room is lost: when this
node's share of the peer region's mailbox (its credit) or the outbound
buffer to that node is used up, the drain waits for them (``send``) and
everything behind waits its turn, in order. What waits is bounded: at
``HIGH`` queued messages a fast-path ``tell`` raises ``MailboxFull`` and a
``send`` waits (below ``LOW`` again); the region's own messages always get
in (the slow path bounds them: ``Entity.buffer`` per shard). A message
that cannot be sent at all (the peer's node went away, the remote layer
stopped, a message too large for a frame) is dropped and counted, its
user message a dead letter.

This module needs the ``remote`` extra (msgspec), as ``_wire``.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any, Final, final

import anyio
import msgspec

from .. import ActorStopped, MailboxFull
from ..remote import FrameTooLarge, NodeUnreachable, Remote, RemoteRef

__all__ = [
    "HIGH",
    "LOW",
    "MAX_BATCH",
    "MAX_BATCH_BYTES",
    "Links",
    "PeerLink",
    "WireTell",
    "WireTells",
]

logger = logging.getLogger("actors.sharding")

#: The most fast-path messages in one ``WireTells`` envelope, and the most
#: bytes of their bodies (a message larger goes alone).
MAX_BATCH: Final = 512
MAX_BATCH_BYTES: Final = 64 * 1024
#: Messages queued for one peer at which a fast-path tell raises
#: MailboxFull and a send waits; below LOW again, the senders go on.
HIGH: Final = 8192
LOW: Final = HIGH // 2


class WireTell(msgspec.Struct, frozen=True, array_like=True):
    """A message for entity ``key`` on the remote fast path (its shard is
    the key's, found by the receiving region): the user's message as its
    codec ``tag`` and ``body``."""

    key: str
    tag: str
    body: msgspec.Raw


class WireTells(msgspec.Struct, frozen=True, array_like=True):
    """Fast-path messages in the order they were sent (one envelope)."""

    items: list[WireTell]


#: Called with a message that could not be sent and why: counts it (a
#: user's message: a dead letter).
Drop = Callable[[object, str], None]


@final
class PeerLink:
    """The queue to one peer region (see the module docstring).

    Args:
        remote: this node's remote layer.
        peer: the peer region.
        links: the region's links (woken when this queue gets its first
            message).
        drop: counts a message that could not be sent.
    """

    __slots__ = (
        "_encode",
        "_links",
        "_room",
        "_tags",
        "closed",
        "codec",
        "dirty",
        "drop",
        "peer",
        "queue",
        "remote",
    )

    def __init__(
        self, remote: Remote, peer: RemoteRef[Any], links: Links, drop: Drop
    ) -> None:
        self.remote = remote
        self.peer = peer
        self._links = links
        self.drop = drop
        codec = self.codec = remote.codec
        # Bound once: the codec's tag table and encoder (the hot path).
        self._tags = codec.value_tags
        self._encode = codec.encoder.encode
        #: what waits to be handed to the remote layer, oldest first
        self.queue: deque[Any] = deque()
        #: queued and not yet drained (the link is on its way to ``drain``)
        self.dirty = False
        #: the peer went away: nothing is sent on this link again
        self.closed = False
        self._room: anyio.Event | None = None

    def __repr__(self) -> str:
        return f"PeerLink({self.peer!r}, queued={len(self.queue)})"

    # -- in -----------------------------------------------------------------

    def full(self) -> bool:
        """Whether a fast-path tell would be refused (``HIGH`` queued)."""
        return len(self.queue) >= HIGH

    async def room(self) -> None:
        """Wait until fewer than ``LOW`` messages are queued (or the link
        closed). Cancelled, it changes nothing."""
        if len(self.queue) < LOW or self.closed:
            return
        room = self._room
        if room is None:
            room = self._room = anyio.Event()
        await room.wait()

    def tell(self, key: str, message: object) -> None:
        """Queue ``message`` for entity ``key``; never waits.

        Raises:
            TypeError: the codec cannot encode ``message`` (its type is not
                registered), naming the type.
            MailboxFull: ``HIGH`` messages wait for this peer already.
        """
        if len(self.queue) >= HIGH:
            raise MailboxFull(
                f"{HIGH} messages wait already for {self.peer} (its node is "
                "slow to take them): send() waits for room"
            )
        tag = self._tags.get(type(message))
        if tag is None:  # an exception, or not registered: TypeError
            tag, body = self.codec.encode(message)
        else:
            try:
                body = self._encode(message)
            except (TypeError, ValueError, OverflowError) as exc:
                raise self.codec.encode_failure(message, exc) from exc
        self.put(WireTell(key, tag, msgspec.Raw(body)))

    def put(self, message: object) -> None:
        """Queue a wire message (the region's own: never refused)."""
        if self.closed:
            self.drop(message, "the peer region's node went away")
            return
        self.queue.append(message)
        if not self.dirty:
            self.dirty = True
            self._links.wake(self)

    # -- out ----------------------------------------------------------------

    def _next(self) -> tuple[object, int]:
        """The envelope at the head of the queue and how many queued
        messages it carries: a run of fast-path messages as one
        ``WireTells``, else the message itself."""
        queue = self.queue
        if type(queue[0]) is not WireTell:
            return queue[0], 1
        items: list[WireTell] = []
        size = 0
        for item in queue:
            if type(item) is not WireTell or len(items) >= MAX_BATCH:
                break
            size += len(item.body)
            if items and size > MAX_BATCH_BYTES:
                break
            items.append(item)
        return WireTells(items), len(items)

    async def drain(self) -> None:
        """Hand everything queued to the remote layer, in order, waiting
        for credit and room when they are used up."""
        queue = self.queue
        remote, peer = self.remote, self.peer
        while queue and not self.closed:
            envelope, count = self._next()
            try:
                try:
                    remote.tell(peer, envelope)
                except MailboxFull:
                    await remote.send(peer, envelope)  # a checkpoint
                    if self.closed:
                        return  # its queue was dropped meanwhile
            except (NodeUnreachable, ActorStopped):  # SystemNotRunning
                self.close("the peer region's node went away")
                return
            except (FrameTooLarge, TypeError) as exc:
                logger.warning("a sharding message to %s was not sent: %s", peer, exc)
                for _ in range(count):
                    self.drop(queue.popleft(), f"not sent: {exc}")
                continue
            for _ in range(count):
                queue.popleft()
            room = self._room
            if room is not None and len(queue) < LOW:
                self._room = None
                room.set()
        self.dirty = False

    def flush(self) -> None:
        """Hand what is queued to the remote layer now without waiting (the
        region is stopping); what it refuses is dropped and counted."""
        queue = self.queue
        while queue and not self.closed:
            envelope, count = self._next()
            try:
                self.remote.tell(self.peer, envelope)
            except Exception as exc:  # MailboxFull, SystemNotRunning, ...
                self.close(f"the region stopped before it was sent ({exc!r})")
                return
            for _ in range(count):
                queue.popleft()

    def close(self, reason: str) -> None:
        """Send nothing more; what is queued is dropped and counted."""
        self.closed = True
        queue = self.queue
        while queue:
            self.drop(queue.popleft(), reason)
        room = self._room
        if room is not None:
            self._room = None
            room.set()


@final
class Links:
    """A region's links to its peers on other nodes, and the one task that
    drains them (``run``, in the region's background).

    Args:
        remote: this node's remote layer.
        drop: counts a message that could not be sent.
    """

    __slots__ = ("_dirty", "_drop", "_event", "_idle", "_links", "remote")

    def __init__(self, remote: Remote, drop: Drop) -> None:
        self.remote = remote
        self._drop = drop
        #: peer region -> its link (bounded by the members)
        self._links: dict[RemoteRef[Any], PeerLink] = {}
        self._dirty: list[PeerLink] = []
        self._event: anyio.Event | None = None
        self._idle: anyio.Event | None = None

    def link(self, peer: RemoteRef[Any]) -> PeerLink:
        """The link to ``peer`` (made at the first call)."""
        link = self._links.get(peer)
        if link is None or link.closed:
            link = self._links[peer] = PeerLink(self.remote, peer, self, self._drop)
        return link

    def wake(self, link: PeerLink) -> None:
        """``link`` has messages to drain."""
        self._dirty.append(link)
        event = self._event
        if event is not None:
            self._event = None
            event.set()

    async def run(self) -> None:
        """Drain the links that have messages, for as long as the region
        runs (cancelled by its end)."""
        while True:
            if not self._dirty:
                event = self._event = anyio.Event()
                await event.wait()
            dirty, self._dirty = self._dirty, []
            for link in dirty:
                await link.drain()
            idle = self._idle
            if idle is not None and not self._dirty:
                self._idle = None
                idle.set()

    def busy(self) -> bool:
        """Whether a link still has messages to hand to the remote layer."""
        return any(link.queue and not link.closed for link in self._links.values())

    async def drained(self) -> None:
        """Wait until every link has handed what it holds to the remote layer
        (a graceful leave's last messages)."""
        while self.busy():
            idle = self._idle
            if idle is None:
                idle = self._idle = anyio.Event()
            await idle.wait()

    def gone(self, peer: RemoteRef[Any]) -> None:
        """``peer`` ended: what waits for it is dropped and counted."""
        link = self._links.pop(peer, None)
        if link is not None:
            link.close("the peer region's node went away")

    def flush(self) -> None:
        """The region stops: hand every queue to the remote layer now."""
        for link in list(self._links.values()):
            link.flush()
        self._dirty.clear()
