"""``MemoryJournal``: a journal, snapshot store and state store in memory, for
tests, with fault injection (``journal.faults``).

It keeps the rules of every journal (``_journal``) and stores the records as
bytes, so a test with it exercises the codec as production does. Each
operation is a checkpoint (it yields to the event loop once, or sleeps the
configured delay) and then happens at once, atomically. Its contents are
readable synchronously (``events(persistence_id)``, ...). It lives as long as
the object: give the same one to a new system to "restart" a program.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel

from ._errors import (
    EventsRejected,
    JournalClosed,
    JournalError,
    RevisionConflict,
    SequenceConflict,
)
from ._journal import (
    DurableStateStore,
    Journal,
    SnapshotStore,
    check_append,
    check_sequence_nr,
)
from ._records import StoredEvent, StoredSnapshot, StoredState, check_persistence_id

__all__ = ["Faults", "MemoryJournal"]

#: What a planned fault does.
_FAIL = "fail"
_STORE_THEN_FAIL = "store then fail"
_REJECT = "reject"


@dataclass
class Faults:
    """The faults a [``MemoryJournal``][actors.persistence.MemoryJournal]
    injects. A *write* is an ``append``, ``put_state`` or ``delete_state``; a
    *read* is ``read_events``, ``highest_sequence_nr``, ``latest_snapshot``
    or ``get_state``; snapshot writes are ``save_snapshot`` and the
    deletions. Planned faults apply to the next operations of their kind, one
    each, in the order they were planned.

    Attributes:
        write_delay: seconds each write takes (slow writes; 0: a checkpoint).
        read_delay: seconds each read takes.
    """

    write_delay: float = 0.0
    read_delay: float = 0.0
    _writes: deque[tuple[str, BaseException | None]] = field(
        default_factory=deque, init=False, repr=False
    )
    _reads: deque[BaseException | None] = field(
        default_factory=deque, init=False, repr=False
    )
    _snapshots: deque[BaseException | None] = field(
        default_factory=deque, init=False, repr=False
    )

    def fail_next_write(
        self, error: BaseException | None = None, count: int = 1
    ) -> None:
        """The next ``count`` writes store nothing and raise ``error``
        (default: a ``JournalError``): a failure, as a disk error."""
        self._writes.extend([(_FAIL, error)] * _count(count))

    def fail_next_write_after_storing(
        self, error: BaseException | None = None, count: int = 1
    ) -> None:
        """The next ``count`` writes are stored, then raise ``error`` (default:
        a ``JournalError``): an acknowledgement lost after the write took."""
        self._writes.extend([(_STORE_THEN_FAIL, error)] * _count(count))

    def reject_next_write(
        self, error: BaseException | None = None, count: int = 1
    ) -> None:
        """The next ``count`` writes store nothing and raise ``error``
        (default: an ``EventsRejected``): a refusal, as a too large event."""
        self._writes.extend([(_REJECT, error)] * _count(count))

    def fail_next_read(
        self, error: BaseException | None = None, count: int = 1
    ) -> None:
        """The next ``count`` reads raise ``error`` (default: a ``JournalError``)."""
        self._reads.extend([error] * _count(count))

    def fail_next_snapshot(
        self, error: BaseException | None = None, count: int = 1
    ) -> None:
        """The next ``count`` snapshot writes store (or delete) nothing and
        raise ``error`` (default: a ``JournalError``)."""
        self._snapshots.extend([error] * _count(count))

    def clear(self) -> None:
        """Forget every planned fault and delay."""
        self._writes.clear()
        self._reads.clear()
        self._snapshots.clear()
        self.write_delay = self.read_delay = 0.0


def _count(count: int) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, not {count!r}")
    return count


class MemoryJournal(Journal, SnapshotStore, DurableStateStore):
    """Events, snapshots and durable states in memory, with fault injection
    (``faults``, a [``Faults``][actors.persistence.Faults]). For tests; the
    contents are lost with the object."""

    def __init__(self) -> None:
        self.faults = Faults()
        self._events: dict[str, list[StoredEvent]] = {}
        self._highest: dict[str, int] = {}
        self._snapshots: dict[str, dict[int, StoredSnapshot]] = {}
        self._states: dict[str, StoredState] = {}
        self._revisions: dict[str, int] = {}
        self._closed = False
        #: Operations so far, by kind ("append", "read_events", ...).
        self.calls: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"<MemoryJournal of {len(self._events)} persistence ids>"

    # -- inspection ------------------------------------------------------------

    def events(self, persistence_id: str) -> list[StoredEvent]:
        """The stored events of ``persistence_id``, in order (a copy)."""
        return list(self._events.get(persistence_id, ()))

    def snapshots(self, persistence_id: str) -> list[StoredSnapshot]:
        """The stored snapshots of ``persistence_id``, oldest first."""
        stored = self._snapshots.get(persistence_id, {})
        return [stored[seq] for seq in sorted(stored)]

    def state(self, persistence_id: str) -> StoredState | None:
        """The stored durable state of ``persistence_id``, or None."""
        return self._states.get(persistence_id)

    @property
    def persistence_ids(self) -> list[str]:
        """Every persistence id with events, snapshots or a state."""
        return sorted({*self._highest, *self._snapshots, *self._states})

    # -- plumbing ----------------------------------------------------------------

    async def _enter(self, kind: str, delay: float) -> None:
        if self._closed:
            raise JournalClosed(f"{self!r} is closed")
        self.calls[kind] = self.calls.get(kind, 0) + 1
        if delay > 0:
            await anyio.sleep(delay)
        else:
            await anyio.lowlevel.checkpoint()
        if self._closed:
            raise JournalClosed(f"{self!r} is closed")

    async def _write(self, kind: str) -> tuple[str, BaseException | None] | None:
        """Enter a write; the planned fault it meets, if any."""
        await self._enter(kind, self.faults.write_delay)
        planned = self.faults._writes
        if not planned:
            return None
        what, error = planned.popleft()
        if what == _REJECT:
            raise error or EventsRejected(f"{kind} rejected (an injected fault)")
        if what == _FAIL:
            raise error or JournalError(f"{kind} failed (an injected fault)")
        return what, error

    @staticmethod
    def _after(fault: tuple[str, BaseException | None] | None, kind: str) -> None:
        if fault is not None:
            raise fault[1] or JournalError(
                f"{kind} was stored, then failed (an injected fault)"
            )

    async def _read(self, kind: str) -> None:
        await self._enter(kind, self.faults.read_delay)
        planned = self.faults._reads
        if planned:
            error = planned.popleft()
            raise error or JournalError(f"{kind} failed (an injected fault)")

    async def _snapshot_write(self, kind: str) -> None:
        await self._enter(kind, self.faults.write_delay)
        planned = self.faults._snapshots
        if planned:
            error = planned.popleft()
            raise error or JournalError(f"{kind} failed (an injected fault)")

    # -- Journal ---------------------------------------------------------------

    async def append(
        self,
        persistence_id: str,
        events: Sequence[StoredEvent],
        expected_sequence_nr: int,
    ) -> None:
        check_append(persistence_id, events, expected_sequence_nr)
        fault = await self._write("append")
        highest = self._highest.get(persistence_id, 0)
        if highest != expected_sequence_nr:
            raise SequenceConflict(persistence_id, expected_sequence_nr, highest)
        self._events.setdefault(persistence_id, []).extend(events)
        self._highest[persistence_id] = events[-1].sequence_nr
        self._after(fault, "append")

    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        check_persistence_id(persistence_id)
        check_sequence_nr(from_sequence_nr, "from_sequence_nr")
        if limit is not None:
            check_sequence_nr(limit, "limit")
        await self._read("read_events")
        found: list[StoredEvent] = []
        for event in self._events.get(persistence_id, ()):
            if limit is not None and len(found) >= limit:
                break
            if to_sequence_nr is not None and event.sequence_nr > to_sequence_nr:
                break
            if event.sequence_nr >= from_sequence_nr:
                found.append(event)
        return found

    async def highest_sequence_nr(self, persistence_id: str) -> int:
        check_persistence_id(persistence_id)
        await self._read("highest_sequence_nr")
        return self._highest.get(persistence_id, 0)

    async def delete_events(self, persistence_id: str, to_sequence_nr: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(to_sequence_nr, "to_sequence_nr")
        await self._snapshot_write("delete_events")
        events = self._events.get(persistence_id)
        if events:
            events[:] = [e for e in events if e.sequence_nr > to_sequence_nr]

    # -- SnapshotStore ---------------------------------------------------------

    async def save_snapshot(self, snapshot: StoredSnapshot) -> None:
        if type(snapshot) is not StoredSnapshot:
            raise TypeError(f"save_snapshot takes a StoredSnapshot, not {snapshot!r}")
        check_persistence_id(snapshot.persistence_id)
        await self._snapshot_write("save_snapshot")
        self._snapshots.setdefault(snapshot.persistence_id, {})[
            snapshot.sequence_nr
        ] = snapshot

    async def latest_snapshot(
        self, persistence_id: str, max_sequence_nr: int | None = None
    ) -> StoredSnapshot | None:
        check_persistence_id(persistence_id)
        await self._read("latest_snapshot")
        stored = self._snapshots.get(persistence_id, {})
        numbers = [
            seq for seq in stored if max_sequence_nr is None or seq <= max_sequence_nr
        ]
        return stored[max(numbers)] if numbers else None

    async def delete_snapshots(self, persistence_id: str, to_sequence_nr: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(to_sequence_nr, "to_sequence_nr")
        await self._snapshot_write("delete_snapshots")
        stored = self._snapshots.get(persistence_id)
        if stored:
            for seq in [seq for seq in stored if seq <= to_sequence_nr]:
                del stored[seq]

    # -- DurableStateStore -------------------------------------------------------

    async def get_state(self, persistence_id: str) -> StoredState | None:
        check_persistence_id(persistence_id)
        await self._read("get_state")
        return self._states.get(persistence_id)

    def _check_revision(self, persistence_id: str, expected: int) -> int:
        current = self._states.get(persistence_id)
        revision = 0 if current is None else current.revision
        if revision != expected:
            raise RevisionConflict(persistence_id, expected, revision)
        return self._revisions.get(persistence_id, 0)

    async def put_state(
        self,
        persistence_id: str,
        manifest: str,
        payload: bytes,
        expected_revision: int,
    ) -> int:
        check_persistence_id(persistence_id)
        check_sequence_nr(expected_revision, "expected_revision")
        fault = await self._write("put_state")
        revision = self._check_revision(persistence_id, expected_revision) + 1
        self._revisions[persistence_id] = revision
        self._states[persistence_id] = StoredState(
            persistence_id, revision, manifest, bytes(payload)
        )
        self._after(fault, "put_state")
        return revision

    async def delete_state(self, persistence_id: str, expected_revision: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(expected_revision, "expected_revision")
        fault = await self._write("delete_state")
        last = self._check_revision(persistence_id, expected_revision)
        if persistence_id in self._states:
            del self._states[persistence_id]
            self._revisions[persistence_id] = last + 1
        self._after(fault, "delete_state")

    async def aclose(self) -> None:
        """Refuse later operations (``JournalClosed``); the contents stay
        readable through the inspection methods."""
        self._closed = True
