"""Durable actors: event sourcing and durable state, on a journal.

An [``EventSourcedActor``][actors.persistence.EventSourcedActor] stores the
events its commands cause and rebuilds its state from them when it starts,
restarts or moves; a
[``DurableStateActor``][actors.persistence.DurableStateActor] stores its whole
state by key with a revision. Both write conditionally (one writer per
persistence id) and answer an ``ask`` only after the write is stored.

Journals: [``SqliteJournal``][actors.persistence.SqliteJournal] (one file, the
embedded default), [``JetStreamJournal``][actors.persistence.JetStreamJournal]
(NATS JetStream: a stream per system, snapshots and states in key-value
buckets), [``MemoryJournal``][actors.persistence.MemoryJournal] (tests,
with fault injection); a new engine implements
[``Journal``][actors.persistence.Journal],
[``SnapshotStore``][actors.persistence.SnapshotStore] and
[``DurableStateStore``][actors.persistence.DurableStateStore]. Events go through
a [``Codec``][actors.persistence.Codec] (msgspec, the ``persistence`` extra),
imported only when a codec is made.
"""

from ._codec import Adapter as Adapter
from ._codec import Codec as Codec
from ._codec import DecodeFailed as DecodeFailed
from ._durable_state import DurableStateActor as DurableStateActor
from ._effect import Effect as Effect
from ._effect import StateEffect as StateEffect
from ._errors import EventsRejected as EventsRejected
from ._errors import JournalClosed as JournalClosed
from ._errors import JournalError as JournalError
from ._errors import PersistenceError as PersistenceError
from ._errors import RecoveryFailed as RecoveryFailed
from ._errors import RevisionConflict as RevisionConflict
from ._errors import SequenceConflict as SequenceConflict
from ._event_sourced import EventSourcedActor as EventSourcedActor
from ._jetstream_journal import JetStreamJournal as JetStreamJournal
from ._journal import DurableStateStore as DurableStateStore
from ._journal import Journal as Journal
from ._journal import SnapshotStore as SnapshotStore
from ._memory import Faults as Faults
from ._memory import MemoryJournal as MemoryJournal
from ._records import StoredEvent as StoredEvent
from ._records import StoredSnapshot as StoredSnapshot
from ._records import StoredState as StoredState
from ._snapshots import Snapshots as Snapshots
from ._sqlite import SqliteJournal as SqliteJournal

__all__ = [
    "Adapter",
    "Codec",
    "DecodeFailed",
    "DurableStateActor",
    "DurableStateStore",
    "Effect",
    "EventSourcedActor",
    "EventsRejected",
    "Faults",
    "JetStreamJournal",
    "Journal",
    "JournalClosed",
    "JournalError",
    "MemoryJournal",
    "PersistenceError",
    "RecoveryFailed",
    "RevisionConflict",
    "SequenceConflict",
    "SnapshotStore",
    "Snapshots",
    "SqliteJournal",
    "StateEffect",
    "StoredEvent",
    "StoredSnapshot",
    "StoredState",
]

# Public names report this package as their module (see actors.channel.lowlevel).
from ..channel.lowlevel import publish as _publish

_publish(globals())
