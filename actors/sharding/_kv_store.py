"""``KeyValuePlacementStore``: the placement store on a JetStream KV bucket
(``actors.nats``), so nodes in different processes and machines share
leases, members and remembered entities through a NATS server.

The bucket's ``ttl`` (its stream's ``max_age``) is the lease time: an entry
lives that long after its last write (each update is a new message), and
the server removes it then (a little later at worst, which only delays the
next owner). Compare-and-set is JetStream's expected last subject sequence,
revisions are stream sequences.
"""

from __future__ import annotations

import math
from typing import final

from ..nats import (
    JetStream,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    KeyValueConfig,
    NatsError,
    WrongLastSequenceError,
)
from ._errors import PlacementConflict, PlacementUnavailable
from ._store import PlacementEntry

__all__ = ["KeyValuePlacementStore"]

#: The most keys one ``list`` looks at.
LIST_LIMIT = 100_000


@final
class KeyValuePlacementStore:
    """A [``PlacementStore``][actors.sharding.PlacementStore] on a JetStream KV
    bucket; make one with
    [``open``][actors.sharding.KeyValuePlacementStore.open].

    Args:
        kv: the bucket.
        ttl: its entries' time to live in seconds (the bucket's ``ttl``), or
            None when they never expire (a bucket for remembered entities).

    Raises:
        TypeError: ``kv`` is not a ``KeyValue``.
        ValueError: ``ttl`` is not a finite number > 0 or None.
    """

    __slots__ = ("_ttl", "kv")

    def __init__(self, kv: KeyValue, ttl: float | None) -> None:
        if not isinstance(kv, KeyValue):
            raise TypeError(f"kv is an actors.nats.KeyValue, not {kv!r}")
        if ttl is not None and not (
            isinstance(ttl, int | float) and math.isfinite(ttl) and ttl > 0
        ):
            raise ValueError(
                f"ttl must be a finite number of seconds > 0 or None, not {ttl!r}"
            )
        self.kv = kv
        self._ttl = None if ttl is None else float(ttl)

    @classmethod
    async def open(
        cls, js: JetStream, bucket: str, ttl: float | None, *, replicas: int = 1
    ) -> KeyValuePlacementStore:
        """Create the bucket (or open it, made with the same configuration)
        and a store on it.

        Args:
            js: the JetStream context (``client.jetstream()``).
            bucket: the bucket's name.
            ttl: seconds an entry lives after its last write (the lease
                time), or None: for ever.
            replicas: the bucket's copies in a NATS cluster.

        Raises:
            StreamNameInUseError: the bucket exists with another configuration.
        """
        config = KeyValueConfig(
            bucket, ttl=0.0 if ttl is None else float(ttl), replicas=replicas
        )
        return cls(await js.create_key_value(config), ttl)

    @property
    def ttl(self) -> float | None:
        """Seconds an entry lives after its last write (None: for ever)."""
        return self._ttl

    async def get(self, key: str) -> PlacementEntry | None:
        """The live entry of ``key``, or None."""
        try:
            entry = await self.kv.get(key)
        except KeyNotFoundError:
            return None
        except NatsError as exc:
            raise PlacementUnavailable(f"the KV bucket did not answer: {exc}") from exc
        return PlacementEntry(key, entry.value, entry.revision)

    async def create(self, key: str, value: bytes) -> int:
        """Store ``value`` only if ``key`` has no live entry."""
        try:
            return await self.kv.create(key, value)
        except KeyExistsError:
            raise PlacementConflict(key, 0, None) from None
        except NatsError as exc:
            raise PlacementUnavailable(f"the KV bucket did not answer: {exc}") from exc

    async def update(self, key: str, value: bytes, revision: int) -> int:
        """Store ``value`` only if ``key`` is at ``revision``."""
        try:
            return await self.kv.update(key, value, revision)
        except WrongLastSequenceError:
            raise PlacementConflict(key, revision, None) from None
        except NatsError as exc:
            raise PlacementUnavailable(f"the KV bucket did not answer: {exc}") from exc

    async def delete(self, key: str, revision: int | None = None) -> None:
        """Delete ``key``'s entry, only at ``revision`` when given."""
        try:
            await self.kv.delete(key, revision)
        except WrongLastSequenceError:
            raise PlacementConflict(key, revision or 0, None) from None
        except NatsError as exc:
            raise PlacementUnavailable(f"the KV bucket did not answer: {exc}") from exc

    async def list(self, prefix: str) -> list[PlacementEntry]:
        """The live entries whose keys start with ``prefix``, by key."""
        try:
            entries = await self.kv.entries(">", limit=LIST_LIMIT)
        except NatsError as exc:
            raise PlacementUnavailable(f"the KV bucket did not answer: {exc}") from exc
        found = [
            PlacementEntry(e.key, e.value, e.revision)
            for e in entries
            if e.key.startswith(prefix)
        ]
        return sorted(found)

    def __repr__(self) -> str:
        return f"KeyValuePlacementStore({self.kv!r}, ttl={self._ttl})"
