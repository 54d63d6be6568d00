"""Remote spawn and pools across processes, as a node offers them: a base
class of [``Remote``][actors.remote.Remote], one concept of its façade
(the work is ``scaleout``'s)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from .. import ActorRef
from ._asks import check_seconds
from ._node import NodeAddress
from ._remote_view import RemoteView
from .scaleout import (
    RemotePoolRef,
    check_spawn_options,
    remote_spawn,
    spawn_remote_pool,
)

__all__ = ["RemoteScaleOut"]


class RemoteScaleOut(RemoteView):
    """Spawning on other nodes and pools across processes (see the module
    doc)."""

    #: Set by ``Remote.__init__``: the cluster secret's keys (None: none).
    secret: tuple[bytes, ...] | None
    #: Set by ``Remote.__init__``: the options handed to node processes.
    capacity: int
    window: int
    share: int
    heartbeat_interval: float
    max_peers: int
    gone_ttl: float
    idle_timeout: float
    stop_timeout: float

    @property
    def secret_keys(self) -> tuple[bytes, ...]:
        """The cluster secret's keys (empty: none), handed to the node
        processes this node starts."""
        return self.secret or ()

    @property
    def node_options(self) -> dict[str, int | float]:
        """This node's options that the node processes it starts take too
        (``Remote``'s arguments of the same names: the share, the buffers'
        capacity and window, the heartbeat interval, the peer table's
        bounds, the stop timeout)."""
        return {
            "capacity": self.capacity,
            "window": self.window,
            "share": self.share,
            "heartbeat_interval": self.heartbeat_interval,
            "max_peers": self.max_peers,
            "gone_ttl": self.gone_ttl,
            "idle_timeout": self.idle_timeout,
            "stop_timeout": self.stop_timeout,
        }

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
            cast(Any, self),  # a Remote (scaleout's Node protocol)
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
            cast(Any, self),  # a Remote (scaleout's Node protocol)
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
