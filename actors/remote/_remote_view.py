"""What a node shows of itself: the state every part of ``Remote`` shares
(the started node's parts, its client) and the read-only face over it
(addresses, counters, statistics). A base class of
[``Remote``][actors.remote.Remote], one concept of its façade."""

from __future__ import annotations

from typing import Any, Final

from .. import SystemNotRunning
from ..extension import RemoteHost
from ..nats import Client
from ._node import NodeAddress
from ._parts import Parts
from ._peers import RemoteStatistics

__all__ = ["NEW", "STARTED", "STOPPED", "RemoteView"]

NEW: Final = "new"
STARTED: Final = "started"
STOPPED: Final = "stopped"


class RemoteView:
    """The state of a node and its read-only face (see the module doc)."""

    #: "new", "started" or "stopped".
    _state: str
    #: The started node's parts (None before it starts).
    _parts: Parts | None
    _client: Client | None
    _url: str | None
    #: The server URLs given (None: the embedded server) and client options.
    _urls: list[str] | None
    _client_options: dict[str, Any]

    # -- the node --------------------------------------------------------------

    def _running(self) -> Parts:
        parts = self._parts
        if self._state != STARTED or parts is None:
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
        """The server URLs and NATS client options of this node (its node
        processes connect with them).

        Raises:
            SystemNotRunning: the system is not entered.
        """
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
    def bad_input(self) -> dict[str, int]:
        """Bad input from the network dropped so far, counted per cause (a
        fixed set: ``actors.remote.BAD_INPUT_CAUSES``)."""
        return {} if self._parts is None else dict(self._parts.inbound.bad_input)

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
            self._state == STARTED
            and parts is not None
            and parts.peers.is_reachable(peer)
        )

