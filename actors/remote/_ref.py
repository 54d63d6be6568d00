"""``RemoteRef``: a ref to an actor on another node, with the local API."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

from .. import ActorRef, ExitReason, StopReason
from ._node import NodeAddress, RefAddress

__all__ = ["Owner", "RemoteRef"]

M = TypeVar("M", contravariant=True)


class Owner(Protocol):
    """What a remote ref calls: the node that made it (``Remote``)."""

    def tell(self, ref: RemoteRef[Any], message: object) -> None:
        """``ref.tell(message)``."""

    async def send(self, ref: RemoteRef[Any], message: object) -> None:
        """``await ref.send(message)``."""

    def ask(
        self, ref: RemoteRef[Any], message: object, timeout: float
    ) -> Awaitable[Any]:
        """``await ref.ask(message, timeout)``: the ask to await."""

    def stop_actor(self, ref: RemoteRef[Any]) -> None:
        """``ref.stop()``."""

    async def join(self, ref: RemoteRef[Any]) -> object:
        """``await ref.join()``."""

    def is_reachable(self, peer: NodeAddress) -> bool:
        """``ref.is_alive``."""


class RemoteRef(ActorRef[M]):
    """A ref to an actor of another node (made by ``system.remote.lookup``,
    or decoded from a message): ``tell``, ``send``, ``ask`` and ``stop`` as a
    local ref, over NATS.

    Delivery is at-most-once and FIFO per sender-receiver node pair. Refs
    compare equal when they name the same actor of the same node incarnation.

    Attributes:
        address: where the actor lives (node, incarnation, path).
        node: the node incarnation the actor lives on (``address``'s).
    """

    __slots__ = ("_remote", "address", "node")

    def __init__(self, remote: Owner, address: RefAddress) -> None:
        # No local cell: every ActorRef method that reads it is overridden,
        # and a local ref compares unequal to this one.
        self._cell = None  # type: ignore[assignment]
        self._remote = remote
        self.address = address
        self.node: NodeAddress = address.node_address

    def tell(self, message: M) -> None:
        """Encode ``message`` and buffer it for the actor's node; never waits.

        Raises:
            TypeError: the codec cannot encode ``message`` (its type is not
                registered), naming the type.
            MailboxFull: the outbound buffer to that node is full.
            FrameTooLarge: the message does not fit one NATS message.
            SystemNotRunning: the remote layer of this system has stopped.

        A message to a node known to be gone is counted as a dead letter here;
        one to a full or missing actor is a dead letter on the receiving node.
        """
        self._remote.tell(self, message)

    async def send(self, message: M) -> None:
        """As [``tell``][actors.remote.RemoteRef.tell], waiting while the
        outbound buffer to the node is full (backpressure across the wire).

        Raises:
            TypeError, FrameTooLarge, SystemNotRunning: as
                [``tell``][actors.remote.RemoteRef.tell].
            NodeUnreachable: the node went away while this call waited.
        """
        await self._remote.send(self, message)

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        """Send ``message`` and wait for the remote handler's reply.

        Args:
            message: a value of a registered type.
            timeout: seconds for the whole round trip (> 0).

        Returns:
            The reply (decoded: it must be of a registered type).

        Raises:
            TypeError: ``message`` cannot be encoded, or ``timeout`` is not a
                number (ValueError: not > 0).
            AskTimeout: no reply within ``timeout`` seconds.
            NodeUnreachable: nobody listens on that node incarnation (raised at
                once, on NATS's no-responders), or it was declared down.
            ActorNotFound: no actor at that path on the node.
            ActorStopped: the actor stopped before replying.
            Exception: the handler's exception, as itself when its type is
                registered with the codec (the remote traceback as a note),
                else as a [``RemoteActorError``][actors.remote.RemoteActorError].
        """
        return await self._remote.ask(self, message, timeout)

    def stop(self) -> None:
        """Ask the remote actor to stop (at-most-once, in order with the
        messages sent to it before); returns at once. Does nothing when its
        node is known to be gone."""
        self._remote.stop_actor(self)

    async def join(self) -> ExitReason:
        """Wait until the remote actor has terminated.

        Returns:
            How it ended (its reason, transported: a ``StopReason`` or its
            exception); an ``ActorNotFound`` when no actor was at its path any
            more when the join reached its node (nodes do not remember the
            actors that ended); a ``NodeDown`` when its node was declared down
            or nobody listens on it any more.
        """
        reason = await self._remote.join(self)
        if isinstance(reason, StopReason | BaseException):
            return reason
        return RuntimeError(f"{self.path} ended with {reason!r}")

    @property
    def is_alive(self) -> bool:
        """Best effort: False once its node is known to be gone (or this
        system's remote layer stopped), True otherwise."""
        return self._remote.is_reachable(self.node)

    @property
    def name(self) -> str:
        """The last element of the actor's path (or its registered name)."""
        return self.address.path.rpartition("/")[2]

    @property
    def path(self) -> str:
        """The actor's path on its node, e.g. ``"/user/greeter"`` (or the name
        it was registered under there)."""
        return self.address.path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoteRef) and other.address == self.address

    def __hash__(self) -> int:
        return hash(self.address)

    def __repr__(self) -> str:
        return f"<RemoteRef {self.address}>"
