"""The errors of ``actors.sharding``, each raised where its docstring says."""

from __future__ import annotations

__all__ = [
    "BufferFull",
    "PlacementConflict",
    "PlacementUnavailable",
    "ShardingError",
    "UnknownEntityType",
]


class ShardingError(Exception):
    """Base class of the errors of ``actors.sharding``."""


class UnknownEntityType(ShardingError, LookupError):
    """``entity_ref`` named an entity type this ``Sharding`` does not know (it
    neither hosts it nor was told its shard count)."""


class BufferFull(ShardingError):
    """A message for an entity could not be held: its shard (no home yet, or
    handed off) or the entity (passivating) already holds ``Entity.buffer``
    messages. ``tell`` raises it; the message is counted as a dead letter
    (``system.dead_letters``) and in ``statistics().dropped``."""


class PlacementConflict(ShardingError):
    """A compare-and-set on the placement store found another revision than
    the one expected: someone else wrote ``key`` first (JetStream KV's "wrong
    last sequence"). Nothing was written.

    Attributes:
        key: the entry's key.
        expected: the revision the writer expected (0: that the key is absent).
        actual: the revision the store holds (0: absent; None: unknown).
    """

    def __init__(self, key: str, expected: int, actual: int | None) -> None:
        self.key = key
        self.expected = expected
        self.actual = actual
        found = "unknown" if actual is None else ("absent" if actual == 0 else actual)
        wanted = "absent" if expected == 0 else f"at revision {expected}"
        super().__init__(
            f"placement entry {key!r}: expected it {wanted}, the store holds "
            f"revision {found} (another writer was first)"
        )

    def __reduce__(self) -> tuple[type, tuple[str, int, int | None]]:
        return (type(self), (self.key, self.expected, self.actual))


class PlacementUnavailable(ShardingError):
    """The placement store did not answer (it is down, or this node is cut off
    from it). Whether a write took effect is unknown; a lease that cannot be
    renewed is given up before it expires."""
