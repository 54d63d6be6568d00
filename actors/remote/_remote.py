"""``Remote``: the remote layer of one actor system (``ActorSystem(remote=...)``).

Entering the system starts it ([``Remote.start``][actors.remote.Remote.start]):
it starts an embedded ``nats-server`` when no URL is given, connects, subscribes
the node's three subjects (see docs/remote-wire-format.md) and runs its tasks in
one task of the system's task group: the writer of each peer's outbound buffer,
the heartbeat monitor, and one task per inbound ask being served. Leaving the
system stops it ([``Remote.stop``][actors.remote.Remote.stop]), after the
actors: the outbound buffers are flushed and closed, the tasks end, the client
closes, the embedded server stops.

Inbound frames are handled by the client's reader (a sync callback): tells go
to the local actor's mailbox at once (a full or missing actor makes a dead
letter here), asks are enqueued at once too (so they keep their FIFO place
among tells) and answered by a task. Bad input is counted and logged once per
peer and cause, and dropped; nothing from the network stops the node.
"""

from __future__ import annotations

import itertools
import logging
import math
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, suppress
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup, TaskStatus

from .. import (
    ActorRef,
    ActorStopped,
    AskTimeout,
    LocalAsk,
    MailboxFull,
    RemoteHost,
    StopReason,
    SystemNotRunning,
    UnhandledMessage,
)
from ..channel.lowlevel import Backend, Waiter, current_backend
from ..nats import (
    Client,
    Msg,
    NatsError,
    NoRespondersError,
    RequestTimeoutError,
    connect,
    embedded_nats_server,
)
from ._codec import Codec
from ._errors import (
    ActorNotFound,
    DecodeError,
    FrameTooLarge,
    NodeDown,
    NodeUnreachable,
    RemoteActorError,
)
from ._failure_detector import PhiAccrualFailureDetector
from ._heartbeat import DEFAULT_HEARTBEAT_INTERVAL, HeartbeatMonitor
from ._node import NodeAddress, RefAddress, check_token
from ._outbound import DEFAULT_CAPACITY, DEFAULT_WINDOW, MIN_WINDOW, Outbound
from ._ref import RemoteRef
from ._remote_pool import RemotePoolRef
from ._remote_pool_spawn import spawn_remote_pool
from ._spawn import check_spawn_options, remote_spawn
from ._wire import (
    DEFAULT_PREFIX,
    Ack,
    Ask,
    Death,
    Envelope,
    Failure,
    Heartbeat,
    HeartbeatAck,
    Lookup,
    LookupReply,
    Reply,
    Stop,
    Subjects,
    Tell,
    Unwatch,
    Watch,
    Wire,
    decode_envelope,
    decode_frame,
    frame_number,
)

__all__ = ["Remote"]

logger = logging.getLogger("actors.remote")

T = TypeVar("T", bound=type)

#: Seconds ``stop`` waits for the outbound buffers to be written.
DEFAULT_STOP_TIMEOUT = 5.0
#: A receiver acks a peer's frames each time this many bytes came from it
#: since its last ack (and with each heartbeat ack).
ACK_BYTES = 64 * 1024

_NEW, _STARTED, _STOPPED = "new", "started", "stopped"


def _seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{name} must be a number of seconds, not {type(value).__name__}"
        )
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a finite number > 0, not {value!r}")
    return float(value)


class _Pending(Waiter):
    """A remote ask in flight: filled once, by a reply, a failure, or the
    loss of its peer. The asker parks on it with the backend's own waiting
    primitive (a future with a loop timer on asyncio, Trio's parking): no
    Event, no cancel scope per ask."""

    __slots__ = ("answered", "backend", "done", "error", "peer", "value")

    def __init__(self, peer: NodeAddress, backend: Backend) -> None:
        self.handle = None  #: set while the asker is parked
        self.backend = backend
        self.peer = peer
        self.done = False
        #: Filled by an answer from the peer (not by a loss).
        self.answered = False
        self.value: Any = None
        self.error: BaseException | None = None

    def succeed(self, value: object) -> None:
        if not self.done:
            self.done = True
            self.value = value
            self._wake()

    def fail(self, error: BaseException) -> None:
        if not self.done:
            self.done = True
            self.error = error
            self._wake()

    def _wake(self) -> None:
        # Only a parked asker is woken (it takes the outcome when it parks
        # otherwise), and on asyncio not one whose future is done already
        # (its timer expired, or a native cancel).
        if self.handle is not None:
            backend = self.backend
            if not backend.is_cancelled(self):
                backend.wake(self)
            self.handle = None


def _unpark(pending: _Pending) -> None:
    # Timed out or cancelled while parked: no wake may touch it any more.
    pending.handle = None


def _woken_then_cancelled(pending: _Pending) -> None:
    # asyncio: woken, then cancelled natively before it ran (the ask counts
    # the answer as late).
    pending.handle = None


class _Inbound:
    """What a node received from one peer: the highest frame number, bytes
    not yet acked, and frames that never arrived (gaps in the numbers)."""

    __slots__ = ("bytes", "envelopes", "frames", "lost", "seq", "unacked")

    def __init__(self) -> None:
        self.seq = 0
        self.unacked = 0
        self.lost = 0
        self.frames = 0  #: numbered frames received
        self.bytes = 0  #: their bytes
        self.envelopes = 0  #: the envelopes in them


class _Served:
    """The ``on_done`` of an inbound ask: its answer goes to the asker."""

    __slots__ = ("ask_id", "remote", "reply_to", "sender", "span")

    def __init__(
        self,
        remote: Remote,
        ask_id: int,
        sender: NodeAddress | None,
        reply_to: str | None,
        span: Any = None,
    ) -> None:
        self.remote = remote
        self.ask_id = ask_id
        self.sender = sender
        self.reply_to = reply_to
        self.span = span  #: the receive span (telemetry), ended when answered

    def __call__(self, local: LocalAsk) -> None:
        self.remote._served(local, self.ask_id, self.sender, self.reply_to, self.span)


class _Joiner:
    """A ``RemoteRef.join()`` waiting, watching like an actor would."""

    __slots__ = ("event", "reason")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.reason: object = None

    def terminated(self, reason: object) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()


class Remote:
    """The remote layer's configuration and, once its system is entered, the
    node itself: ``ActorSystem(remote=Remote(...))``.

    Args:
        url: the NATS server URL, or a list of them (a cluster); ``None`` (the
            default) starts a private ``nats-server`` on a free loopback port
            for the system's lifetime (other processes join it at ``url``).
        system: the name of the cluster of cooperating nodes (a subject
            token: 1-64 ASCII letters, digits, ``-``, ``_``); nodes of other
            systems never see this one's traffic.
        node: this node's name (a subject token), stable across restarts;
            default: ``"node-"`` and 8 random hex digits.
        prefix: the subjects' first token(s).
        types: classes to register with the codec, each a class or a
            ``(class, tag)`` pair (more with
            [``register_type``][actors.remote.Remote.register_type]).
        capacity: envelopes buffered per peer node (``tell`` raises
            ``MailboxFull`` beyond it, ``send`` and ``ask`` wait).
        window: the most bytes of frames sent to one peer and not yet acked
            by it (at least 256 KiB); with the window full, the buffer
            fills. It keeps a slow peer from being cut off by the server as
            a slow consumer (which would lose what is in flight).
        heartbeat_interval: seconds between heartbeats to the peers this node
            has asks in flight to.
        failure_detector: makes each monitored peer's phi accrual detector
            (default: ``PhiAccrualFailureDetector()``, see the wire format).
        serve_timeout: seconds an inbound ask may wait for its local actor
            (None, the default: as long as the actor takes; the remote asker
            has its own timeout).
        stop_timeout: seconds leaving the system waits for what is buffered
            to be written.
        client_options: keyword arguments for the NATS client (credentials,
            ``tls``, reconnection, ...; see ``actors.nats.connect``).
        server_options: keyword arguments for the embedded server (``port``,
            ``config``, ``args``, ...), used when ``url`` is None.

    Raises:
        TypeError / ValueError: a bad argument, naming it.
    """

    def __init__(
        self,
        url: str | Sequence[str] | None = None,
        *,
        system: str = "actors",
        node: str | None = None,
        prefix: str = DEFAULT_PREFIX,
        types: Iterable[type | tuple[type, str]] = (),
        capacity: int = DEFAULT_CAPACITY,
        window: int = DEFAULT_WINDOW,
        heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
        failure_detector: Callable[[], PhiAccrualFailureDetector] | None = None,
        serve_timeout: float | None = None,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
        client_options: Mapping[str, Any] | None = None,
        server_options: Mapping[str, Any] | None = None,
    ) -> None:
        if url is None:
            self._urls: list[str] | None = None
        elif isinstance(url, str):
            self._urls = [url]
        elif isinstance(url, Sequence) and url and all(isinstance(u, str) for u in url):
            self._urls = list(url)
        else:
            raise TypeError("url must be a str, a non-empty sequence of str, or None")
        self.system_name = check_token("system", system)
        self.node_name = check_token(
            "node", "node-" + secrets.token_hex(4) if node is None else node
        )
        # Checks the prefix (a throwaway incarnation).
        Subjects(system, NodeAddress.new(self.node_name), prefix=prefix)
        self.prefix = prefix
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise TypeError(f"capacity must be an int, not {type(capacity).__name__}")
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.capacity = capacity
        if isinstance(window, bool) or not isinstance(window, int):
            raise TypeError(f"window must be an int, not {type(window).__name__}")
        if window < MIN_WINDOW:
            raise ValueError(f"window must be at least {MIN_WINDOW}, not {window}")
        self.window = window
        self.heartbeat_interval = _seconds("heartbeat_interval", heartbeat_interval)
        if failure_detector is not None and not callable(failure_detector):
            raise TypeError("failure_detector must be callable or None")
        self._failure_detector = failure_detector or PhiAccrualFailureDetector
        self.serve_timeout = (
            None if serve_timeout is None else _seconds("serve_timeout", serve_timeout)
        )
        self.stop_timeout = _seconds("stop_timeout", stop_timeout)
        self._client_options = dict(client_options or {})
        self._server_options = dict(server_options or {})
        #: The node's codec: register message classes on it (or with ``types``).
        self.codec = Codec(address_of=self._address_of, resolve=self._resolve)
        for error in (
            ActorNotFound,
            NodeUnreachable,
            ActorStopped,
            SystemNotRunning,
            AskTimeout,
            UnhandledMessage,
            MailboxFull,
        ):
            self.codec.register(error, f"actors.{error.__name__}")
        self.codec.register(StopReason, "actors.StopReason")
        for entry in types:
            if isinstance(entry, tuple):
                self.register_type(*entry)
            else:
                self.register_type(entry)

        self._state = _NEW
        self._host: RemoteHost | None = None
        self._client: Client | None = None
        self._url: str | None = None
        self._address: NodeAddress | None = None
        self._names: dict[str, ActorRef[Any]] = {}
        self._outbounds: dict[NodeAddress, Outbound] = {}
        self._writers: list[anyio.Event] = []
        self._gone: set[NodeAddress] = set()
        #: Peers NATS said nobody listens on, monitored until they answer a
        #: heartbeat (alive after all: a reconnection) or are declared down.
        self._suspects: set[NodeAddress] = set()
        #: What came from each peer, for the acks.
        self._inbound: dict[NodeAddress, _Inbound] = {}
        self._asks: dict[int, _Pending] = {}
        self._asks_per_peer: dict[NodeAddress, int] = {}
        #: Local watchers (actor tokens, joiners) of other nodes' actors.
        self._watchers: dict[RefAddress, set[object]] = {}
        #: Local actors other nodes watch: by the path they used, the peers.
        self._watched: dict[ActorRef[Any], dict[str, set[NodeAddress]]] = {}
        self._ids = itertools.count(1)
        self._tg: TaskGroup | None = None
        #: Inbound frames are handled (until the system begins to leave).
        self._accepting = True
        #: Inbound asks being served, and the event set when none is left.
        self._serving = 0
        self._idle: anyio.Event | None = None
        self._stopping = anyio.Event()
        self._done = anyio.Event()
        #: Bad input from the network, counted per (peer, cause).
        self.bad_input: dict[tuple[str, str], int] = {}
        #: Replies that came after their ask had ended (timed out, cancelled).
        self.late_replies = 0
        #: Frames that never arrived from each peer (NATS core is at most
        #: once: a broker restart or a broken connection loses what was in
        #: flight), by the gaps in their numbers.
        self.lost_frames: dict[NodeAddress, int] = {}
        #: Dead letters the remote layer made, by (peer node name, reason):
        #: sent to a peer that is gone, or from a peer to no such actor, a
        #: full mailbox or a stopped actor.
        self.dead_letters_by_peer: dict[tuple[str, str], int] = {}
        #: The traced side of the remote layer (None: telemetry is off).
        self._telemetry: Any = None

    # -- configuration ---------------------------------------------------------

    def register_type(self, cls: T, tag: str | None = None) -> T:
        """Register a message class with the codec (see ``Codec.register``):
        both sides must register it under the same tag. Usable as a decorator.

        Raises:
            TypeError / ValueError: as ``Codec.register``.
        """
        return self.codec.register(cls, tag)

    # -- the node --------------------------------------------------------------

    def _running(self) -> NodeAddress:
        address = self._address
        if self._state != _STARTED or address is None:
            raise SystemNotRunning("the remote layer is not running (enter its system)")
        return address

    @property
    def url(self) -> str:
        """The URL of the NATS server this node is connected to (the embedded
        one's when no URL was given): other nodes join there.

        Raises:
            SystemNotRunning: the system is not entered.
        """
        self._running()
        assert self._url is not None
        return self._url

    @property
    def node(self) -> NodeAddress:
        """This node's incarnation (its name and random incarnation id).

        Raises:
            SystemNotRunning: the system is not entered.
        """
        return self._running()

    @property
    def watching(self) -> int:
        """Remote actors watched from this node now (by actors or joins)."""
        return len(self._watchers)

    @property
    def serving(self) -> int:
        """Asks from other nodes being served by local actors now."""
        return self._serving

    @property
    def asks_in_flight(self) -> int:
        """Asks of remote refs waiting for their answer now."""
        return len(self._asks)

    def is_reachable(self, peer: NodeAddress) -> bool:
        """Whether ``peer`` is not known to be gone, nor suspected (NATS said
        nobody listens on it, and it has not answered since): best effort."""
        return (
            self._state == _STARTED
            and peer not in self._gone
            and peer not in self._suspects
        )

    def register(self, name: str, ref: ActorRef[Any]) -> None:
        """Make a local actor reachable by ``name``: ``lookup(node, name)`` on
        other nodes finds it, and its remote refs carry the name as path.

        Raises:
            TypeError: ``name`` is not a str, or ``ref`` is not a ref to an
                actor of this system.
            ValueError: ``name`` is empty, over 1024 characters, begins with
                ``/``, or is registered already for another actor.
            SystemNotRunning: the system is not entered.
        """
        self._running()
        assert self._host is not None
        if type(name) is not str:
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not 0 < len(name) <= 1024 or name.startswith("/"):
            raise ValueError(
                "name must be 1 to 1024 characters and not begin with '/', "
                f"not {name!r}"
            )
        if not isinstance(ref, ActorRef) or self._host.path_of(ref) is None:
            raise TypeError(
                f"ref must be a ref to an actor of this system, not {ref!r}"
            )
        known = self._names.get(name)
        if known is not None and known != ref and known.is_alive:
            raise ValueError(f"the name {name!r} is registered already for {known!r}")
        self._names[name] = ref

    def unregister(self, name: str) -> None:
        """Forget a name given to [``register``][actors.remote.Remote.register]
        (nothing if unknown)."""
        self._names.pop(name, None)

    def _find(self, path: str) -> ActorRef[Any] | None:
        if path.startswith("/"):
            host = self._host
            return None if host is None else host.find(path)
        ref = self._names.get(path)
        return ref if ref is not None and ref.is_alive else None

    # -- refs <-> addresses ------------------------------------------------------

    def _address_of(self, obj: object) -> RefAddress | None:
        if isinstance(obj, RemoteRef):
            return obj.address
        host = self._host
        address = self._address
        if host is not None and address is not None and isinstance(obj, ActorRef):
            path = host.path_of(obj)
            if path is not None:
                return RefAddress(address.node, address.incarnation, path)
        return None

    def _resolve(self, address: RefAddress) -> object:
        own = self._address
        if (
            own is not None
            and address.incarnation == own.incarnation
            and address.node == own.node
        ):
            ref = self._find(address.path)
            if ref is not None:
                return ref
        return RemoteRef(self, address)

    # -- starting and stopping -------------------------------------------------

    async def start(self, host: RemoteHost) -> None:
        """Join the system: connect (or start the embedded server first),
        subscribe, start the tasks. Called by ``ActorSystem`` on entry.

        Raises:
            RuntimeError: this Remote was started before (one system, once).
            NoServersError, AuthorizationError, FileNotFoundError, OSError:
                the server could not be started or reached.
        """
        if self._state != _NEW:
            raise RuntimeError("a Remote joins one system, once")
        self._state = _STARTED
        self._host = host
        address = self._address = NodeAddress.new(self.node_name)
        self._subjects = Subjects(self.system_name, address, prefix=self.prefix)
        self._wire = Wire(self.codec, address)
        self._anonymous = Wire(self.codec, None)
        self._backend = current_backend()
        #: How the reply subject of a numbered frame to this node ends,
        #: before the number.
        self._numbered = f".nr.{address.node}.{address.incarnation}"
        self._monitor = HeartbeatMonitor(
            self._send_heartbeat,
            self._on_down,
            interval=self.heartbeat_interval,
            detector=self._failure_detector,
        )
        telemetry = host.system.telemetry
        if telemetry is not None:
            # Optional dependency: imported only for a traced system.
            from ._telemetry import RemoteTelemetry

            self._telemetry = RemoteTelemetry(telemetry, self)
            self._telemetry.install()
        try:
            await host.task_group.start(self._run)
        except BaseException:
            self._state = _STOPPED
            raise

    async def stop(self) -> None:
        """Leave the system: write what is buffered (within
        ``stop_timeout``), end the tasks, close the client, stop the embedded
        server. Called by ``ActorSystem`` on exit, after the actors."""
        if self._state != _STARTED:
            return
        self._stopping.set()
        await self._done.wait()

    async def _run(self, *, task_status: TaskStatus[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                if self._urls is None:
                    server = await stack.enter_async_context(
                        embedded_nats_server(**self._server_options)
                    )
                    urls = [server.url]
                else:
                    urls = self._urls
                options = {
                    "name": f"actors {self.system_name}.{self.node_name}",
                    **self._client_options,
                }
                client = await stack.enter_async_context(connect(urls, **options))
                self._client = client
                self._url = client.connected_url or urls[0]
                subjects = self._subjects
                await client.subscribe(subjects.inbox, callback=self._on_frame)
                await client.subscribe(
                    subjects.name, subjects.queue, callback=self._on_frame
                )
                await client.subscribe(subjects.returns, callback=self._on_return)
                await client.flush()
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    tg.start_soon(self._monitor.run)
                    task_status.started()
                    await self._stopping.wait()
                    self._accepting = False
                    with anyio.move_on_after(self.stop_timeout):
                        # The actors have stopped: the asks being served
                        # have failed; their answers go out first.
                        if self._serving:
                            self._idle = anyio.Event()
                            await self._idle.wait()
                        self._state = _STOPPED
                        for outbound in self._outbounds.values():
                            outbound.close()
                        for written in self._writers:
                            await written.wait()
                    tg.cancel_scope.cancel()
        finally:
            self._state = _STOPPED
            self._tg = None
            error = SystemNotRunning("the remote layer has stopped")
            for outbound in self._outbounds.values():
                outbound.abort(error)
            for pending in self._asks.values():
                pending.fail(error)
            self._done.set()

    # -- outbound ----------------------------------------------------------------

    def _outbound(self, peer: NodeAddress) -> Outbound | None:
        """The outbound buffer to ``peer`` (made at first use), or None when
        ``peer`` is known to be gone."""
        outbound = self._outbounds.get(peer)
        if outbound is None:
            if peer in self._gone:
                return None
            tg = self._tg
            client = self._client
            if tg is None or client is None or self._state != _STARTED:
                raise SystemNotRunning("the remote layer has stopped")
            subjects = self._subjects
            outbound = Outbound(
                peer,
                self._wire,
                client,
                subject=subjects.inbox_of(peer),
                reply=subjects.return_for(peer),
                capacity=self.capacity,
                window=self.window,
                on_dropped=lambda envelopes, error: self._dropped(
                    peer, envelopes, error
                ),
            )
            self._outbounds[peer] = outbound
            written = anyio.Event()
            self._writers.append(written)
            tg.start_soon(self._write, outbound, written)
        return outbound

    @staticmethod
    async def _write(outbound: Outbound, written: anyio.Event) -> None:
        try:
            await outbound.run()
        finally:
            written.set()

    def _dropped(
        self, peer: NodeAddress, envelopes: list[bytes], error: BaseException
    ) -> None:
        """Envelopes to ``peer`` that were not published: asks fail, tells
        are dead letters."""
        host = self._host
        for data in envelopes:
            try:
                envelope = decode_envelope(data)
            except DecodeError:
                continue
            if type(envelope) is Ask:
                pending = self._asks.get(envelope.ask_id)
                if pending is not None:
                    pending.fail(self._unreachable(peer, error))
            elif type(envelope) is Tell and host is not None:
                message: object
                try:
                    message = self.codec.decode(envelope.tag, envelope.body)
                except DecodeError:
                    message = bytes(envelope.body)
                ref = RemoteRef[Any](
                    self, RefAddress(peer.node, peer.incarnation, envelope.path)
                )
                self._dead_letter(ref, message, "node unreachable", peer)

    @staticmethod
    def _unreachable(peer: NodeAddress, cause: BaseException) -> NodeUnreachable:
        if isinstance(cause, NodeUnreachable):
            return cause
        error = NodeUnreachable(f"node {peer} is unreachable: {cause}")
        error.__cause__ = cause
        return error

    def _lose(self, peer: NodeAddress, error: NodeUnreachable, down: NodeDown) -> None:
        """``peer`` is gone for good: drop its buffer, fail its asks, tell the
        watchers of its actors (reason ``down``)."""
        self._gone.add(peer)
        self._monitor.unmonitor(peer)
        self._suspects.discard(peer)
        self._inbound.pop(peer, None)
        outbound = self._outbounds.pop(peer, None)
        if outbound is not None:
            outbound.abort(error)
        for pending in list(self._asks.values()):
            if pending.peer == peer:
                pending.fail(error)
        for address in [a for a in self._watchers if a.node_address == peer]:
            watchers = self._watchers.pop(address)
            self._undepend(peer)
            ref = RemoteRef[Any](self, address)
            for watcher in watchers:
                self._notify(watcher, ref, down)

    def _send_heartbeat(self, peer: NodeAddress, seq: int) -> None:
        outbound = self._outbound(peer)
        if outbound is not None:
            outbound.put_urgent(self._wire.heartbeat(seq))

    def _on_down(self, event: NodeDown) -> None:
        error = NodeUnreachable(f"node {event.node} was declared down")
        error.__cause__ = event
        self._lose(event.node, error, event)

    # -- the senders' side -------------------------------------------------------

    def _dead_letter(
        self, recipient: ActorRef[Any], message: object, reason: str, peer: object
    ) -> None:
        """A dead letter made by the remote layer, counted per peer too."""
        key = (getattr(peer, "node", None) or str(peer), reason)
        self.dead_letters_by_peer[key] = self.dead_letters_by_peer.get(key, 0) + 1
        host = self._host
        if host is not None:
            host.dead_letter(recipient, message, reason)

    def tell(self, ref: RemoteRef[Any], message: object) -> None:
        """``ref.tell(message)``; see
        [``RemoteRef.tell``][actors.remote.RemoteRef.tell]."""
        if self._state != _STARTED:
            raise SystemNotRunning("the remote layer is not running")
        envelope = self._wire.tell(ref.address.path, message)
        outbound = self._outbounds.get(ref._peer) or self._outbound(ref._peer)
        if outbound is None:
            self._dead_letter(ref, message, "node unreachable", ref._peer)
            return
        try:
            outbound.try_put(envelope)
        except NodeUnreachable:
            self._dead_letter(ref, message, "node unreachable", ref._peer)

    async def send(self, ref: RemoteRef[Any], message: object) -> None:
        """``await ref.send(message)``; see
        [``RemoteRef.send``][actors.remote.RemoteRef.send]."""
        if self._state != _STARTED:
            raise SystemNotRunning("the remote layer is not running")
        envelope = self._wire.tell(ref.address.path, message)
        outbound = self._outbound(ref._peer)
        if outbound is None:
            self._dead_letter(ref, message, "node unreachable", ref._peer)
            return
        await outbound.put(envelope)

    def stop_actor(self, ref: RemoteRef[Any]) -> None:
        """``ref.stop()``; see [``RemoteRef.stop``][actors.remote.RemoteRef.stop]."""
        if self._state != _STARTED:
            return
        outbound = self._outbound(ref._peer)
        if outbound is not None:
            with suppress(NodeUnreachable):
                outbound.put_system(self._wire.stop(ref.address.path))

    async def ask(
        self,
        ref: RemoteRef[Any],
        message: object,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """``await ref.ask(message, timeout)``; see
        [``RemoteRef.ask``][actors.remote.RemoteRef.ask]. ``headers``: the trace
        context its frame carries (telemetry)."""
        if type(timeout) is not float or not 0.0 < timeout < math.inf:
            timeout = _seconds("timeout", timeout)  # an int, or a bad one
        if self._state != _STARTED:
            raise SystemNotRunning("the remote layer is not running")
        ask_id = next(self._ids)
        envelope = self._wire.ask(ref.address.path, ask_id, message)
        peer = ref._peer
        pending = _Pending(peer, self._backend)
        self._asks[ask_id] = pending
        self._depend(peer)
        try:
            outbound = self._outbounds.get(peer) or self._outbound(peer)
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
                    if headers is None:
                        outbound.try_put(envelope)
                    else:
                        outbound.try_put_traced(envelope, headers)
                except MailboxFull:
                    deadline = anyio.current_time() + timeout
                    remaining = 0.0  # unless the put below completes in time
                    with anyio.move_on_after(timeout):
                        if headers is None:
                            await outbound.put(envelope)
                        else:
                            await outbound.put_traced(envelope, headers)
                        remaining = deadline - anyio.current_time()
            if pending.done:
                await anyio.lowlevel.checkpoint()  # every ask is a checkpoint
            elif remaining > 0:
                await self._backend.park_for(
                    pending, remaining, _unpark, _woken_then_cancelled
                )
        except BaseException:
            if pending.answered:
                # Answered, then cancelled before it could take the answer:
                # a late reply, counted as one that came after its ask ended.
                self.late_replies += 1
            raise
        finally:
            del self._asks[ask_id]
            self._undepend(peer)
        if not pending.done:
            raise AskTimeout(f"{ref.address} did not reply within {timeout} s")
        if pending.error is not None:
            raise pending.error
        return pending.value

    def _depend(self, peer: NodeAddress) -> None:
        count = self._asks_per_peer.get(peer, 0)
        self._asks_per_peer[peer] = count + 1
        if not count:
            self._monitor.monitor(peer)

    def _undepend(self, peer: NodeAddress) -> None:
        count = self._asks_per_peer.pop(peer, 1) - 1
        if count:
            self._asks_per_peer[peer] = count
        else:
            # Monitored a while longer: the next ask keeps its detector.
            self._monitor.release(peer)

    async def lookup(
        self, node: str | NodeAddress, path: str, *, timeout: float = 5.0
    ) -> ActorRef[Any]:
        """A ref to the actor at ``path`` (or registered under the name
        ``path``) on ``node``, after it confirmed the actor is there.

        Args:
            node: a node's name (any live incarnation answers) or a node
                incarnation.
            path: an actor's path (``"/user/greeter"``) or a registered name.
            timeout: seconds to wait for the answer.

        Returns:
            A [``RemoteRef``][actors.remote.RemoteRef] (a local ref when
            ``node`` is this node).

        Raises:
            TypeError / ValueError: a bad ``node``, ``path`` or ``timeout``.
            ActorNotFound: the node answered that no such actor lives there.
            NodeUnreachable: nobody listens on that node (at once), or no
                answer within ``timeout``.
            SystemNotRunning: the system is not entered.
        """
        self._running()
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
        _seconds("timeout", timeout)
        client = self._client
        assert client is not None
        ask_id = next(self._ids)
        frame = self._anonymous.frame([self._anonymous.lookup(ask_id, path)])
        try:
            msg = await client.request(subject, frame, timeout=timeout)
        except NoRespondersError:
            raise NodeUnreachable(
                f"no node {node} listens ({subject}): is it running, and in "
                f"system {self.system_name!r} (python -m actors.node --system "
                f"{self.system_name})?"
            ) from None
        except RequestTimeoutError:
            raise NodeUnreachable(
                f"node {node} did not answer a lookup within {timeout} s"
            ) from None
        answer = decode_frame(msg.data, client.max_payload)
        sender = answer.sender
        for envelope in answer.envelopes:
            if type(envelope) is LookupReply and envelope.ask_id == ask_id:
                break
        else:
            raise DecodeError(f"node {node} answered a lookup without a lookup reply")
        if sender is None:
            raise DecodeError(f"node {node} answered a lookup without its address")
        if not envelope.found:
            raise ActorNotFound(f"no actor {path!r} on node {sender}")
        resolved = self._resolve(RefAddress(sender.node, sender.incarnation, path))
        assert isinstance(resolved, ActorRef)
        return resolved

    # -- remote spawn and pools across processes ---------------------------------

    async def spawn(
        self,
        node: str | NodeAddress,
        factory: type[Any] | str,
        *args: Any,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: str = "transient",
        timeout: float = 5.0,
        **kwargs: Any,
    ) -> ActorRef[Any]:
        """Spawn an actor on another node (one running a node agent, as
        ``python -m actors.node`` does) and return its remote ref.

        The node constructs ``factory`` (an Actor subclass, or its path
        ``"pkg.mod:Name"``) as a child of its agent, so it is supervised
        there; watch the ref to learn when it ends. The node hosts only the
        public top-level Actor classes of the modules it was started with
        (``--module``); the arguments travel through the codec.

        Args:
            node: the node's name (any live incarnation) or incarnation.
            factory: the class, or ``"pkg.mod:Name"``.
            *args: the class's positional arguments (registered types, refs).
            name: as for ``ActorSystem.spawn``.
            capacity: as for ``ActorSystem.spawn``.
            drain: as for ``ActorSystem.spawn``.
            restart: as for ``ActorSystem.spawn``.
            timeout: seconds for finding the node and for its answer.
            **kwargs: the class's keyword arguments (through the codec).

        Returns:
            A [``RemoteRef``][actors.remote.RemoteRef] to the new actor.

        Raises:
            TypeError / ValueError: a bad option, or an argument the codec
                cannot encode; on the node: a name taken, a bad capacity.
            SpawnError: the node does not host that class.
            ActorNotFound: the node runs no node agent.
            NodeUnreachable: nobody listens on that node (at once), or no
                answer in time.
            SystemNotRunning: the system is not entered.
        """
        self._running()
        check_spawn_options(name, capacity, drain, restart)
        _seconds("timeout", timeout)
        return await remote_spawn(
            self,
            node,
            factory,
            args,
            kwargs,
            name=name,
            capacity=capacity,
            drain=drain,
            restart=restart,
            timeout=timeout,
        )

    def spawn_pool(
        self,
        factory: type[Any] | str,
        *args: Any,
        nodes: Sequence[str] | None = None,
        processes: int | None = None,
        workers: int = 1,
        prefetch: int = 4,
        capacity: int | None = None,
        worker_capacity: int | None = None,
        name: str | None = None,
        grace: float = 5.0,
        check_interval: float = 5.0,
        **kwargs: Any,
    ) -> RemotePoolRef[Any]:
        """A pool of workers on several nodes behind one ref (see
        [``RemotePoolRef``][actors.remote.RemotePoolRef]), returned at once: members
        join in the background (``await pool.wait_ready()`` waits for them).

        Args:
            factory: an Actor subclass or ``"pkg.mod:Name"``, hosted by the
                nodes (``--module``).
            *args: the workers' positional arguments (through the codec).
            nodes: the names of the nodes to run workers on (each one that
                is, or comes, up gets a member; one that restarts joins
                again).
            processes: instead of ``nodes``: start this many node processes
                on this machine (``python -m actors.node``, hosting the
                factory's module), stopped with the pool or the system.
            workers: workers per node.
            prefetch: jobs per worker a node may hold (its credits); 1 for
                the fairest spread of long jobs, more to batch short ones.
            capacity: messages the pool's queue holds (None: unbounded):
                ``tell`` raises ``MailboxFull``, ``send`` waits beyond it.
            worker_capacity: each worker's mailbox quota (None, or at least
                ``prefetch``: a worker is handed up to ``prefetch`` jobs at once).
            name: the coordinator actor's name (default: made up).
            grace: seconds a started process may take to leave.
            check_interval: seconds between the pool's checks of what each
                member holds: jobs (or their reports) lost on the wire, for
                example across a NATS server restart, are dispatched again.
            **kwargs: the workers' keyword arguments (through the codec).

        Raises:
            TypeError / ValueError: bad arguments (both or neither of
                ``nodes`` and ``processes``, a node named twice or not a
                node name), or an argument the codec cannot encode.
            FrameTooLarge: the workers' arguments do not fit one message.
            OSError: a process could not be started.
            SystemNotRunning: the system is not entered.
        """
        self._running()
        return spawn_remote_pool(
            self,
            factory,
            args,
            kwargs,
            nodes=nodes,
            processes=processes,
            workers=workers,
            prefetch=prefetch,
            capacity=capacity,
            worker_capacity=worker_capacity,
            name=name,
            grace=_seconds("grace", grace),
            check_interval=_seconds("check_interval", check_interval),
        )

    # -- the receivers' side -----------------------------------------------------

    def _bad(self, peer: object, cause: str, error: BaseException) -> None:
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

    def _on_return(self, msg: Msg) -> None:
        """NATS's no-responders status for a frame to a peer: nobody listened
        on the peer's inbox when it arrived. The peer stopped, or it is
        between connections (a broker restart): the frame's asks fail and
        its tells are dead letters, and the peer is monitored until it
        answers a heartbeat or the failure detector declares it down."""
        if msg.status != 503:
            return
        returned = self._subjects.returned_frame(msg.subject)
        if returned is None:
            return
        peer, seq = returned
        if peer in self._gone or self._state != _STARTED:
            return
        outbound = self._outbounds.get(peer)
        if outbound is not None and seq is not None:
            outbound.returned(
                seq,
                NodeUnreachable(
                    f"nobody listened on node {peer} when a frame arrived (it "
                    "stopped, or was between connections)"
                ),
            )
        if peer not in self._suspects:
            self._suspects.add(peer)
            self._depend(peer)

    def _on_frame(self, msg: Msg) -> None:
        client = self._client
        if client is None or not self._accepting or self._state != _STARTED:
            return
        try:
            frame = decode_frame(msg.data, client.max_payload)
        except DecodeError as exc:
            self._bad(msg.reply or msg.subject, "malformed frame", exc)
            return
        sender = frame.sender
        # A program that is not a node gets its answers on the reply subject.
        reply_to = msg.reply if sender is None else None
        for envelope in frame.envelopes:
            try:
                self._handle(envelope, sender, reply_to)
            except Exception as exc:
                self._bad(sender, f"{type(envelope).__name__} not handled", exc)
        if sender is not None:
            reply = msg.reply
            if reply is not None:
                # A numbered frame (see Outbound): its reply subject ends
                # with ".nr.<this node>.<incarnation>.<number>".
                dot = reply.rfind(".")
                if reply.endswith(self._numbered, 0, dot):
                    seq = frame_number(reply[dot + 1 :])
                    if seq is not None:
                        self._received(sender, seq, len(msg.data), len(frame.envelopes))

    def _received(self, peer: NodeAddress, seq: int, size: int, count: int) -> None:
        inbound = self._inbound.get(peer)
        if inbound is None:
            if peer in self._gone:
                return
            inbound = self._inbound[peer] = _Inbound()
        last = inbound.seq
        if seq <= last:
            return
        if seq > last + 1 and last:
            # Frames in between never came (at most once): counted.
            self.lost_frames[peer] = self.lost_frames.get(peer, 0) + seq - last - 1
        inbound.seq = seq
        inbound.unacked += size
        inbound.frames += 1
        inbound.bytes += size
        inbound.envelopes += count
        if inbound.unacked >= ACK_BYTES:
            self._ack(peer, inbound)

    def _ack(self, peer: NodeAddress, inbound: _Inbound) -> None:
        inbound.unacked = 0
        outbound = self._outbound(peer)
        if outbound is not None:
            with suppress(NodeUnreachable):
                outbound.put_urgent(self._wire.ack(inbound.seq))

    def _handle(
        self, envelope: Envelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        kind = type(envelope)
        codec = self.codec
        if kind is Tell:
            assert isinstance(envelope, Tell)
            try:
                message = codec.decode(envelope.tag, envelope.body)
            except DecodeError as exc:
                self._bad(sender, "undecodable message", exc)
                return
            self._deliver(envelope.path, message, sender)
        elif kind is Ask:
            assert isinstance(envelope, Ask)
            self._serve(envelope, sender, reply_to)
        elif kind is Reply or kind is Failure:
            assert isinstance(envelope, Reply | Failure)
            self._answered(envelope, sender)
        elif kind is Heartbeat:
            assert isinstance(envelope, Heartbeat)
            if sender is not None:
                outbound = self._outbound(sender)
                if outbound is not None:
                    outbound.put_urgent(self._wire.heartbeat_ack(envelope.seq))
                    # With an ack of the last frame number, always: an ack
                    # lost on the way must not leave the peer's window full.
                    inbound = self._inbound.get(sender)
                    if inbound is not None and inbound.seq:
                        self._ack(sender, inbound)
        elif kind is HeartbeatAck:
            if sender is not None:
                self._monitor.acked(sender)
                if sender in self._suspects:  # alive after all
                    self._suspects.discard(sender)
                    self._undepend(sender)
        elif kind is Ack:
            assert isinstance(envelope, Ack)
            if sender is not None:
                outbound = self._outbounds.get(sender)
                if outbound is not None:
                    outbound.acked(envelope.seq)
        elif kind is Lookup:
            assert isinstance(envelope, Lookup)
            found = self._find(envelope.path) is not None
            self._answer(
                sender,
                reply_to,
                envelope.ask_id,
                self._wire.lookup_reply(envelope.ask_id, found),
            )
        elif kind is Stop:
            assert isinstance(envelope, Stop)
            ref = self._find(envelope.path)
            if ref is not None:
                ref.stop()
        elif kind is Watch:
            assert isinstance(envelope, Watch)
            if sender is not None:
                self._watched_by(sender, envelope.path)
        elif kind is Unwatch:
            assert isinstance(envelope, Unwatch)
            ref = self._find(envelope.path)
            if sender is not None and ref is not None:
                peers = self._watched.get(ref, {}).get(envelope.path)
                if peers is not None:
                    peers.discard(sender)
        elif kind is Death:
            assert isinstance(envelope, Death)
            if sender is not None:
                self._died(sender, envelope)
        else:  # a lookup reply outside a request
            self._bad(sender, f"unexpected {kind.__name__}", ValueError())

    # -- death watch -------------------------------------------------------------

    def watch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """The runtime's hook for ``context.watch(remote_ref)``: ``watcher``
        gets ``Terminated(ref, reason)`` when the remote actor terminates, or
        ``Terminated(ref, NodeDown)`` when its node is declared down (or nobody
        listens on it any more).

        Raises:
            TypeError: ``ref`` is not a remote ref of this node.
        """
        if not isinstance(ref, RemoteRef) or ref._remote is not self:
            raise TypeError(f"{ref!r} is not a remote ref of this system")
        self._watch(watcher, ref)

    def _watch(self, watcher: object, ref: RemoteRef[Any]) -> None:
        address = ref.address
        peer = ref._peer
        watchers = self._watchers.get(address)
        if watchers is None:
            outbound = None
            if self._state == _STARTED:
                outbound = self._outbound(peer)
            if outbound is None:
                self._notify(watcher, ref, NodeDown(peer, math.inf))
                return
            outbound.put_system(self._wire.watch(address.path))
            watchers = self._watchers[address] = set()
            self._depend(peer)  # heartbeats: a silent node is declared down
        watchers.add(watcher)

    def unwatch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """The runtime's hook for ``context.unwatch(remote_ref)`` (and for a
        watcher that stopped)."""
        if not isinstance(ref, RemoteRef):
            return
        address = ref.address
        watchers = self._watchers.get(address)
        if watchers is None:
            return
        watchers.discard(watcher)
        if not watchers:
            del self._watchers[address]
            self._undepend(ref._peer)
            outbound = self._outbounds.get(ref._peer)
            if outbound is not None:
                with suppress(NodeUnreachable):
                    outbound.put_system(self._wire.unwatch(address.path))

    async def join(self, ref: RemoteRef[Any]) -> object:
        """``await ref.join()``; see
        [``RemoteRef.join``][actors.remote.RemoteRef.join]."""
        joiner = _Joiner()
        self._watch(joiner, ref)
        try:
            await joiner.event.wait()
        finally:
            if not joiner.event.is_set():
                self.unwatch(joiner, ref)
        return joiner.reason

    def _notify(self, watcher: object, ref: RemoteRef[Any], reason: object) -> None:
        if type(watcher) is _Joiner:
            watcher.terminated(reason)
        elif self._host is not None:
            self._host.terminated(watcher, ref, reason)

    def _died(self, sender: NodeAddress, envelope: Death) -> None:
        address = RefAddress(sender.node, sender.incarnation, envelope.path)
        watchers = self._watchers.pop(address, None)
        if watchers is None:
            return
        self._undepend(sender)
        reason: object
        try:
            reason = self.codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            self._bad(sender, "undecodable death reason", exc)
            reason = exc
        ref = RemoteRef[Any](self, address)
        for watcher in watchers:
            self._notify(watcher, ref, reason)

    def _watched_by(self, peer: NodeAddress, path: str) -> None:
        """``peer`` watches the local actor at ``path``."""
        ref = self._find(path)
        if ref is None:
            error = ActorNotFound(f"no actor {path!r} on node {self._address}")
            self._send_death(peer, path, error)
            return
        assert self._host is not None
        alive, reason = self._host.watch_local(ref)
        if not alive:
            self._send_death(peer, path, reason)
            return
        self._watched.setdefault(ref, {}).setdefault(path, set()).add(peer)

    def local_terminated(self, ref: ActorRef[Any], reason: object) -> None:
        """The runtime's hook: a local actor other nodes watch terminated;
        each gets one death notice, after what the actor sent it before."""
        paths = self._watched.pop(ref, None)
        if paths is None or self._state != _STARTED:
            return
        for path, peers in paths.items():
            for peer in peers:
                self._send_death(peer, path, reason)

    def _send_death(self, peer: NodeAddress, path: str, reason: object) -> None:
        outbound = self._outbound(peer)
        if outbound is None:
            return
        try:
            envelope = self._wire.death(path, reason)
        except TypeError:  # a reason the codec does not know
            envelope = self._wire.death(path, RuntimeError(repr(reason)))
        with suppress(NodeUnreachable, FrameTooLarge):
            outbound.put_system(envelope)

    # -- inbound messages --------------------------------------------------------

    def _deliver(self, path: str, message: object, sender: object = None) -> None:
        ref = self._find(path)
        if ref is None:
            address = self._running()
            recipient = RemoteRef[Any](
                self, RefAddress(address.node, address.incarnation, path)
            )
            self._dead_letter(recipient, message, "actor not found", sender)
            return
        try:
            ref.tell(message)
        except MailboxFull:
            self._dead_letter(ref, message, "mailbox full", sender)
        except ActorStopped:
            self._dead_letter(ref, message, "actor stopped", sender)

    def _serve(
        self,
        envelope: Ask,
        sender: NodeAddress | None,
        reply_to: str | None,
        context: object = None,
        span: Any = None,
    ) -> None:
        """Serve an inbound ask. ``context`` and ``span`` (telemetry): the
        trace context the handling joins, and the receive span, ended when
        the answer is sent."""
        ask_id = envelope.ask_id
        try:
            message = self.codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            self._bad(sender, "undecodable message", exc)
            self._fail_serving(sender, reply_to, ask_id, exc, span)
            return
        ref = self._find(envelope.path)
        if ref is None:
            error = ActorNotFound(f"no actor {envelope.path!r} on node {self._address}")
            self._fail_serving(sender, reply_to, ask_id, error, span)
            return
        host = self._host
        tg = self._tg
        assert host is not None and tg is not None
        if self.serve_timeout is None:
            # Answered from the replying actor's task (on_done): no task of
            # our own per ask.
            try:
                host.ask_nowait(
                    ref,
                    message,
                    context=context,
                    on_done=_Served(self, ask_id, sender, reply_to, span),
                )
            except (MailboxFull, ActorStopped, TypeError) as exc:
                self._fail_serving(sender, reply_to, ask_id, exc, span)
                return
            self._serving += 1
            return
        try:
            local = host.ask_nowait(ref, message, context=context)
        except (MailboxFull, ActorStopped, TypeError) as exc:
            self._fail_serving(sender, reply_to, ask_id, exc, span)
            return
        self._serving += 1
        tg.start_soon(self._reply, local, ask_id, sender, reply_to, span)

    def _fail_serving(
        self,
        sender: NodeAddress | None,
        reply_to: str | None,
        ask_id: int,
        error: BaseException,
        span: Any,
    ) -> None:
        self._answer(sender, reply_to, ask_id, self._wire.failure(ask_id, error))
        if span is not None:
            self._telemetry.answered(span, error)

    def _served(
        self,
        local: LocalAsk,
        ask_id: int,
        sender: NodeAddress | None,
        reply_to: str | None,
        span: Any = None,
    ) -> None:
        """An inbound ask answered by its local actor: send the answer."""
        wire = self._wire
        error: BaseException | None = None
        try:
            try:
                value = local.outcome()
            except Exception as exc:
                error = exc
                envelope = wire.failure(ask_id, exc)
            else:
                try:
                    envelope = wire.reply(ask_id, value)
                except TypeError as exc:
                    error = exc
                    envelope = wire.failure(ask_id, exc)
            self._answer(sender, reply_to, ask_id, envelope)
        except Exception:  # in the actor's task: never let it fail there
            logger.exception("answering an ask from %s failed", sender)
        finally:
            self._serving -= 1
            if not self._serving and self._idle is not None:
                self._idle.set()
            if span is not None:
                self._telemetry.answered(span, error)

    async def _reply(
        self,
        local: LocalAsk,
        ask_id: int,
        sender: NodeAddress | None,
        reply_to: str | None,
        span: Any = None,
    ) -> None:
        wire = self._wire
        error: BaseException | None = None
        try:
            try:
                value = await local.result(self.serve_timeout)
            except Exception as exc:
                error = exc
                envelope = wire.failure(ask_id, exc)
            else:
                try:
                    envelope = wire.reply(ask_id, value)
                except TypeError as exc:
                    error = exc
                    envelope = wire.failure(ask_id, exc)
            self._answer(sender, reply_to, ask_id, envelope)
        finally:
            self._serving -= 1
            if not self._serving and self._idle is not None:
                self._idle.set()
            if span is not None:
                self._telemetry.answered(span, error)

    def _answer(
        self,
        sender: NodeAddress | None,
        reply_to: str | None,
        ask_id: int,
        envelope: bytes,
    ) -> None:
        """Send an answer (reply, failure, lookup reply) to the asker: to its
        node in FIFO order, or to the reply subject of a program that is not
        a node."""
        if sender is not None:
            if self._state != _STARTED:
                return
            outbound = self._outbound(sender)
            if outbound is None:
                return  # the asker's node is gone
            try:
                try:
                    if not outbound.put_now(envelope):
                        outbound.put_system(envelope)
                except FrameTooLarge as exc:
                    outbound.put_system(self._wire.failure(ask_id, exc))
            except NodeUnreachable:
                pass
        elif reply_to is not None:
            client = self._client
            if client is None:
                return
            try:
                client.publish_nowait(reply_to, self._wire.frame([envelope]))
            except (NatsError, ValueError) as exc:
                self._bad(reply_to, "answer not sent", exc)

    def _answered(self, envelope: Reply | Failure, sender: NodeAddress | None) -> None:
        pending = self._asks.get(envelope.ask_id)
        if pending is None or pending.done:
            self.late_replies += 1
            return
        if sender != pending.peer:
            self._bad(sender, "answer from another node", ValueError(envelope.ask_id))
            return
        pending.answered = True
        try:
            value = self.codec.decode(envelope.tag, envelope.body)
        except DecodeError as exc:
            pending.fail(exc)
            return
        if type(envelope) is Reply:
            pending.succeed(value)
        elif isinstance(value, BaseException):
            pending.fail(value)
        else:
            pending.fail(RemoteActorError("?", f"a failure carrying {value!r:.200}"))

    def __repr__(self) -> str:
        return f"<Remote {self.system_name}.{self.node_name} {self._state}>"
