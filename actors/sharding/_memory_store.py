"""``MemoryPlacementStore``: a placement store in one process, on a system's
clock (``actors.testing.ManualClock`` in tests: entries expire only when the
test moves time), with a switch per connection that cuts it off from the
store (a partition, for the lease tests).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, final

import anyio

from ._errors import PlacementConflict, PlacementUnavailable
from ._store import PlacementEntry

if TYPE_CHECKING:
    from ..testing import Clock

__all__ = ["MemoryPlacementStore"]


class _Entries:
    """The entries every connection of one store shares."""

    __slots__ = ("entries", "revision")

    def __init__(self) -> None:
        #: key -> (value, revision, written at)
        self.entries: dict[str, tuple[bytes, int, float]] = {}
        self.revision = 0


@final
class MemoryPlacementStore:
    """The entries of a placement store in this process's memory.

    Args:
        ttl: seconds an entry lives after its last write (a finite number
            > 0), or None: for ever.
        clock: the clock expiry is measured on: an ``actors.testing.Clock``
            (give the system's, ``system.clock``, when it has one), or None:
            the event loop's (``anyio.current_time``).

    Raises:
        TypeError: ``ttl`` is not a number or None, or ``clock`` has no
            ``now()``.
        ValueError: ``ttl`` is not finite and > 0.
    """

    __slots__ = ("_clock", "_shared", "_ttl", "operations", "unavailable")

    def __init__(self, ttl: float | None = None, *, clock: Clock | None = None) -> None:
        if ttl is not None:
            if isinstance(ttl, bool) or not isinstance(ttl, int | float):
                raise TypeError(f"ttl is a number of seconds or None, not {ttl!r}")
            if not (math.isfinite(ttl) and ttl > 0):
                raise ValueError(
                    f"ttl must be a finite number of seconds > 0, not {ttl}"
                )
            ttl = float(ttl)
        if clock is not None and not callable(getattr(clock, "now", None)):
            raise TypeError(
                f"clock must be an actors.testing.Clock or None, not {clock!r}"
            )
        self._ttl = ttl
        self._clock = clock
        self._shared = _Entries()
        #: When True, every call raises PlacementUnavailable (this connection
        #: is cut off from the store; other connections are not).
        self.unavailable = False
        #: Calls answered so far (reads and writes) on this connection.
        self.operations = 0

    def connect(self) -> MemoryPlacementStore:
        """Another connection to the same entries, with its own
        ``unavailable`` switch (another node's view of one bucket)."""
        other = MemoryPlacementStore(self._ttl, clock=self._clock)
        other._shared = self._shared
        return other

    @property
    def ttl(self) -> float | None:
        """Seconds an entry lives after its last write (None: for ever)."""
        return self._ttl

    def _now(self) -> float:
        clock = self._clock
        return anyio.current_time() if clock is None else clock.now()

    async def _live(self, key: str) -> tuple[bytes, int, float] | None:
        """``key``'s live entry (an expired one is removed), after the
        checkpoint every store call makes (a network store yields too)."""
        await anyio.lowlevel.checkpoint()
        if self.unavailable:
            raise PlacementUnavailable("this connection is cut off from the store")
        self.operations += 1
        entries = self._shared.entries
        found = entries.get(key)
        ttl = self._ttl
        if found is not None and ttl is not None and self._now() >= found[2] + ttl:
            del entries[key]
            return None
        return found

    def _write(self, key: str, value: bytes) -> int:
        if type(value) is not bytes:
            raise TypeError(f"a placement value is bytes, not {type(value).__name__}")
        shared = self._shared
        shared.revision += 1
        shared.entries[key] = (value, shared.revision, self._now())
        return shared.revision

    async def get(self, key: str) -> PlacementEntry | None:
        """The live entry of ``key``, or None."""
        found = await self._live(key)
        return None if found is None else PlacementEntry(key, found[0], found[1])

    async def create(self, key: str, value: bytes) -> int:
        """Store ``value`` only if ``key`` has no live entry (see
        [``PlacementStore.create``][actors.sharding.PlacementStore.create])."""
        found = await self._live(key)
        if found is not None:
            raise PlacementConflict(key, 0, found[1])
        return self._write(key, value)

    async def update(self, key: str, value: bytes, revision: int) -> int:
        """Store ``value`` only if ``key`` is at ``revision`` (see
        [``PlacementStore.update``][actors.sharding.PlacementStore.update])."""
        found = await self._live(key)
        actual = 0 if found is None else found[1]
        if actual != revision or found is None:
            raise PlacementConflict(key, revision, actual)
        return self._write(key, value)

    async def delete(self, key: str, revision: int | None = None) -> None:
        """Delete ``key``'s entry (see
        [``PlacementStore.delete``][actors.sharding.PlacementStore.delete])."""
        found = await self._live(key)
        if revision is not None:
            actual = 0 if found is None else found[1]
            if actual != revision:
                raise PlacementConflict(key, revision, actual)
        self._shared.entries.pop(key, None)

    async def list(self, prefix: str) -> list[PlacementEntry]:
        """The live entries whose keys start with ``prefix``, by key."""
        await self._live("")
        entries = self._shared.entries
        now = self._now()
        ttl = self._ttl
        found: list[PlacementEntry] = []
        for key in sorted(entries):
            value, revision, written = entries[key]
            if ttl is not None and now >= written + ttl:
                del entries[key]
                continue
            if key.startswith(prefix):
                found.append(PlacementEntry(key, value, revision))
        return found

    def __repr__(self) -> str:
        entries = len(self._shared.entries)
        return f"MemoryPlacementStore(ttl={self._ttl}, entries={entries})"
