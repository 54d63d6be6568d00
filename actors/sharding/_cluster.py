"""``Cluster``: one node's cluster membership, what ``system.cluster`` answers
(Akka's ``Cluster(system)``: its ``state.members`` and ``subscribe``).

It is made and run by the node's [``Sharding``][actors.sharding.Sharding]:
entering the ``Sharding`` starts it (this node's entry ``members/<node>``
in the placement store, renewed every ``renew_every`` seconds, see
``_membership``) and attaches it to the system; leaving ends it. Events go
to subscribers in order per member, in the event loop's thread: a callback
is called, an actor is told.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final, TypeAlias

import anyio

from .. import ActorRef, ActorSystem, DeadLetter, MailboxFull
from ..extension import attach_cluster, detach_cluster
from ._membership import (
    Member,
    MemberDown,
    MemberEvent,
    MemberExited,
    MemberJoined,
    MemberLeft,
    MembershipActor,
    MemberUp,
    SetStatus,
    Status,
)
from ._store import PlacementStore

__all__ = ["Cluster", "Subscriber"]

logger = logging.getLogger("actors.sharding")

#: Who gets membership events: an actor (told each event) or a callback.
Subscriber: TypeAlias = "ActorRef[MemberEvent] | Callable[[MemberEvent], object]"

#: The event that reports a member in its current status (``initial_state``).
_AS_EVENT: Final[dict[str, Any]] = {
    "joining": MemberJoined,
    "up": MemberUp,
    "leaving": MemberLeft,
    "exiting": MemberExited,
}


class Cluster:
    """This node's view of the cluster's membership (``system.cluster``, or
    ``Cluster.of(system)``), made by its ``Sharding``.

    A member's status goes ``"joining"`` -> ``"up"`` -> (graceful leave)
    ``"leaving"`` -> ``"exiting"``, then its entry expires
    (``MemberRemoved``); an entry that vanishes while ``"joining"`` or
    ``"up"`` is a node lost (``MemberDown``), as Akka Cluster's member
    states. A node a peer declared down (its failure detector) sees its own
    ``MemberDown`` too, then rejoins as a new incarnation (see
    ``Sharding``'s ``rejoin``).
    """

    def __init__(
        self,
        system: ActorSystem[Any],
        store: PlacementStore,
        node: str,
        version: str,
        renew_every: float,
    ) -> None:
        self._system = system
        self._store = store
        self._node = node
        self._version = version
        self._renew_every = renew_every
        self._members: dict[str, Member] = {}
        self._subscribers: list[Subscriber] = []
        self._membership: ActorRef[Any] | None = None
        self._incarnation: str | None = None
        self._downed = anyio.Event()

    @classmethod
    def of(cls, system: ActorSystem[Any]) -> Cluster:
        """The cluster membership running on ``system`` (``system.cluster``).

        Raises:
            ClusterNotStarted: none runs there (no ``Sharding`` entered, or it
                has left).
        """
        return system.cluster

    @property
    def node(self) -> str:
        """This node's identity in the store (``Sharding(node=...)``)."""
        return self._node

    @property
    def version(self) -> str:
        """This node's application version (``Sharding(version=...)``)."""
        return self._version

    @property
    def members(self) -> list[Member]:
        """The members as last read from the store (this node included once
        its entry was read back), by node; each read every ``renew_every``
        seconds."""
        return [self._members[node] for node in sorted(self._members)]

    @property
    def self_member(self) -> Member | None:
        """This node as the store last said (None before its entry was read
        back, or once it was declared down)."""
        return self._members.get(self._node)

    @property
    def is_downed(self) -> bool:
        """Whether a peer declared this incarnation down (it hosts nothing
        more; see ``wait_downed``)."""
        return self._downed.is_set()

    async def wait_downed(self) -> None:
        """Return once a peer declared this node's incarnation down (its
        failure detector lost it: a pause, a partition). A checkpoint."""
        await self._downed.wait()

    def subscribe(
        self, subscriber: Subscriber, *, initial_state: bool = False
    ) -> Callable[[], None]:
        """Send every membership event this node sees from now on to
        ``subscriber``, in order per member
        ([``MemberJoined``][actors.sharding.MemberJoined],
        [``MemberUp``][actors.sharding.MemberUp],
        [``MemberLeft``][actors.sharding.MemberLeft],
        [``MemberExited``][actors.sharding.MemberExited],
        [``MemberRemoved``][actors.sharding.MemberRemoved],
        [``MemberDown``][actors.sharding.MemberDown]), in the event loop's
        thread: an actor ref is told each event (a full mailbox makes it a
        dead letter, counted; a stopped actor's subscription ends), a callback
        is called with it (an exception it raises is logged, not raised).
        Akka's ``cluster.subscribe(ref, ...)``.

        Args:
            subscriber: an ``ActorRef`` or a callable taking the event.
            initial_state: first send one event per current member for its
                status now (``MemberUp`` for an ``"up"`` member; Akka's
                ``InitialStateAsEvents``).

        Returns:
            A function that unsubscribes it (as ``unsubscribe``).

        Raises:
            TypeError: ``subscriber`` is neither an actor ref nor callable.
        """
        if not isinstance(subscriber, ActorRef) and not callable(subscriber):
            raise TypeError(
                f"a membership subscriber is an ActorRef or a callable, not "
                f"{subscriber!r}"
            )
        self._subscribers.append(subscriber)
        if initial_state:
            for member in self.members:
                self._deliver(subscriber, _AS_EVENT[member.status](member))

        def unsubscribe() -> None:
            self.unsubscribe(subscriber)

        return unsubscribe

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """``subscriber`` gets no more events (nothing if it had none)."""
        with contextlib.suppress(ValueError):
            self._subscribers.remove(subscriber)

    def __repr__(self) -> str:
        return f"<Cluster node={self._node!r} members={len(self._members)}>"

    # -- run by Sharding -------------------------------------------------------

    def _start(self, incarnation: str | None) -> None:
        """Spawn the membership actor, attach to the system."""
        self._incarnation = incarnation
        self._membership = self._system.spawn(
            MembershipActor,
            self._store,
            self._node,
            self._version,
            self._renew_every,
            self._publish,
            self._members,
            incarnation,
            name=f"sharding-members-{self._node}",
        )
        attach_cluster(self._system, self)

    async def _set_status(self, status: Status) -> None:
        """Write this node's entry with ``status`` (the others see
        ``MemberLeft``, ``MemberExited``); waits at most a renewal interval
        (the store may be cut off)."""
        membership = self._membership
        if membership is None or not membership.is_alive:
            return
        done = anyio.Event()
        membership.tell(SetStatus(status, done))
        with anyio.move_on_after(self._renew_every):
            await done.wait()

    async def _stop(self) -> None:
        """Stop the membership actor (its entry expires), detach."""
        detach_cluster(self._system, self)
        membership, self._membership = self._membership, None
        if membership is not None:
            membership.stop()
            await membership.join()

    def _declared_down(self) -> None:
        """A peer declared this incarnation down: subscribers see its
        ``MemberDown``, ``wait_downed`` returns (once)."""
        if self._downed.is_set():
            return
        self._downed.set()
        membership = self._membership
        if membership is not None:
            membership.stop()  # its entry expires: the peers see MemberDown
        member = self._members.pop(self._node, None)
        if member is None:
            member = Member(self._node, "up", self._version, self._incarnation)
        self._publish(MemberDown(member._replace(status="down")))

    def _publish(self, event: MemberEvent) -> None:
        for subscriber in list(self._subscribers):
            self._deliver(subscriber, event)

    def _deliver(self, subscriber: Subscriber, event: MemberEvent) -> None:
        if isinstance(subscriber, ActorRef):
            if not subscriber.is_alive:
                self.unsubscribe(subscriber)  # stopped: its subscription ends
                return
            try:
                subscriber.tell(event)
            except MailboxFull:
                self._system.dead_letters.publish(
                    DeadLetter(subscriber, event, "mailbox full")
                )
            return
        try:
            subscriber(event)
        except Exception:
            logger.exception("membership subscriber %r failed on %r", subscriber, event)
