"""Membership: the nodes running sharding on one placement store, each an
expiring entry ``members/<node>`` it renews (status, application version,
incarnation), and the events a node sees as the entries change (Akka
Cluster's member states and events).

A member's status goes as Akka Cluster's: ``"joining"`` on its first write,
``"up"`` once it read its own entry back (it is in the store for everyone);
on a graceful leave ``"leaving"`` while its shards are handed off, then
``"exiting"`` when they all are, and its entry then expires (``MemberRemoved``
when it is gone: the others had a whole lease time to see it). An entry
that disappears while ``"joining"`` or ``"up"`` is a node lost: it is
reported ``"down"`` (``MemberDown``) and forgotten. Events come from what the
store holds, read at every renewal, so every node sees them, each at its own
pace (a member whose steps all fell between two reads shows only the last).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Literal, NamedTuple

import anyio

from .. import Actor, Result
from ._errors import PlacementConflict, PlacementUnavailable
from ._store import PlacementStore

__all__ = [
    "Member",
    "MemberDown",
    "MemberEvent",
    "MemberExited",
    "MemberJoined",
    "MemberLeft",
    "MemberRemoved",
    "MemberUp",
    "MembershipActor",
    "SetStatus",
    "Status",
    "member_key",
]

Status = Literal["joining", "up", "leaving", "exiting", "down"]

_WRITTEN: Final = frozenset(("joining", "up", "leaving", "exiting"))
_TICK: Final = "membership-tick"


def member_key(node: str) -> str:
    """The store key of a node's membership entry."""
    return f"members/{node}"


class Member(NamedTuple):
    """A node running sharding, as the store says."""

    #: its identity (``Sharding(node=...)``), unique per incarnation
    node: str
    #: ``"joining"``, ``"up"``, ``"leaving"``, ``"exiting"``, or ``"down"``
    #: (in ``MemberDown``: its entry vanished while it was joining or up)
    status: Status
    #: its application version (``Sharding(version=...)``)
    version: str
    #: the incarnation id of its system's remote layer (``actors.remote``),
    #: None when its system is not a node
    incarnation: str | None = None


class MemberJoined(NamedTuple):
    """A node appeared, ``"joining"``."""

    member: Member


class MemberUp(NamedTuple):
    """A node is ``"up"`` (seen so for the first time)."""

    member: Member


class MemberLeft(NamedTuple):
    """A node began a graceful leave (``"leaving"``)."""

    member: Member


class MemberExited(NamedTuple):
    """A leaving node has handed all its shards off (``"exiting"``)."""

    member: Member


class MemberRemoved(NamedTuple):
    """A node that left gracefully is gone from the store."""

    member: Member


class MemberDown(NamedTuple):
    """A node's entry vanished while it was joining or up: it is lost
    (crashed, stopped, cut off from the store); ``member.status`` is
    ``"down"``."""

    member: Member


MemberEvent = (
    MemberJoined | MemberUp | MemberLeft | MemberExited | MemberRemoved | MemberDown
)

#: The event a status seen for the first time makes.
_EVENTS: Final[dict[str, Any]] = {
    "joining": MemberJoined,
    "up": MemberUp,
    "leaving": MemberLeft,
    "exiting": MemberExited,
}
_STEPS: Final[tuple[Status, ...]] = ("joining", "up", "leaving", "exiting")
_ORDER: Final = {status: i for i, status in enumerate(_STEPS)}


def _decode(node: str, value: bytes) -> Member | None:
    try:
        fields = json.loads(value)
        status, version = fields["status"], fields["version"]
        incarnation = fields.get("incarnation")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # not ours: an entry nobody should have written
    if status not in _WRITTEN or type(version) is not str:
        return None
    if incarnation is not None and type(incarnation) is not str:
        return None
    return Member(node, status, version, incarnation)


def encode_member(status: str, version: str, incarnation: str | None) -> bytes:
    """A membership entry's value."""
    fields: dict[str, Any] = {"status": status, "version": version}
    if incarnation is not None:
        fields["incarnation"] = incarnation
    return json.dumps(fields).encode()


class SetStatus(NamedTuple):
    """Sharding -> membership actor: write ``status`` now (``"leaving"``,
    ``"exiting"``), then set ``done`` (also when the store did not answer)."""

    status: Status
    done: anyio.Event


class _View(NamedTuple):
    members: dict[str, Member]


class MembershipActor(Actor[Any]):
    """Renews this node's entry and turns the store's entries into events.

    Args:
        store: the placement store (its entries expire).
        node: this node.
        version: its application version.
        every: seconds between renewals.
        publish: called with each event, in the event loop's thread.
        view: the members last seen, updated in place.
        incarnation: its system's remote incarnation id, or None.
    """

    def __init__(
        self,
        store: PlacementStore,
        node: str,
        version: str,
        every: float,
        publish: Callable[[MemberEvent], None],
        view: dict[str, Member],
        incarnation: str | None = None,
    ) -> None:
        self.store = store
        self.node = node
        self.version = version
        self.every = every
        self.publish = publish
        self.view = view
        self.incarnation = incarnation
        self.revision: int | None = None
        self.status: Status = "joining"
        self.busy = False
        self.again = False
        #: SetStatus requests whose write is under way or next
        self.waiting: list[anyio.Event] = []

    def on_start(self) -> None:
        self.context.timers.start_periodic(_TICK, _TICK, self.every)
        self._round()

    def receive(self, message: Any) -> Any:
        if message == _TICK:
            self._round()
        elif type(message) is SetStatus:
            self.status = message.status
            self.waiting.append(message.done)
            self._round()
        elif type(message) is Result:
            self.busy = False
            if message.ok:
                self._seen(message.value.members)
            if self.again:
                self.again = False
                self._round()
        else:
            raise TypeError(f"the membership actor got {message!r}")

    def _round(self) -> None:
        if self.busy:
            self.again = True  # a status changed meanwhile: write it next
            return
        self.busy = True
        done, self.waiting = self.waiting, []
        self.context.run(lambda: self._write_and_read(self.status, done))

    async def _write_and_read(self, status: Status, done: list[anyio.Event]) -> _View:
        store, key = self.store, member_key(self.node)
        value = encode_member(status, self.version, self.incarnation)
        try:
            try:
                if self.revision is None:
                    self.revision = await store.create(key, value)
                else:
                    self.revision = await store.update(key, value, self.revision)
            except PlacementConflict:
                # Expired meanwhile (or an answer lost): take it over again.
                entry = await store.get(key)
                if entry is None:
                    self.revision = await store.create(key, value)
                else:
                    self.revision = await store.update(key, value, entry.revision)
        except (PlacementConflict, PlacementUnavailable):
            self.revision = None
            for event in done:
                event.set()
            raise
        for event in done:
            event.set()
        members: dict[str, Member] = {}
        for entry in await store.list(member_key("")):
            node = entry.key[len(member_key("")) :]
            member = _decode(node, entry.value)
            if member is not None:
                members[node] = member
        return _View(members)

    def _seen(self, members: dict[str, Member]) -> None:
        view = self.view
        for node, member in members.items():
            before = view.get(node)
            now = _ORDER[member.status]
            if before is None:
                self.publish(_EVENTS[member.status](member))
            elif now > _ORDER[before.status]:
                # Every step since the last read, in order (a node that left
                # between two reads was leaving before it was exiting).
                for status in _STEPS[_ORDER[before.status] + 1 : now + 1]:
                    self.publish(_EVENTS[status](member._replace(status=status)))
        for node, before in list(view.items()):
            if node not in members:
                if before.status in ("joining", "up"):
                    self.publish(MemberDown(before._replace(status="down")))
                else:
                    self.publish(MemberRemoved(before))
        view.clear()
        view.update(members)
        own = members.get(self.node)
        if self.status == "joining" and own is not None:
            self.status = "up"  # in the store for everyone: up
            self.again = True
