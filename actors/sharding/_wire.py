"""What crosses between shard regions of different actor systems (nodes of
``actors.remote``): the region messages as msgspec Structs registered on the
node's codec under ``actors.sharding.<Name>``, the user's messages inside as
their codec tag and body, and the peer regions' remote refs.

A region talks to a peer of its own system by the local messages
(``_region_messages``); to a peer on another node through ``RegionWire``,
which turns a local message into its Struct on the way out and a Struct
back into the local message on the way in. Bytes from a peer were
authenticated by the remote layer; what they say is still checked here
(a shard within the type's count, a valid key of that shard, a known tag)
before a region acts on it: a message that fails is dropped and counted.

This module needs the ``remote`` extra (msgspec); ``actors.sharding``
imports it only for a system that is a node.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any, Final, final

import msgspec

from .. import ActorRef, DeadLetter, MailboxFull
from ..remote import DecodeError, NodeAddress, RefAddress, Remote, RemoteRef
from ._errors import BufferFull, ShardingError
from ._hash import MAX_KEY_BYTES, shard_of
from ._link import Links, PeerLink, WireTell, WireTells
from ._region_messages import (
    Forward,
    HandOffShard,
    Leaving,
    LeavingAck,
    ShardMoved,
    TakeShard,
)
from ._state import Deliver, Locate, TypeState

__all__ = ["RegionWire", "node_address_of", "node_of", "register", "text_of"]

logger = logging.getLogger("actors.sharding")

#: The most slow-path asks of one region waiting for a peer's answer at once
#: (more fail at once with ShardingError): the table is bounded.
MAX_REMOTE_ASKS: Final = 65536


class WireForward(msgspec.Struct, frozen=True, array_like=True):
    """A slow-path message for entity ``key`` of ``shard``: the user's
    message as its codec ``tag`` and ``body``."""

    shard: int
    key: str
    tag: str
    body: msgspec.Raw


class WireLocate(msgspec.Struct, frozen=True, array_like=True):
    """A slow-path ask's locate for entity ``key`` of ``shard``: answer
    ``WireLocated(ask_id, ...)`` to ``reply_to`` once every message sent
    before it is in the entity's mailbox."""

    shard: int
    key: str
    ask_id: int
    reply_to: ActorRef[Any]


class WireLocated(msgspec.Struct, frozen=True, array_like=True):
    """The answer to ``WireLocate``: the entity's ref, or why it could not be
    reached (``error``, when ``entity`` is None)."""

    ask_id: int
    entity: ActorRef[Any] | None
    error: str = ""


class WireLeaving(msgspec.Struct, frozen=True, array_like=True):
    node: str
    region: ActorRef[Any]


class WireLeavingAck(msgspec.Struct, frozen=True, array_like=True):
    node: str


class WireShardMoved(msgspec.Struct, frozen=True, array_like=True):
    shard: int


class WireTakeShard(msgspec.Struct, frozen=True, array_like=True):
    shard: int


class WireHandOffShard(msgspec.Struct, frozen=True, array_like=True):
    shard: int


_STRUCTS: tuple[type, ...] = (
    WireTells,
    WireForward,
    WireLocate,
    WireLocated,
    WireLeaving,
    WireLeavingAck,
    WireShardMoved,
    WireTakeShard,
    WireHandOffShard,
)
_ERRORS: tuple[type, ...] = (ShardingError, BufferFull)

#: The message kinds a region hands to ``RegionWire.inbound`` (the remote
#: fast path's ``WireTells`` go to ``RegionWire.tells_in``).
KINDS: Final = frozenset(_STRUCTS) - {WireTells}


def text_of(address: NodeAddress) -> list[str]:
    """A node incarnation as a store value's field: ``[node, incarnation]``."""
    return [address.node, address.incarnation]


def node_of(remote: object) -> NodeAddress:
    """The node incarnation of a system's remote layer.

    Raises:
        TypeError: it is not ``actors.remote.Remote`` (sharding across
            systems knows no other remote layer).
    """
    if not isinstance(remote, Remote):
        raise TypeError(
            f"sharding across nodes needs actors.remote.Remote, not {remote!r}"
        )
    return remote.node


def node_address_of(value: object) -> NodeAddress | None:
    """The node incarnation a store value's field names, or None when it is
    malformed (validated as the wire validates it)."""
    try:
        return msgspec.convert(value, NodeAddress)
    except (msgspec.ValidationError, TypeError):
        return None


@final
class RemoteLocate(Locate):
    """A peer's slow-path ask, being located here: its answer goes back over
    the wire to the asking region."""

    __slots__ = ("ask_id", "reply_to", "wire")

    def __init__(self, wire: RegionWire, reply_to: ActorRef[Any], ask_id: int) -> None:
        super().__init__(None)
        self.wire = wire
        self.reply_to = reply_to
        self.ask_id = ask_id

    def resolve(self, ref: ActorRef[Any]) -> None:
        self.wire.send(self.reply_to, WireLocated(self.ask_id, ref))

    def fail(self, error: BaseException) -> None:
        self.wire.send(self.reply_to, WireLocated(self.ask_id, None, str(error)))


@final
class RegionWire:
    """One region's side of the wire: its node's codec (with the sharding
    messages registered), refs to peer regions on other nodes, and its slow
    path asks waiting for a peer's answer.

    Args:
        remote: the node's remote layer (started).
        types: the region's type state.
    """

    __slots__ = ("_ids", "asks", "codec", "links", "remote", "types")

    def __init__(self, remote: Remote, types: TypeState) -> None:
        self.remote = remote
        self.types = types
        register(remote)
        self.codec = remote.codec
        #: ask id -> (the waiting Locate, the peer it was sent to)
        self.asks: dict[int, tuple[Locate, ActorRef[Any]]] = {}
        self._ids = itertools.count(1)
        #: the queues to the peer regions, drained in the region's
        #: background (``links.run``)
        self.links = Links(remote, self._unsent)

    kinds: Final = KINDS
    #: the message kind of a peer's remote fast path (``tells_in``)
    fast_kind: Final = WireTells

    def home(self, peer: ActorRef[Any]) -> PeerLink:
        """The link to the remote region ``peer``: the remote fast path of
        the shards it hosts."""
        assert isinstance(peer, RemoteRef)
        return self.links.link(peer)

    def _unsent(self, message: object, reason: str) -> None:
        """A queued message that could not be sent: a user's message is a
        dead letter (counted), a locate fails, the region's own are logged."""
        if isinstance(message, WireTell | WireForward):
            try:
                payload = self.codec.decode(message.tag, message.body)
            except DecodeError:
                payload = message
            self.types.drop(payload, reason)
        elif isinstance(message, WireLocate):
            waiting = self.asks.pop(message.ask_id, None)
            if waiting is not None:
                waiting[0].fail(
                    ShardingError(f"the entity could not be reached: {reason}")
                )
        else:
            logger.info("sharding message %r not sent: %s", message, reason)

    @property
    def address(self) -> NodeAddress:
        """This node's incarnation."""
        return self.remote.node

    def peer(self, address: object, name: str) -> ActorRef[Any] | None:
        """The region ``name`` at the node incarnation a membership entry's
        ``address`` field names; None when the field is malformed or names
        this node (whose regions are found locally)."""
        node = node_address_of(address)
        if node is None or node == self.remote.node:
            return None
        return self.region_ref(node, name)

    def region_ref(self, address: NodeAddress, name: str) -> ActorRef[Any]:
        """The ref of the region actor ``name`` on node incarnation
        ``address`` (no round trip: its path is known)."""
        return RemoteRef(
            self.remote, RefAddress(address.node, address.incarnation, "/user/" + name)
        )

    @staticmethod
    def is_remote(ref: ActorRef[Any]) -> bool:
        """Whether ``ref`` is a region on another node."""
        return isinstance(ref, RemoteRef)

    # -- out ----------------------------------------------------------------

    def send(self, peer: ActorRef[Any], message: object) -> None:
        """Queue ``message`` for ``peer`` (a remote region or asker) behind
        everything queued for it (what cannot be sent is counted there)."""
        self.home(peer).put(message)

    def to_peer(self, peer: ActorRef[Any], message: object) -> None:
        """Send a local region message to the remote region ``peer`` as its
        Struct. A ``Forward`` whose user message cannot be encoded (its type
        is not registered on the codec) or sent is dropped and counted."""
        wire: object
        if isinstance(message, Forward):
            self._forward(peer, message.deliver)
            return
        if isinstance(message, Leaving):
            wire = WireLeaving(message.node, message.region)
        elif isinstance(message, LeavingAck):
            wire = WireLeavingAck(message.node)
        elif isinstance(message, ShardMoved):
            wire = WireShardMoved(message.shard)
        elif isinstance(message, TakeShard):
            wire = WireTakeShard(message.shard)
        elif isinstance(message, HandOffShard):
            wire = WireHandOffShard(message.shard)
        else:  # pragma: no cover - a region's own mistake
            raise TypeError(f"no wire form for {message!r}")
        self.send(peer, wire)

    def _forward(self, peer: ActorRef[Any], deliver: Deliver) -> None:
        message = deliver.message
        types = self.types
        if isinstance(message, Locate):
            if len(self.asks) >= MAX_REMOTE_ASKS:
                message.fail(ShardingError(f"{MAX_REMOTE_ASKS} asks wait already"))
                return
            ask_id = next(self._ids)
            region = types.region
            assert region is not None
            self.asks[ask_id] = (message, peer)
            self.send(peer, WireLocate(deliver.shard, deliver.key, ask_id, region))
            return
        try:
            tag, body = self.codec.encode(message)
        except Exception as exc:  # not registered, or not encodable
            types.drop(message, f"the message cannot cross the wire: {exc}")
            return
        self.send(peer, WireForward(deliver.shard, deliver.key, tag, msgspec.Raw(body)))

    def peer_gone(self, peer: ActorRef[Any]) -> None:
        """``peer`` ended: what waits to be sent to it is dropped and
        counted, and the asks waiting for its answer fail now."""
        if isinstance(peer, RemoteRef):
            self.links.gone(peer)
        for ask_id, (locate, sent_to) in list(self.asks.items()):
            if sent_to == peer:
                del self.asks[ask_id]
                locate.fail(ShardingError("the entity's node went away"))

    def expire(self, now: float) -> None:
        """Forget the asks whose askers gave up (their deadline passed)."""
        for ask_id, (locate, _) in list(self.asks.items()):
            if locate.deadline <= now:
                del self.asks[ask_id]

    # -- in -----------------------------------------------------------------

    def tells_in(self, message: WireTells, route: Callable[[Forward], object]) -> None:
        """A peer's remote fast path, in order: each message into its
        entity's mailbox at once when it runs here with nothing of its shard
        in flight here (as a local ``EntityRef``'s fast path), else handed
        to ``route`` as the ``Forward`` of the slow path at once (the region
        starts, holds or sends it on; what follows for that shard then waits
        behind it). A malformed one is dropped and counted."""
        types = self.types
        active_of = types.active.get
        inflight = types.inflight
        decode = self.codec.decode
        for item in message.items:
            key = item.key
            try:
                payload = decode(item.tag, item.body)
            except DecodeError as exc:
                self._bad(item, f"undecodable sharded message: {exc}")
                continue
            active = active_of(key)
            if active is not None and not inflight[active.shard]:
                active.count += 1
                try:
                    active.tell(payload)
                except MailboxFull:
                    types.drop(payload, "the entity's mailbox is full")
                continue
            if not key or len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
                self._bad(item, f"key {key[:64]!r} is not an entity key")
                continue
            route(Forward(Deliver(shard_of(key, types.entity.shards), key, payload)))

    def inbound(self, message: Any) -> object | None:
        """The local message a peer's Struct stands for, or None when it was
        handled here (an answer) or is malformed (dropped, counted)."""
        kind = type(message)
        if kind is WireForward or kind is WireLocate:
            if not self._valid(message.shard, message.key):
                return None
            if kind is WireLocate:
                payload: object = RemoteLocate(self, message.reply_to, message.ask_id)
            else:
                try:
                    payload = self.codec.decode(message.tag, message.body)
                except DecodeError as exc:
                    self._bad(message, f"undecodable sharded message: {exc}")
                    return None
            return Forward(Deliver(message.shard, message.key, payload))
        if kind is WireLocated:
            waiting = self.asks.pop(message.ask_id, None)
            if waiting is None:
                return None  # its asker gave up, or an answer nobody asked for
            entity = message.entity
            if entity is None:
                waiting[0].fail(ShardingError(message.error[:1024]))
            else:
                waiting[0].resolve(entity)
            return None
        if kind is WireLeaving:
            return Leaving(message.node, message.region)
        if kind is WireLeavingAck:
            return LeavingAck(message.node)
        if not self._valid(message.shard, None):
            return None
        if kind is WireShardMoved:
            return ShardMoved(message.shard)
        if kind is WireTakeShard:
            return TakeShard(message.shard)
        return HandOffShard(message.shard)

    def _valid(self, shard: object, key: object) -> bool:
        shards = self.types.entity.shards
        if type(shard) is not int or not 0 <= shard < shards:
            self._bad((shard, key), f"shard {shard!r} is not within [0, {shards})")
            return False
        if key is not None and (
            type(key) is not str
            or not key
            or len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES
            or shard_of(key, shards) != shard
        ):
            self._bad((shard, key), f"key {key!r} is not of shard {shard}")
            return False
        return True

    def _bad(self, message: object, reason: str) -> None:
        types = self.types
        types.dropped += 1
        region = types.region
        if region is not None:
            types.system.dead_letters.publish(DeadLetter(region, message, reason))


def register(remote: Remote) -> None:
    """Register the sharding messages and errors on ``remote``'s codec under
    ``actors.sharding.<Name>`` (idempotent)."""
    codec = remote.codec
    for cls in (*_STRUCTS, *_ERRORS):
        if not codec.is_registered(cls):
            codec.register(cls, f"actors.sharding.{cls.__name__}")
