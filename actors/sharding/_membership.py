"""Membership: the nodes running sharding on one placement store, each an
expiring entry ``members/<node>`` it renews (status, application version),
and the events a node sees as the entries change (Akka's ``MemberUp``,
``MemberLeft``, ``MemberDown``).

A node that leaves gracefully writes its entry once more with the status
``"leaving"`` (then lets it expire): the others see ``MemberLeft``. An entry
that expires while ``"up"`` is a node lost: ``MemberDown``. Events come from
what the store holds, read at every renewal, so every node sees them, each
at its own pace.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Literal, NamedTuple

from .. import Actor, Result
from ._errors import PlacementConflict
from ._store import PlacementStore

__all__ = [
    "Member",
    "MemberDown",
    "MemberEvent",
    "MemberLeft",
    "MemberUp",
    "MembershipActor",
    "member_key",
]

Status = Literal["up", "leaving"]

_TICK: Final = "membership-tick"


def member_key(node: str) -> str:
    """The store key of a node's membership entry."""
    return f"members/{node}"


class Member(NamedTuple):
    """A node running sharding, as the store says."""

    #: its identity (``Sharding(node=...)``), unique per incarnation
    node: str
    #: ``"up"``, or ``"leaving"`` once it began a graceful leave
    status: Status
    #: its application version (``Sharding(version=...)``)
    version: str


class MemberUp(NamedTuple):
    """A node appeared (its entry was found ``"up"``)."""

    member: Member


class MemberLeft(NamedTuple):
    """A node began a graceful leave."""

    member: Member


class MemberDown(NamedTuple):
    """A node's entry expired while it was up: it is lost (crashed, stopped,
    cut off from the store)."""

    member: Member


MemberEvent = MemberUp | MemberLeft | MemberDown


def _decode(node: str, value: bytes) -> Member | None:
    try:
        fields = json.loads(value)
        status, version = fields["status"], fields["version"]
    except (ValueError, KeyError, TypeError):
        return None  # not ours: an entry nobody should have written
    if status not in ("up", "leaving") or type(version) is not str:
        return None
    return Member(node, status, version)


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
    """

    def __init__(
        self,
        store: PlacementStore,
        node: str,
        version: str,
        every: float,
        publish: Callable[[MemberEvent], None],
        view: dict[str, Member],
    ) -> None:
        self.store = store
        self.node = node
        self.version = version
        self.every = every
        self.publish = publish
        self.view = view
        self.revision: int | None = None
        self.status: Status = "up"
        self.busy = False

    def on_start(self) -> None:
        self.context.timers.start_periodic(_TICK, _TICK, self.every)
        self._round()

    def receive(self, message: Any) -> Any:
        if message == _TICK:
            self._round()
        elif message == "leave":
            self.status = "leaving"
            self._round()
        elif type(message) is Result:
            self.busy = False
            if message.ok:
                self._seen(message.value.members)
        else:
            raise TypeError(f"the membership actor got {message!r}")

    def _round(self) -> None:
        if self.busy:
            return
        self.busy = True
        self.context.run(self._write_and_read)

    async def _write_and_read(self) -> _View:
        store, key = self.store, member_key(self.node)
        value = json.dumps({"status": self.status, "version": self.version}).encode()
        try:
            if self.revision is None:
                self.revision = await store.create(key, value)
            else:
                self.revision = await store.update(key, value, self.revision)
        except PlacementConflict:
            self.revision = None  # expired meanwhile: written again next round
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
            if member.status == "up" and before is None:
                self.publish(MemberUp(member))
            elif member.status == "leaving" and (
                before is None or before.status == "up"
            ):
                self.publish(MemberLeft(member))
        for node, before in list(view.items()):
            if node not in members and before.status == "up":
                self.publish(MemberDown(before))
        view.clear()
        view.update(members)
