"""When an event-sourced actor takes snapshots and what it keeps (Akka's
``RetentionCriteria`` and ``snapshotWhen`` in one value)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Snapshots"]

S = TypeVar("S")
E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Snapshots(Generic[S, E]):
    """An event-sourced actor's snapshot rule (its class attribute
    ``snapshots``).

    After a persist, the actor saves a snapshot of its new state when one of
    its events has a sequence number that is a multiple of ``every``, or when
    ``when(state, event, sequence_nr)`` is true for one of them (each event is
    checked with the state after it). Commands wait until the snapshot is
    saved. After a saved snapshot, the snapshots before the latest ``keep``
    ones are deleted and, with ``delete_events``, the events up to the oldest
    snapshot kept (recovery can then still fall back from a snapshot that
    cannot be read to an older one and the events after it; with ``keep=1``
    there is none to fall back to). A snapshot that fails to save is logged
    and the actor goes on (its events are stored: nothing is lost).

    Args:
        every: take a snapshot every this many events (None: no such rule).
        when: a predicate of the state after an event, the event and its
            sequence number (None: no such rule).
        keep: how many of the latest snapshots to keep (>= 1).
        delete_events: delete the events the kept snapshots make unneeded.

    Raises:
        TypeError: ``every`` or ``keep`` is not an int, ``when`` is not
            callable, ``delete_events`` is not a bool.
        ValueError: ``every`` < 1, ``keep`` < 1, or neither ``every`` nor
            ``when`` is given.
    """

    every: int | None = None
    when: Callable[[S, E, int], bool] | None = None
    keep: int = 1
    delete_events: bool = False

    def __post_init__(self) -> None:
        for name in ("every", "keep"):
            value: Any = getattr(self, name)
            if value is None and name == "every":
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"Snapshots({name}=...) takes an int, not {value!r}")
            if value < 1:
                raise ValueError(f"Snapshots({name}=...) must be >= 1, got {value}")
        if self.when is not None and not callable(self.when):
            raise TypeError(f"Snapshots(when=...) takes a predicate, not {self.when!r}")
        if self.every is None and self.when is None:
            raise ValueError("Snapshots needs every=N, when=predicate, or both")
        if type(self.delete_events) is not bool:
            raise TypeError(
                f"Snapshots(delete_events=...) takes a bool, not {self.delete_events!r}"
            )

    def due(self, state: S, event: E, sequence_nr: int) -> bool:
        """Whether the state after ``event`` (number ``sequence_nr``) calls
        for a snapshot."""
        every = self.every
        if every is not None and sequence_nr % every == 0:
            return True
        when = self.when
        return when is not None and bool(when(state, event, sequence_nr))
