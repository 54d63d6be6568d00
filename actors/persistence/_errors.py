"""The errors of ``actors.persistence``, each raised where its docstring says.

Two kinds of write outcome are told apart, because what an actor may do next
depends on it:

* a *rejection* ([``EventsRejected``][actors.persistence.EventsRejected]) is
  certain: nothing of the write was stored (the codec could not encode an
  event, the journal refused its size). The command fails, the state is
  unchanged, the actor goes on.
* a *failure* ([``JournalError``][actors.persistence.JournalError]) is not:
  the write may or may not have been stored (a disk error, a lost
  acknowledgement). The actor fails: its supervisor restarts it, which
  recovers from what the journal really holds, or stops it. It never goes on
  with state the journal may not have.

A [``SequenceConflict``][actors.persistence.SequenceConflict] is neither: the
journal is sure it stored nothing, because another writer of the same
persistence id wrote first; the stale writer stops.
"""

from __future__ import annotations

__all__ = [
    "EventsRejected",
    "JournalClosed",
    "JournalError",
    "PersistenceError",
    "RecoveryFailed",
    "RevisionConflict",
    "SequenceConflict",
]


class PersistenceError(Exception):
    """Base class of the errors of ``actors.persistence``."""


class JournalError(PersistenceError):
    """A journal (or snapshot or state store) operation failed, and a write may
    or may not have been stored (the disk failed, the engine did not answer).
    The original error is the ``__cause__``."""


class JournalClosed(JournalError):
    """The journal was used after ``aclose()``."""


class EventsRejected(PersistenceError):
    """Nothing of a write was stored, for certain: the codec cannot encode one
    of its events (or the state), or the journal refuses it (too large). The
    command that made it fails with this error (the asker's ``ask`` raises
    it); the actor's state is unchanged and it goes on."""


class SequenceConflict(PersistenceError):
    """An append expected the persistence id's highest sequence number to be
    ``expected``, and the journal holds ``actual``: another writer of the same
    persistence id appended first (two live incarnations). Nothing was
    stored; the stale writer stops.

    Attributes:
        persistence_id: whose events.
        expected: the highest sequence number the writer last saw.
        actual: the highest sequence number in the journal (None: unknown).
    """

    def __init__(self, persistence_id: str, expected: int, actual: int | None) -> None:
        self.persistence_id = persistence_id
        self.expected = expected
        self.actual = actual
        found = "unknown" if actual is None else str(actual)
        super().__init__(
            f"{persistence_id!r}: the append expected sequence number {expected} "
            f"to be the highest, the journal holds {found}: another writer of "
            "this persistence id wrote first (only one may be alive)"
        )

    def __reduce__(self) -> tuple[type, tuple[str, int, int | None]]:
        return (type(self), (self.persistence_id, self.expected, self.actual))


class RevisionConflict(PersistenceError):
    """A durable state write expected revision ``expected`` (0: no state), and
    the store holds ``actual``: another writer changed it first. Nothing was
    stored; the stale writer stops.

    Attributes:
        persistence_id: whose state.
        expected: the revision the writer last saw (0: none).
        actual: the revision in the store (0: none; None: unknown).
    """

    def __init__(self, persistence_id: str, expected: int, actual: int | None) -> None:
        self.persistence_id = persistence_id
        self.expected = expected
        self.actual = actual
        found = "unknown" if actual is None else str(actual)
        super().__init__(
            f"{persistence_id!r}: the write expected revision {expected}, the "
            f"store holds {found}: another writer of this persistence id wrote "
            "first (only one may be alive)"
        )

    def __reduce__(self) -> tuple[type, tuple[str, int, int | None]]:
        return (type(self), (self.persistence_id, self.expected, self.actual))


class RecoveryFailed(PersistenceError):
    """A durable actor could not rebuild its state: the journal failed, a
    stored event or snapshot could not be decoded or adapted, the event
    handler raised during replay, the journal's sequence numbers have a gap,
    recovery took longer than ``recovery_timeout`` seconds, or
    ``on_recovery_completed`` raised. The cause is the ``__cause__``. The
    actor fails (its supervisor restarts it, with its backoff, or stops it)
    and never handles a command with a partial state."""
