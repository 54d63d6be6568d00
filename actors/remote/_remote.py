"""``Remote``: the remote layer of one actor system (``ActorSystem(remote=...)``).

A façade over the modules that each own one concept (see
docs/architecture.md): ``_local`` (this node's actors, names, dead letters),
``_peers`` (the peer table, outbound buffers, suspects, loss), ``_outbound``
(one peer's buffer, writer and window), ``_inbound`` (where bytes from the
network become actions), ``_asks`` (outgoing asks and lookups), ``_serving``
(inbound asks), ``_watch`` (remote death watch), ``_heartbeat`` (monitoring
and the failure detector's verdicts), ``_telemetry`` (an observer of the hook
points in ``_observer``), and the scale-out pieces in ``scaleout``.

Entering the system starts it ([``Remote.start``][actors.remote.Remote.start]):
it starts an embedded ``nats-server`` when no URL is given, connects,
subscribes the node's three subjects (see docs/remote-wire-format.md) and runs
its tasks in one task of the system's task group: the writer of each peer's
outbound buffer, the heartbeat monitor, and (with a ``serve_timeout``) one
task per inbound ask being served. Leaving the system stops it
([``Remote.stop``][actors.remote.Remote.stop]), after the actors: the answers
of the asks being served go out, the outbound buffers are flushed and closed,
the tasks end, the client closes, the embedded server stops.

Its size: a node's public API, documented in full (half the lines); the code
is the options, start and stop, delegations, and the senders' fast path.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, suppress
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus

from .. import (
    ActorRef,
    SystemNotRunning,
)
from ..extension import RemoteHost
from ..nats import Client, connect, embedded_nats_server
from ._asks import check_seconds
from ._codec import node_codec
from ._errors import NodeUnreachable
from ._failure_detector import PhiAccrualFailureDetector
from ._heartbeat import DEFAULT_HEARTBEAT_INTERVAL
from ._node import NodeAddress, RefAddress, check_token
from ._observer import Observer
from ._outbound import DEFAULT_CAPACITY, DEFAULT_WINDOW, MIN_WINDOW, Outbound
from ._parts import Parts
from ._peers import RemoteStatistics
from ._ref import RemoteRef
from ._subjects import DEFAULT_PREFIX, Subjects
from ._wire import Wire
from .scaleout import (
    RemotePoolRef,
    check_spawn_options,
    remote_spawn,
    spawn_remote_pool,
)

__all__ = ["Remote"]

T = TypeVar("T", bound=type)

#: Seconds ``stop`` waits for the outbound buffers to be written.
DEFAULT_STOP_TIMEOUT = 5.0

_NEW, _STARTED, _STOPPED = "new", "started", "stopped"


def _count(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, not {value}")
    return value


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
            ``tls``, reconnection, ...; see
            [``actors.nats.connect``][actors.nats.connect]).
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
        self.capacity = _count("capacity", capacity, 1)
        self.window = _count("window", window, MIN_WINDOW)
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
        #: outbound buffers (one dict lookup per tell).
        self._wire: Wire | None = None
        self._outbounds: dict[NodeAddress, Outbound] = {}
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

    # -- the node --------------------------------------------------------------

    def _running(self) -> Parts:
        parts = self._parts
        if self._state != _STARTED or parts is None:
            raise SystemNotRunning("the remote layer is not running (enter its system)")
        return parts

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
    def connect_options(self) -> tuple[list[str], dict[str, Any]]:
        """The server URLs and NATS client options of this node (and its processes)."""
        return list(self._urls or [self.url]), dict(self._client_options)

    @property
    def node(self) -> NodeAddress:
        """This node's incarnation (its name and random incarnation id).

        Raises:
            SystemNotRunning: the system is not entered.
        """
        return self._running().address

    @property
    def max_payload(self) -> int:
        """The largest NATS message (frame) the server takes, in bytes (its
        ``max_payload``; it may change on reconnection).

        Raises:
            SystemNotRunning: the system is not entered.
        """
        return self._running().max_payload()

    @property
    def host(self) -> RemoteHost:
        """The system this node joined, as its extension sees it (the
        scale-out layer spawns and watches through it).

        Raises:
            SystemNotRunning: the system is not entered.
        """
        return self._running().host

    @property
    def watching(self) -> int:
        """Remote actors watched from this node now (by actors or joins)."""
        return 0 if self._parts is None else len(self._parts.watch.watchers)

    @property
    def serving(self) -> int:
        """Asks from other nodes being served by local actors now."""
        return 0 if self._parts is None else self._parts.serving.count

    @property
    def asks_in_flight(self) -> int:
        """Asks of remote refs waiting for their answer now."""
        return 0 if self._parts is None else len(self._parts.asks.pending)

    @property
    def bad_input(self) -> dict[tuple[str, str], int]:
        """Bad input from the network, counted per (peer, cause)."""
        return {} if self._parts is None else self._parts.inbound.bad_input

    @property
    def late_replies(self) -> int:
        """Replies that came after their ask had ended (timed out, cancelled)."""
        return 0 if self._parts is None else self._parts.asks.late_replies

    @property
    def lost_frames(self) -> dict[NodeAddress, int]:
        """Frames that never arrived from each peer (NATS core is at most
        once: a broker restart or a broken connection loses what was in
        flight), by the gaps in their numbers."""
        return {} if self._parts is None else self._parts.peers.lost_frames

    @property
    def dead_letters_by_peer(self) -> dict[tuple[str, str], int]:
        """Dead letters the remote layer made, by (peer node name, reason):
        sent to a peer that is gone, or from a peer to no such actor, a full
        mailbox or a stopped actor."""
        parts = self._parts
        return {} if parts is None else parts.local.dead_letters_by_peer

    def statistics(self) -> RemoteStatistics:
        """The node's counters now (copies: a snapshot, stale at once)."""
        parts = self._parts
        if parts is None:
            return RemoteStatistics(0, {}, {}, {})
        client = self._client
        return RemoteStatistics(
            0 if client is None else client.statistics().reconnects,
            parts.peers.statistics(),
            dict(parts.peers.lost_frames),
            dict(parts.local.dead_letters_by_peer),
        )

    def is_reachable(self, peer: NodeAddress) -> bool:
        """Whether ``peer`` is not known to be gone, nor suspected (NATS said
        nobody listens on it, and it has not answered since): best effort."""
        parts = self._parts
        return (
            self._state == _STARTED
            and parts is not None
            and parts.peers.is_reachable(peer)
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
        self._running().local.register(name, ref)

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
        self._outbounds = parts.peers.outbounds
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
        """Leave the system: write what is buffered (within
        ``stop_timeout``), end the tasks, close the client, stop the embedded
        server. Called by ``ActorSystem`` on exit, after the actors."""
        if self._state != _STARTED:
            return
        self._stopping.set()
        await self._done.wait()

    async def _run(self, *, task_status: TaskStatus[None]) -> None:
        parts = self._parts
        assert parts is not None
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
                    "inbox_prefix": parts.subjects.requests,
                    **self._client_options,
                }
                client = await stack.enter_async_context(connect(urls, **options))
                self._client = client
                self._url = client.connected_url or urls[0]
                subjects = parts.subjects
                on_frame = parts.inbound.on_frame
                await client.subscribe(subjects.inbox, callback=on_frame)
                await client.subscribe(subjects.name, subjects.queue, callback=on_frame)
                await client.subscribe(subjects.returns, callback=parts.peers.returned)
                await client.flush()
                async with anyio.create_task_group() as tg:
                    parts.connected(client, tg)
                    task_status.started()
                    await self._stopping.wait()
                    with anyio.move_on_after(self.stop_timeout):
                        await parts.leave()
                        self._state = _STOPPED
                        await parts.flush()
                        await client.close()  # within the stop timeout too
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
        envelope = wire.tell(ref.address.path, message)
        peer = ref.node
        outbound = self._outbounds.get(peer) or self._running().peers.outbound(peer)
        try:
            if outbound is None:
                raise NodeUnreachable(f"node {peer} is gone")
            outbound.try_put(envelope, headers)
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
        envelope = wire.tell(ref.address.path, message)
        peer = ref.node
        outbound = self._outbounds.get(peer) or self._running().peers.outbound(peer)
        if outbound is None:
            self._running().local.dead_letter(ref, message, "node unreachable", peer)
            return
        await outbound.put(envelope, headers)

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

    # -- death watch (the runtime's hooks, RemoteExtension) ------------------------

    def watch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """The runtime's hook for ``context.watch(remote_ref)``: ``watcher``
        gets ``Terminated(ref, reason)`` when the remote actor terminates, or
        ``Terminated(ref, NodeDown)`` when its node is declared down (or nobody
        listens on it any more).

        A pool across processes (a ``RemotePoolRef``) is watched too: its
        watchers get ``Terminated(pool, reason)`` when it stops.

        Raises:
            TypeError: ``ref`` is not a remote ref (or a pool) of this node.
        """
        if isinstance(ref, RemotePoolRef):
            coordinator = ref.coordinator
            if coordinator is None:
                raise TypeError(f"{ref!r} has no coordinator yet")
            self._running().watch.watch_pool(watcher, ref, coordinator)
            return
        if not isinstance(ref, RemoteRef) or ref._remote is not self:
            raise TypeError(f"{ref!r} is not a remote ref of this system")
        self._running().watch.watch(watcher, ref)

    def unwatch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """The runtime's hook for ``context.unwatch(remote_ref)`` (and for a
        watcher that stopped)."""
        parts = self._parts
        if parts is None:
            return
        if isinstance(ref, RemoteRef):
            parts.watch.unwatch(watcher, ref)
        elif isinstance(ref, RemotePoolRef) and ref.coordinator is not None:
            parts.watch.unwatch_pool(watcher, ref.coordinator)

    def local_terminated(self, ref: ActorRef[Any], reason: object) -> None:
        """The runtime's hook: a local actor other nodes watch terminated;
        each gets one death notice, after what the actor sent it before."""
        parts = self._parts
        if parts is not None:
            parts.watch.local_terminated(ref, reason)

    async def join(self, ref: RemoteRef[Any]) -> object:
        """``await ref.join()``; see
        [``RemoteRef.join``][actors.remote.RemoteRef.join]."""
        return await self._running().watch.join(ref)

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
        check_seconds("timeout", timeout)
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
            grace=check_seconds("grace", grace),
            check_interval=check_seconds("check_interval", check_interval),
        )

    def __repr__(self) -> str:
        return f"<Remote {self.system_name}.{self.node_name} {self._state}>"
