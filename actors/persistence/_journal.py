"""The plugin interfaces: a journal of events, a snapshot store, a state store.

Three small abstract classes, so a new engine is a class with a handful of
async methods, checked by the shared contract tests
(``actors.persistence.testing.tck``) every plugin runs, as Akka's persistence
TCK:

* [``Journal``][actors.persistence.Journal]: ``append`` events with the
  sequence number the writer expects to be the highest (the conditional
  append of the single-writer rule), ``read_events`` from a sequence number,
  ``highest_sequence_nr``, ``delete_events`` up to a sequence number; and
  ``replay``, recovery's lighter read, defined from ``read_events`` unless a
  journal does better.
* [``SnapshotStore``][actors.persistence.SnapshotStore]: ``save_snapshot``,
  ``latest_snapshot`` (at or below a sequence number), ``delete_snapshots`` up
  to a sequence number.
* [``DurableStateStore``][actors.persistence.DurableStateStore]: one state per
  key with a revision: ``get_state``, ``put_state`` and ``delete_state``
  conditional on the revision the writer last saw.

Records are bytes plus a manifest (``_records``): the codec is the actors'
business, never the journal's.

The rules every implementation keeps (the contract tests check each):

* ``append`` is atomic: every event of the call is stored, or none is.
* ``append`` is conditional: it stores the events only if the persistence
  id's highest sequence number is ``expected_sequence_nr`` (and the events
  are numbered ``expected + 1``, ``expected + 2``, ...); otherwise it raises
  ``SequenceConflict`` and stores nothing. Two writers of one persistence id
  can therefore never interleave events: the one that read an older highest
  number fails.
* Outcomes are certain or reported as uncertain: ``SequenceConflict`` and
  ``EventsRejected`` mean nothing was stored; ``JournalError`` means it may
  have been (the actor then recovers from what is there).
* ``read_events`` returns events in ascending order with no gap, starting at
  the first stored event at or above ``from_sequence_nr``.
* ``delete_events`` removes a prefix of the log and never lowers
  ``highest_sequence_nr``: a writer that recovers after deleting every event
  goes on numbering after the last one (Akka's "not reset highestSequenceNr
  after message deletion").
* Revisions of a state increase with every change and are never reused, also
  across a delete; 0 means "no state" (never written, or deleted).
* Every method may be called from any task of the event loop, concurrently;
  none blocks the event loop.

How the JetStream journal (``JetStreamJournal``, ``_jetstream_journal``) maps
this interface onto JetStream without changing it:

* One stream per system (file storage), one subject per persistence id (the
  id escaped into subject tokens: ``.``, ``*``, ``>`` and whitespace are not
  allowed there). An ``append`` is one message holding every event of the call
  (that is what makes it atomic without JetStream's batch publish), with our
  first and last sequence numbers in headers.
* The single-writer rule is ``Nats-Expected-Last-Subject-Sequence``. Its value
  is the *stream* sequence of the subject's last message, not our sequence
  number: the journal keeps, per persistence id, the pair (our highest
  number, its stream sequence) from its last append or read. When
  ``expected_sequence_nr`` matches the pair it sends that stream sequence;
  when it does not (or nothing is cached) it looks the subject's last message
  up (``STREAM.MSG.GET`` with ``last_by_subj``) and compares our number in its
  headers: a mismatch is a ``SequenceConflict`` without publishing, a match
  gives the stream sequence. A stale cache can only make the server refuse
  (error 10071, wrong last sequence), which is a ``SequenceConflict`` too. So
  ``append(persistence_id, events, expected_sequence_nr)`` carries all the
  journal needs; no position token travels through the actor.
* ``Nats-Msg-Id`` identifies an append retried after a lost acknowledgement:
  the id is ``<persistence id>:<writer>:<first sequence number>``, built from
  ``StoredEvent.writer`` (a random id per actor incarnation). The writer must
  be in it, or a stale writer's append of a number another writer already
  stored would be believed stored. nats-server (2.15) checks the expected
  last subject sequence before the duplicate window, so a retry of a stored
  append is refused (10071) rather than acknowledged as a duplicate: the
  journal then looks at the message holding the append's first number, and
  if it has the append's own id the append is stored (a success); otherwise
  it is a ``SequenceConflict``. An acknowledgement still lost after the
  retries is a ``JournalError`` (the write may have been stored).
* ``read_events`` from a sequence number: our numbers increase with the
  stream sequences of the subject, so the first message to read is found by
  a binary search with direct gets (``seq`` + ``next_by_subj``), then direct
  get batches of the subject deliver from there (no consumer to make); the
  events of a message before ``from_sequence_nr`` are skipped.
* ``highest_sequence_nr``: the last message of the subject (``last_by_subj``),
  its last number; 0 when the subject has none.
* ``delete_events``: purge the subject below the stream sequence of the first
  message to keep (``STREAM.PURGE`` with ``filter`` and ``seq``), never
  purging the subject's last message, so ``highest_sequence_nr`` and the
  expected-last-subject-sequence check survive a deletion of every event;
  the deleted-up-to number of a persistence id is kept on a subject of its
  own (rolled up to one message), and reads skip the events at or below it
  that such a kept message holds.
* Snapshots: a KV bucket, key = escaped persistence id and sequence number,
  value = manifest, timestamp and payload; ``latest_snapshot`` lists the
  persistence id's keys (a subject filter) and takes the highest number at or
  below the bound; ``delete_snapshots`` purges the keys' messages up to a
  number.
* Durable state: a KV bucket, key = escaped persistence id. The revision is
  the KV entry's revision (a stream sequence: increasing, never reused, not
  consecutive, which is all ``StoredState.revision`` promises). ``put_state``
  with ``expected_revision`` 0 is a KV *create* (it succeeds on a missing or
  deleted key), otherwise an *update* (``Nats-Expected-Last-Subject-Sequence``
  = the revision); ``delete_state`` is a delete marker conditional on the
  revision. A wrong revision (error 10071) is a ``RevisionConflict``.
* Batching: the appends of many actors are in flight at once, each waiting
  for its own acknowledgement; the client writes every request queued since
  its last write in one socket write (the group commit of the SQLite journal
  is not needed: the server is the one that batches).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import TracebackType
from typing import Self

from ._records import StoredEvent, StoredSnapshot, StoredState, check_persistence_id

__all__ = [
    "DurableStateStore",
    "Journal",
    "SnapshotStore",
    "check_append",
    "check_sequence_nr",
]


def check_sequence_nr(value: object, name: str) -> int:
    """``value`` if it is an int >= 0.

    Raises:
        TypeError: it is not an int (a bool is not one).
        ValueError: it is negative.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def check_append(
    persistence_id: str, events: Sequence[StoredEvent], expected_sequence_nr: int
) -> None:
    """Validate the arguments of ``Journal.append`` (for implementations).

    Raises:
        TypeError, ValueError: a bad persistence id or sequence number, no
            events, an event of another persistence id, or events not
            numbered ``expected_sequence_nr + 1``, ``+ 2``, ...
    """
    check_persistence_id(persistence_id)
    check_sequence_nr(expected_sequence_nr, "expected_sequence_nr")
    if not events:
        raise ValueError("append needs at least one event")
    number = expected_sequence_nr
    for event in events:
        number += 1
        # One test for the usual case (on every persist), the details after.
        if (
            type(event) is not StoredEvent
            or event[1] != number
            or event[0] != persistence_id
        ):
            _bad_event(persistence_id, expected_sequence_nr, event, number)


def _bad_event(
    persistence_id: str, expected_sequence_nr: int, event: object, number: int
) -> None:
    if type(event) is not StoredEvent:
        raise TypeError(f"append takes StoredEvent records, not {event!r}")
    if event.persistence_id != persistence_id:
        raise ValueError(
            f"an event of {event.persistence_id!r} in an append to {persistence_id!r}"
        )
    raise ValueError(
        f"events of one append are numbered {expected_sequence_nr + 1}, "
        f"{expected_sequence_nr + 2}, ...: got {event.sequence_nr} "
        f"where {number} belongs"
    )


class _Closable:
    """``async with`` a store: ``aclose()`` on the way out."""

    async def aclose(self) -> None:
        """Release what the store holds (files, connections), after the
        operations in flight; later operations raise ``JournalClosed``.
        Closing twice does nothing."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class Journal(_Closable, ABC):
    """Where event-sourced actors store their events (see the module
    docstring for the rules every journal keeps)."""

    @abstractmethod
    async def append(
        self,
        persistence_id: str,
        events: Sequence[StoredEvent],
        expected_sequence_nr: int,
    ) -> None:
        """Store ``events`` atomically after ``expected_sequence_nr``.

        Args:
            persistence_id: whose events.
            events: one or more, numbered ``expected_sequence_nr + 1``, ``+ 2``,
                ... with this persistence id.
            expected_sequence_nr: the highest sequence number the writer saw
                (0: none yet).

        Raises:
            SequenceConflict: the highest sequence number is not
                ``expected_sequence_nr`` (nothing was stored).
            EventsRejected: the journal refuses the events (nothing stored).
            JournalError: the write failed; it may have been stored.
            TypeError, ValueError: bad arguments (see ``check_append``).
        """

    @abstractmethod
    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        """The stored events numbered ``from_sequence_nr`` to
        ``to_sequence_nr`` (None: no bound), ascending, at most ``limit``
        (None: no limit) of them.

        Raises:
            JournalError: the read failed.
        """

    async def replay(
        self, persistence_id: str, from_sequence_nr: int, limit: int
    ) -> Sequence[tuple[int, str, bytes]]:
        """Recovery's read: ``(sequence number, manifest, payload)`` of at most
        ``limit`` events from ``from_sequence_nr`` on, ascending. The default
        takes them from ``read_events``; a journal may answer it with less
        work (no writer or timestamp to fetch and wrap).

        Raises:
            JournalError: the read failed.
        """
        events = await self.read_events(persistence_id, from_sequence_nr, None, limit)
        return [(event[1], event[2], event[3]) for event in events]

    @abstractmethod
    async def highest_sequence_nr(self, persistence_id: str) -> int:
        """The highest sequence number ever stored for ``persistence_id`` (0:
        none), also when those events were deleted.

        Raises:
            JournalError: the read failed.
        """

    @abstractmethod
    async def delete_events(self, persistence_id: str, to_sequence_nr: int) -> None:
        """Delete the events numbered up to ``to_sequence_nr`` (all of them
        if it is above the highest); ``highest_sequence_nr`` is unchanged.

        Raises:
            JournalError: the deletion failed (some may be deleted).
        """


class SnapshotStore(_Closable, ABC):
    """Where durable actors keep snapshots of their state."""

    @abstractmethod
    async def save_snapshot(self, snapshot: StoredSnapshot) -> None:
        """Store ``snapshot``, replacing one of the same persistence id and
        sequence number.

        Raises:
            EventsRejected: the store refuses it (nothing stored).
            JournalError: the write failed.
        """

    @abstractmethod
    async def latest_snapshot(
        self, persistence_id: str, max_sequence_nr: int | None = None
    ) -> StoredSnapshot | None:
        """The snapshot with the highest sequence number at or below
        ``max_sequence_nr`` (None: any), or None.

        Raises:
            JournalError: the read failed.
        """

    @abstractmethod
    async def delete_snapshots(self, persistence_id: str, to_sequence_nr: int) -> None:
        """Delete the snapshots numbered up to ``to_sequence_nr``.

        Raises:
            JournalError: the deletion failed.
        """


class DurableStateStore(_Closable, ABC):
    """Where durable state actors keep their whole state, by key, with a
    revision (Akka's DurableStateStore)."""

    @abstractmethod
    async def get_state(self, persistence_id: str) -> StoredState | None:
        """The current state of ``persistence_id``, or None (never written,
        or deleted).

        Raises:
            JournalError: the read failed.
        """

    @abstractmethod
    async def put_state(
        self,
        persistence_id: str,
        manifest: str,
        payload: bytes,
        expected_revision: int,
    ) -> int:
        """Store a new state if the current revision is
        ``expected_revision`` (0: there is no state).

        Returns:
            The new revision.

        Raises:
            RevisionConflict: the current revision is another (nothing stored).
            EventsRejected: the store refuses it (nothing stored).
            JournalError: the write failed; it may have been stored.
        """

    @abstractmethod
    async def delete_state(self, persistence_id: str, expected_revision: int) -> None:
        """Delete the state if its revision is ``expected_revision``.

        Raises:
            RevisionConflict: the current revision is another (nothing deleted).
            JournalError: the deletion failed; it may have happened.
        """
