"""``Cluster``: several actor systems in one process, joined as nodes through
one ``nats-server`` (the ``cluster`` fixture). Needs the ``remote`` extra."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from .._system import ActorSystem
from ..remote import PhiAccrualFailureDetector, Remote
from ._timefactor import dilated

__all__ = ["FAST_HEARTBEAT_INTERVAL", "Cluster", "fast_detector"]

#: Seconds between heartbeats in a test cluster: a killed node is declared
#: down within about a second, not the production defaults' several.
FAST_HEARTBEAT_INTERVAL = 0.05


def fast_detector() -> PhiAccrualFailureDetector:
    """The failure detector of test nodes (``Remote(failure_detector=...)``,
    with ``heartbeat_interval=FAST_HEARTBEAT_INTERVAL``): a node silent for
    about half a second (times the time factor) is declared down, a shorter
    pause of a loaded machine is not."""
    return PhiAccrualFailureDetector(
        first_heartbeat_estimate=FAST_HEARTBEAT_INTERVAL,
        acceptable_heartbeat_pause=dilated(0.5),
        min_std_deviation=FAST_HEARTBEAT_INTERVAL,
    )


class _Node:
    __slots__ = ("done", "leave", "scope", "system")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.leave = anyio.Event()
        self.done = anyio.Event()
        self.system: ActorSystem | None = None


class Cluster:
    """``n`` actor systems, each a node (``Remote``) of one cluster on the NATS
    server at ``url``, entered together: ``async with Cluster(url, 3) as
    cluster``, then ``cluster[i]`` is node ``i``'s system (named
    ``node-<i>``, or ``names[i]``).

    Each node runs in a task of its own. Leaving the block stops every node
    still up gracefully; a failure nobody handled in a node surfaces from the
    block.

    Partitions (cutting two nodes apart while both run) are not offered: the
    nodes share one server. ``kill`` takes a node out instead.

    Args:
        url: the NATS server's URL.
        n: how many nodes (>= 1).
        types: message classes every node's codec registers (as ``Remote``'s
            ``types``).
        remote_options: more keyword arguments for each ``Remote`` (the
            defaults detect a killed node fast: ``heartbeat_interval`` 0.05 s,
            a failure detector that accepts a pause of 0.5 s times the time
            factor).
        system_options: keyword arguments for each ``ActorSystem``.
        names: the nodes' names (default: ``node-0``, ``node-1``, ...).

    Raises:
        ValueError: ``n`` < 1, or ``names`` does not hold ``n`` names.
    """

    __test__ = False

    def __init__(
        self,
        url: str,
        n: int,
        *,
        types: Iterable[type | tuple[type, str]] = (),
        remote_options: Mapping[str, Any] | None = None,
        system_options: Mapping[str, Any] | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"n must be an int, not {n!r}")
        if n < 1:
            raise ValueError(f"n must be at least 1, not {n}")
        if names is None:
            names = [f"node-{i}" for i in range(n)]
        elif isinstance(names, str) or len(names) != n:
            raise ValueError(f"names must be {n} node names, not {names!r}")
        self.names = list(names)
        self.url = url
        #: The cluster's name (``Remote``'s ``system``): unique per Cluster, so
        #: tests sharing a server never see each other's nodes.
        self.name = "c" + secrets.token_hex(6)
        self._n = n
        self._types = list(types)
        self._remote_options: dict[str, Any] = {
            "heartbeat_interval": FAST_HEARTBEAT_INTERVAL,
            "failure_detector": fast_detector,
            **(remote_options or {}),
        }
        self._system_options = dict(system_options or {})
        self._nodes: list[_Node] = []
        self._tg: TaskGroup | None = None

    async def _run(self, node: _Node, i: int, *, task_status: TaskStatus[None]) -> None:
        remote = Remote(
            self.url,
            system=self.name,
            node=self.names[i],
            types=self._types,
            **self._remote_options,
        )
        try:
            with node.scope:
                async with ActorSystem(remote=remote, **self._system_options) as system:
                    node.system = system
                    task_status.started()
                    await node.leave.wait()
        finally:
            node.done.set()

    async def __aenter__(self) -> Cluster:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            for i in range(self._n):
                node = _Node()
                self._nodes.append(node)
                await tg.start(self._run, node, i)
        except BaseException as exc:
            for node in self._nodes:
                node.scope.cancel()
            await tg.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        for node in self._nodes:
            node.leave.set()
        assert self._tg is not None
        return await self._tg.__aexit__(exc_type, exc, tb)

    def __getitem__(self, i: int) -> ActorSystem:
        system = self._nodes[i].system
        assert system is not None
        return system

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[ActorSystem]:
        return (self[i] for i in range(len(self._nodes)))

    def is_up(self, i: int) -> bool:
        """Whether node ``i`` runs (not killed, not left)."""
        return self._nodes[i].system is not None and self[i].running

    def kill(self, i: int) -> None:
        """Take node ``i`` out abruptly: its system's block is cancelled, so its
        actors are cancelled at once (no ``on_stop``), as on a crash, and its
        remote layer leaves. Watchers on the other nodes get a ``Terminated``
        for each actor they watch there, with the reason ``NodeDown`` (or
        ``StopReason.SYSTEM`` when the node's last words got out first);
        asks to it fail (``NodeUnreachable``, ``ActorStopped``).
        ``await cluster.wait_down(i)`` waits until it is gone.

        For a node that vanishes without a word (a ``kill -9``), see
        ``tests/remote/test_remote_processes.py``: that needs a process.
        """
        self._nodes[i].scope.cancel()

    async def wait_down(self, i: int) -> None:
        """Wait until node ``i``'s system has exited."""
        await self._nodes[i].done.wait()

    def __repr__(self) -> str:
        up = sum(1 for i in range(len(self._nodes)) if self.is_up(i))
        return f"<Cluster {self.name}: {up}/{len(self._nodes)} nodes up at {self.url}>"
