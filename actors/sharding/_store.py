"""``PlacementStore``: where sharding keeps its shared state (shard leases,
members, remembered entities), with the shape of a JetStream KV bucket so a
bucket drops in: get, create (only if absent), update (compare-and-set on
the revision), delete, list by prefix, and one time to live for every entry
of the store (the bucket's ``max_age``), counted from the entry's last write.

Ownership is decided by the store's compare-and-set and its expiry alone:
no protocol of ours elects anybody, so any node may take over any role whose
entry has expired (a coordinator, a shard).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

__all__ = ["PlacementEntry", "PlacementStore"]


class PlacementEntry(NamedTuple):
    """One live entry of a placement store."""

    #: its key (``/``-separated words)
    key: str
    #: its value
    value: bytes
    #: its revision: > 0, higher for every later write of the store
    revision: int


@runtime_checkable
class PlacementStore(Protocol):
    """A key-value store with compare-and-set and expiry (a JetStream KV
    bucket; [``MemoryPlacementStore``][actors.sharding.MemoryPlacementStore]
    in one process).

    Every method may raise
    [``PlacementUnavailable``][actors.sharding.PlacementUnavailable] when the
    store does not answer (whether a write took effect is then unknown).
    """

    @property
    def ttl(self) -> float | None:
        """Seconds an entry lives after its last write (None: for ever)."""
        ...

    async def get(self, key: str) -> PlacementEntry | None:
        """The live entry of ``key``, or None (never written, deleted or
        expired)."""
        ...

    async def create(self, key: str, value: bytes) -> int:
        """Store ``value`` only if ``key`` has no live entry.

        Returns:
            The new revision.

        Raises:
            PlacementConflict: ``key`` has a live entry; nothing was stored.
        """
        ...

    async def update(self, key: str, value: bytes, revision: int) -> int:
        """Store ``value`` only if ``key``'s live entry is at ``revision``
        (its time to live starts again).

        Returns:
            The new revision.

        Raises:
            PlacementConflict: the entry is at another revision, or absent;
                nothing was stored.
        """
        ...

    async def delete(self, key: str, revision: int | None = None) -> None:
        """Delete ``key``'s entry, only if it is at ``revision`` when given
        (deleting an absent key without a revision does nothing).

        Raises:
            PlacementConflict: ``revision`` is given and the entry is at
                another revision, or absent.
        """
        ...

    async def list(self, prefix: str) -> list[PlacementEntry]:
        """The live entries whose keys start with ``prefix``, by key."""
        ...
