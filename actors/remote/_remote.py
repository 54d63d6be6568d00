"""``Remote``: the remote layer of one actor system (``ActorSystem(remote=...)``).

A façade over the modules that each own one concept (see
docs/architecture.md): ``_local`` (this node's actors, names, dead letters),
``_peers`` (the peer table), ``_outbound`` (one peer's buffer and writer),
``_credits`` and ``_shares`` (each remote actor's share), ``_inbound``
(bytes from the network become actions), ``_asks``, ``_serving``, ``_watch``,
``_heartbeat``, ``_telemetry``, ``scaleout``.

Entering the system starts it ([``Remote.start``][actors.remote.Remote.start]):
it starts an embedded ``nats-server`` when no URL is given, connects,
subscribes the node's three subjects (see docs/remote-wire-format.md) and runs
its tasks in one task of the system's task group: the writer of each peer's
outbound buffer, the heartbeat monitor, and (with a ``serve_timeout``) one
task per inbound ask being served. Leaving the system stops it
([``Remote.stop``][actors.remote.Remote.stop]), after the actors: the answers
of the asks being served go out, the outbound buffers are flushed and closed,
the tasks end, the client closes, the embedded server stops.

The façade is made of concept parts, as Akka's actor cell: ``_remote_view``
(the node's state and read-only face), ``_remote_watch`` (the runtime's
death-watch hooks), ``_remote_scaleout`` (remote spawn, pools across
processes); here are the options, start and stop, names, lookups and the
senders' fast path.
"""

from __future__ import annotations

import logging
import secrets
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, suppress
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus

from .. import ActorRef, SystemNotRunning
from ..extension import RemoteHost
from ..nats import Client, connect, embedded_nats_server
from ._asks import check_seconds
from ._codec import node_codec
from ._credits import DEFAULT_SHARE, MAX_SHARE, Credits
from ._errors import NodeUnreachable, TrustedBrokerWarning
from ._failure_detector import PhiAccrualFailureDetector
from ._heartbeat import DEFAULT_HEARTBEAT_INTERVAL
from ._node import NodeAddress, RefAddress, check_token
from ._observer import Observer
from ._outbound import DEFAULT_CAPACITY, DEFAULT_WINDOW, MIN_WINDOW
from ._parts import Parts
from ._peers import (
    DEFAULT_GONE_TTL,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_PEERS,
)
from ._ref import RemoteRef
from ._remote_scaleout import RemoteScaleOut
from ._remote_view import NEW, STARTED, STOPPED
from ._remote_watch import RemoteWatching
from ._secret import check_secret
from ._subjects import DEFAULT_PREFIX, Subjects
from ._wire import Wire

__all__ = ["Remote"]

T = TypeVar("T", bound=type)

logger = logging.getLogger("actors.remote")

#: Seconds ``stop`` waits for the outbound buffers to be written.
DEFAULT_STOP_TIMEOUT = 5.0

_NEW, _STARTED, _STOPPED = NEW, STARTED, STOPPED


def _count(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, not {value}")
    return value


class Remote(RemoteScaleOut, RemoteWatching):
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
        share: the most tells (and sends) from this node to one remote actor
            outstanding (sent and not yet taken by it): ``tell`` raises
            ``MailboxFull`` beyond it, ``send`` waits; and the most this
            node holds of each peer's tells to one of its actors (beyond: dead
            letters). Nodes advertise their share to each other when they
            first talk (a lookup waits for it, up to 1 s): a sender counts
            against the receiver's, and against its own until it heard it.
            Node processes started by ``spawn_pool`` take this node's.
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
            ``tls``, reconnection, ...; see
            [``actors.nats.connect``][actors.nats.connect]).
        server_options: keyword arguments for the embedded server (``port``,
            ``config``, ``args``, ``jetstream=True``, ``store_dir`` for
            JetStream's files, ...: see
            [``actors.nats.NatsServer``][actors.nats.NatsServer]), used when
            ``url`` is None.
        secret: the cluster secret, as Erlang's distribution cookie: a key
            of at least 16 bytes, or a sequence of them (frames are sealed
            with the first, accepted under any: for rotation). Every frame
            then carries an HMAC-SHA256 and a frame that fails is dropped
            unread. None (the default): the trusted-broker mode, for a
            broker only the cluster's nodes can publish on (logged once at
            start). See the Security section of docs/remote.md.
        max_peers: the most peer node incarnations kept at once (and as
            many gone and retired ones): frames from one more are dropped
            and counted, sends to one more are dead letters.
        gone_ttl: seconds a peer incarnation declared down (or retired
            while quiet) is remembered: nothing from it is taken meanwhile,
            and its frame numbers still refuse replays.
        idle_timeout: seconds a quiet peer keeps its outbound buffer and
            writer task.

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
        share: int = DEFAULT_SHARE,
        heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
        failure_detector: Callable[[], PhiAccrualFailureDetector] | None = None,
        serve_timeout: float | None = None,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
        client_options: Mapping[str, Any] | None = None,
        server_options: Mapping[str, Any] | None = None,
        secret: bytes | Sequence[bytes] | None = None,
        max_peers: int = DEFAULT_MAX_PEERS,
        gone_ttl: float = DEFAULT_GONE_TTL,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
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
        self.capacity = _count("capacity", capacity, 1)
        self.window = _count("window", window, MIN_WINDOW)
        self.share = _count("share", share, 1)
        if share > MAX_SHARE:
            raise ValueError(f"share must be at most {MAX_SHARE}, not {share}")
        self.heartbeat_interval = check_seconds(
            "heartbeat_interval", heartbeat_interval
        )
        if failure_detector is not None and not callable(failure_detector):
            raise TypeError("failure_detector must be callable or None")
        self.failure_detector = failure_detector or PhiAccrualFailureDetector
        self.serve_timeout = (
            None
            if serve_timeout is None
            else check_seconds("serve_timeout", serve_timeout)
        )
        self.stop_timeout = check_seconds("stop_timeout", stop_timeout)
        self.secret = check_secret(secret)
        self.max_peers = _count("max_peers", max_peers, 1)
        self.gone_ttl = check_seconds("gone_ttl", gone_ttl)
        self.idle_timeout = check_seconds("idle_timeout", idle_timeout)
        self._client_options = dict(client_options or {})
        self._server_options = dict(server_options or {})
        #: The node's codec: register message classes on it (or with ``types``).
        self.codec = node_codec(self._address_of, self._resolve)
        for entry in types:
            if isinstance(entry, tuple):
                self.register_type(*entry)
            else:
                self.register_type(entry)

        self._state = _NEW
        self._parts: Parts | None = None
        self._client: Client | None = None
        self._url: str | None = None
        #: The senders' fast path: the started node's encoder and its peers'
        #: credits and outbound buffers (one dict lookup per tell).
        self._wire: Wire | None = None
        self._credits: dict[NodeAddress, Credits] = {}
        #: The hook points' observer (the telemetry of a traced system).
        self._observer: Observer | None = None
        self._stopping = anyio.Event()
        self._done = anyio.Event()

    # -- configuration ---------------------------------------------------------

    def register_type(self, cls: T, tag: str | None = None) -> T:
        """Register a message class with the codec (see ``Codec.register``):
        both sides must register it under the same tag. Usable as a decorator.

        Raises:
            TypeError / ValueError: as ``Codec.register``.
        """
        return self.codec.register(cls, tag)

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
        self._running().local.register(name, ref)

    def protect(self, ref: ActorRef[Any]) -> None:
        """Refuse stops of the local actor ``ref`` that come from the network
        (as the guardians and ``/system`` always are): for an actor the
        node's operation depends on, such as the node agent.

        Raises:
            SystemNotRunning: the system is not entered.
        """
        self._running().local.protect(ref)

    def unregister(self, name: str) -> None:
        """Forget a name given to ``register`` (nothing if it is unknown)."""
        parts = self._parts
        if parts is not None:
            parts.local.unregister(name)

    # -- refs <-> addresses (the codec's hooks) ----------------------------------

    def _address_of(self, obj: object) -> RefAddress | None:
        parts = self._parts
        if parts is None:
            return obj.address if isinstance(obj, RemoteRef) else None
        return parts.local.address_of(obj)

    def _resolve(self, address: RefAddress) -> object:
        parts = self._parts
        if parts is None:
            return RemoteRef(self, address)
        return parts.local.resolve(address)

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
        parts = self._parts = Parts(self, host)
        self._wire = parts.wire
        self._credits = parts.peers.credits
        telemetry = host.system.telemetry
        if telemetry is not None:
            # Optional dependency: imported only for a traced system.
            from ._telemetry import RemoteTelemetry

            observer = RemoteTelemetry(telemetry, self)
            self._observer = parts.inbound.observer = observer
        try:
            await host.task_group.start(self._run)
        except BaseException:
            self._state = _STOPPED
            raise

    async def stop(self) -> None:
        """Leave the system within ``stop_timeout``: later frames' tells are
        dead letters ("node stopping"), their asks fail; the inboxes are
        drained (then a frame returns to its sender, who counts it); what is
        buffered is written (the failures of asks whose actors were
        cancelled too); the client closes, the embedded server stops.
        Called by ``ActorSystem`` on exit, after the actors."""
        if self._state != _STARTED:
            return
        self._stopping.set()
        await self._done.wait()

    async def _run(self, *, task_status: TaskStatus[None]) -> None:
        parts = self._parts
        assert parts is not None
        # Shielded once it runs: the actors' cancellation must not cut the
        # client off before stop() (the system's exit always calls it).
        protect = anyio.CancelScope()
        try:
            with protect:
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
                        "inbox_prefix": parts.subjects.requests,
                        **self._client_options,
                    }
                    client = await stack.enter_async_context(connect(urls, **options))
                    self._client = client
                    self._url = client.connected_url or urls[0]
                    await parts.subscribe(client)
                    if self.secret is None:
                        _say_trusted_broker_mode(self)
                    async with anyio.create_task_group() as tg:
                        parts.connected(client, tg)
                        protect.shield = True
                        task_status.started()
                        await self._stopping.wait()
                        with anyio.move_on_after(self.stop_timeout):
                            await parts.leave()
                            self._state = _STOPPED
                            await parts.flush()
                            await client.close()  # within the stop timeout too
                        if not client.is_closed:  # out of time: close at once
                            with anyio.CancelScope() as now:
                                now.cancel()
                                await client.close()
                        tg.cancel_scope.cancel()
        finally:
            self._state = _STOPPED
            parts.stopped()
            self._done.set()

    # -- the senders' side -------------------------------------------------------

    def tell(self, ref: RemoteRef[Any], message: object) -> None:
        """``ref.tell(message)``; see
        [``RemoteRef.tell``][actors.remote.RemoteRef.tell]."""
        wire = self._wire
        if self._state != _STARTED or wire is None:
            raise SystemNotRunning("the remote layer is not running")
        observer = self._observer
        headers = None if observer is None else observer.headers()
        path = ref.address.path
        envelope = wire.tell(path, message)
        peer = ref.node
        credits = self._credits.get(peer) or self._running().peers.credits_of(peer)
        try:
            if credits is None:
                raise NodeUnreachable(f"node {peer} is gone")
            credits.tell(path, envelope, headers)
        except NodeUnreachable:
            self._running().local.dead_letter(ref, message, "node unreachable", peer)

    async def send(self, ref: RemoteRef[Any], message: object) -> None:
        """``await ref.send(message)``; see
        [``RemoteRef.send``][actors.remote.RemoteRef.send]."""
        # tell's lines written out, not shared through a helper: a call
        # saved per message (tests/remote/test_remote_call_counts.py).
        wire = self._wire
        if self._state != _STARTED or wire is None:
            raise SystemNotRunning("the remote layer is not running")
        observer = self._observer
        headers = None if observer is None else observer.headers()
        path = ref.address.path
        envelope = wire.tell(path, message)
        peer = ref.node
        credits = self._credits.get(peer) or self._running().peers.credits_of(peer)
        if credits is None:
            self._running().local.dead_letter(ref, message, "node unreachable", peer)
            return
        await credits.send(path, envelope, headers)

    def stop_actor(self, ref: RemoteRef[Any]) -> None:
        """``ref.stop()``; see [``RemoteRef.stop``][actors.remote.RemoteRef.stop]."""
        parts = self._parts
        if self._state != _STARTED or parts is None:
            return
        outbound = parts.peers.outbound(ref.node)
        if outbound is not None:
            with suppress(NodeUnreachable):
                outbound.put_system(parts.wire.stop(ref.address.path))

    def ask(
        self, ref: RemoteRef[Any], message: object, timeout: float
    ) -> Awaitable[Any]:
        """``await ref.ask(message, timeout)``; see
        [``RemoteRef.ask``][actors.remote.RemoteRef.ask]. (The ask's own
        coroutine is returned, not awaited here: a frame saved per ask.)"""
        parts = self._parts
        if self._state != _STARTED or parts is None:
            raise SystemNotRunning("the remote layer is not running")
        observer = self._observer
        if observer is None:
            return parts.asks.ask(ref, message, timeout)
        return observer.ask(parts.asks.ask, ref, message, timeout)

    # -- finding and spawning actors on other nodes ---------------------------------

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
        parts = self._running()
        return await parts.asks.lookup(node, path, timeout)

    def __repr__(self) -> str:
        return f"<Remote {self.system_name}.{self.node_name} {self._state}>"


def _say_trusted_broker_mode(self: Remote) -> None:
    """The node runs without a cluster secret: logged per node (INFO),
    and on a broker it was given, a ``TrustedBrokerWarning`` (one text
    for every node: once per process under the default filter)."""
    logger.info(
        "node %s.%s runs without a cluster secret (the trusted-broker mode)",
        self.system_name,
        self.node_name,
    )
    if self._urls is not None:  # a private embedded server is trusted itself
        warnings.warn(
            "a node runs without a cluster secret (the trusted-broker mode): "
            "any client that can publish on its system's subjects "
            f"({self.prefix}.<system>.>) can act as a node; give "
            "Remote(secret=...) on a shared broker, or filter "
            "actors.remote.TrustedBrokerWarning where the broker is trusted",
            TrustedBrokerWarning,
            stacklevel=1,
        )
