"""What the scale-out layer needs of a node: the few things of ``Remote``
it uses (a protocol, so this subpackage never imports the façade that
imports it)."""

from __future__ import annotations

from typing import Any, Protocol

from ... import ActorRef
from ...extension import RemoteHost
from .._codec import Codec
from .._node import NodeAddress

__all__ = ["Node"]


class Node(Protocol):
    """A started node (``actors.remote.Remote``)."""

    codec: Codec
    system_name: str
    node_name: str
    prefix: str

    @property
    def node(self) -> NodeAddress:
        """This node's incarnation."""

    @property
    def url(self) -> str:
        """Where other nodes join (the NATS server's URL)."""

    @property
    def connect_options(self) -> tuple[list[str], dict[str, Any]]:
        """The server URLs and NATS client options node processes started
        by this node connect with."""

    @property
    def node_options(self) -> dict[str, int | float]:
        """The options (``Remote``'s arguments) handed to node processes
        started by this node (see ``_handoff.NODE_OPTIONS``)."""

    @property
    def secret_keys(self) -> tuple[bytes, ...]:
        """The cluster secret's keys (empty: none), handed to node
        processes started by this node."""

    @property
    def max_payload(self) -> int:
        """The largest frame, in bytes."""

    @property
    def host(self) -> RemoteHost:
        """The system the node joined."""

    def register(self, name: str, ref: ActorRef[Any]) -> None:
        """Make a local actor reachable by ``name``."""

    async def lookup(
        self, node: str | NodeAddress, path: str, *, timeout: float = 5.0
    ) -> ActorRef[Any]:
        """A ref to the actor at ``path`` on ``node``."""
