"""``EventSourcedActor``: state as the fold of stored events (Akka Typed's
EventSourcedBehavior).

A command goes to ``on_command(state, command)``, which returns an
[``Effect``][actors.persistence.Effect]. A persist encodes its events (a codec
refusal fails the command: nothing stored, state unchanged), computes the new
state with ``on_event``, appends the events conditionally on the sequence
number last seen, and only then makes the new state current, saves a snapshot
if one is due, runs the side effects and answers the ask. So an ask is
answered only after its events are stored, and the state is never ahead of the
journal:

* a ``SequenceConflict`` (another writer of the persistence id) answers the
  command with it and stops the actor;
* an ``EventsRejected`` from the journal answers the command with it; the
  actor goes on, from a state recovered again (``on_event`` may have changed
  the old state object in place);
* any other failure of the append (``JournalError``, a cancellation) fails the
  actor; its supervisor restarts it (recovery reads what the journal really
  holds) or stops it; if it resumes it instead, the next command recovers
  first.

Recovery (see ``_durable``): the latest snapshot that decodes (a snapshot that
does not is logged and an older one tried), then every event after it, in
pages of ``replay_batch``, each through the codec's adapters and ``on_event``.
A gap in the sequence numbers, events deleted that no snapshot covers, or a
journal behind its snapshot fail the recovery: the actor never handles a
command with a state that is not the fold of its whole log.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, ClassVar, Generic, TypeVar

from .. import Actor
from ._codec import Codec, DecodeFailed
from ._durable import GET_STATE, DurableActor, _machinery, logger
from ._effect import NONE, PERSIST, STASH, UNHANDLED, Effect
from ._errors import EventsRejected, RecoveryFailed, SequenceConflict
from ._journal import Journal, SnapshotStore
from ._records import StoredEvent, StoredSnapshot
from ._snapshots import Snapshots

__all__ = ["EventSourcedActor"]

C = TypeVar("C")
E = TypeVar("E")
S = TypeVar("S")

#: Older snapshots tried when the latest ones do not decode.
_SNAPSHOT_ATTEMPTS = 3


class _Log:
    """An incarnation's view of its persistence id (made by recovery)."""

    __slots__ = (
        "codec",
        "journal",
        "persistence_id",
        "policy",
        "recovered",
        "seq",
        "snapshot_seqs",
        "snapshot_store",
        "state",
        "writer",
    )

    def __init__(
        self,
        persistence_id: str,
        codec: Codec,
        journal: Journal,
        snapshot_store: SnapshotStore | None,
        policy: Snapshots[Any, Any] | None,
        state: Any,
        seq: int,
        snapshot_seq: int,
    ) -> None:
        self.persistence_id = persistence_id
        self.codec = codec
        self.journal = journal
        self.snapshot_store = snapshot_store
        self.policy = policy
        self.state = state
        self.seq = seq
        #: Snapshots known to this incarnation, oldest first (for retention).
        self.snapshot_seqs = [snapshot_seq] if snapshot_seq else []
        #: A random id per incarnation, stored with its events.
        self.writer = secrets.token_hex(8)
        self.recovered = True


class EventSourcedActor(DurableActor[C, S], Generic[C, E, S]):
    """An actor whose state is rebuilt from its stored events.

    Subclass it with the command, event and state types, declare the codec
    of the event and state classes, set ``self.persistence_id`` in
    ``__init__``, and write three methods::

        class Account(EventSourcedActor[Command, Event, Balance]):
            codec = Codec(Deposited, Withdrawn, Balance)

            def __init__(self, name: str) -> None:
                self.persistence_id = f"account-{name}"

            def empty_state(self) -> Balance: ...

            def on_command(
                self, state: Balance, command: Command
            ) -> Effect[Event, Balance]: ...

            def on_event(self, state: Balance, event: Event) -> Balance: ...

    ``on_event`` must be deterministic and have no side effects: it runs
    again on every recovery. ``on_command`` returns an
    [``Effect``][actors.persistence.Effect]; it may read the state but not
    change it (only events change the state). Both are sync.

    Recovery runs before the first command, on every start and restart (see
    the module docstring); hooks: ``on_recovery_completed(state)``,
    ``on_recovery_failed(error)``. A subclass's ``on_start`` runs after
    recovery. A durable actor does not define ``receive``.

    Class attributes:

    * ``codec``: the [``Codec``][actors.persistence.Codec] (required).
    * ``journal``: a [``Journal``][actors.persistence.Journal] of its own
      (default: the system's, ``ActorSystem(journal=...)``); it may also be
      set on the instance in ``__init__``.
    * ``snapshot_store``: likewise (default: the system's ``snapshot_store``,
      else the journal when it keeps snapshots).
    * ``snapshots``: a [``Snapshots``][actors.persistence.Snapshots] rule
      (default None: no snapshots are taken, though recovery still starts
      from the latest one there is).
    * ``recovery_timeout``: seconds recovery may take (default 30; None:
      no limit).
    * ``replay_batch``: events read per journal call on recovery (default
      1000).

    Checked once the factory has returned, inside ``spawn`` (whose errors
    the factory's are): an instance without a valid ``persistence_id``
    (``TypeError`` when missing or not a str, ``ValueError`` when empty,
    longer than 255 characters or unprintable), without a codec, or
    without a journal (``TypeError``, naming ``ActorSystem(journal=...)``)
    makes ``spawn`` raise, and nothing starts (as a factory that raises).
    """

    #: Its own journal (None: the system's).
    journal: Journal | None = None
    #: Its own snapshot store (None: the system's, or the journal).
    snapshot_store: SnapshotStore | None = None
    #: When to take snapshots (None: never).
    snapshots: ClassVar[Snapshots[Any, Any] | None] = None
    #: Events read per journal call during recovery.
    replay_batch: ClassVar[int] = 1000

    _persistence: _Log | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        own = cls.__dict__
        batch = own.get("replay_batch")
        if batch is not None and (
            isinstance(batch, bool) or not isinstance(batch, int) or batch < 1
        ):
            raise ValueError(
                f"{cls.__qualname__}.replay_batch must be an int >= 1, not {batch!r}"
            )
        policy = own.get("snapshots")
        if policy is not None and not isinstance(policy, Snapshots):
            raise TypeError(
                f"{cls.__qualname__}.snapshots must be an actors.persistence."
                f"Snapshots, not {policy!r}"
            )
        super().__init_subclass__(**kwargs)

    def empty_state(self) -> S:
        """The state before the first event."""
        raise NotImplementedError(f"{type(self).__qualname__} defines no empty_state")

    def on_command(self, state: S, command: C) -> Effect[E, S]:
        """Decide what a command does: return an Effect."""
        raise NotImplementedError(f"{type(self).__qualname__} defines no on_command")

    def on_event(self, state: S, event: E) -> S:
        """The state after ``event`` (pure: it runs on recovery too)."""
        raise NotImplementedError(f"{type(self).__qualname__} defines no on_event")

    @property
    def last_sequence_nr(self) -> int:
        """The sequence number of the last event applied (0: none), from
        recovery on."""
        log = self._persistence
        return 0 if log is None else log.seq

    # -- commands -------------------------------------------------------------

    @_machinery
    async def receive(self, message: C) -> Any:
        log = self._persistence
        if log is None or not log.recovered:
            await self._recover_or_fail()
            log = self._persistence
            assert log is not None
        if message is GET_STATE:
            return (log.state, log.seq, log.persistence_id)
        effect = self.on_command(log.state, message)
        if type(effect) is not Effect:
            raise TypeError(
                f"{type(self).__qualname__}.on_command returned {effect!r}: it "
                "returns an Effect (Effect.persist(...), Effect.none(), ...)"
            )
        kind = effect._kind
        if kind is PERSIST:
            refused = await self._persist(log, effect._values, message)
            if refused is not None:
                return refused
        elif kind is UNHANDLED:
            return Actor.receive(self, message)
        elif kind is STASH:
            self.stash()
        else:
            assert kind is NONE
        if not effect._actions:
            return None
        return await self._side_effects(effect, log.state)

    async def _persist(
        self, log: _Log, events: tuple[Any, ...], command: object
    ) -> Any:
        """Store ``events`` and apply them; None, or the ErrorReply of a
        refused write."""
        encode = log.codec.encode
        persistence_id = log.persistence_id
        writer = log.writer
        now = time.time()
        expected = seq = log.seq
        records = []
        try:
            for event in events:
                seq += 1
                manifest, payload = encode(event)
                records.append(
                    StoredEvent(persistence_id, seq, manifest, payload, writer, now)
                )
        except EventsRejected as exc:
            return self._rejected(command, exc)
        policy = log.policy
        on_event = self.on_event
        state = log.state
        due = False
        seq = expected
        try:
            for event in events:
                seq += 1
                state = on_event(state, event)
                if policy is not None and not due:
                    due = policy.due(state, event, seq)
            await log.journal.append(persistence_id, records, expected)
        except SequenceConflict as exc:
            log.recovered = False
            return self._stale(exc)
        except EventsRejected as exc:
            log.recovered = False  # on_event may have changed the state in place
            return self._rejected(command, exc)
        except BaseException:
            log.recovered = False  # the events may be stored: recover first
            raise
        log.state = state
        log.seq = seq
        if due:
            await self._snapshot(log, log.codec)
        return None

    async def _snapshot(self, log: _Log, codec: Codec) -> None:
        """Save a snapshot of the current state, then apply the retention
        rule. A failure is logged: the events are stored, nothing is lost."""
        store = log.snapshot_store
        policy = log.policy
        assert store is not None and policy is not None
        path = self.context.path
        persistence_id = log.persistence_id
        try:
            manifest, payload = codec.encode(log.state)
            await store.save_snapshot(
                StoredSnapshot(persistence_id, log.seq, manifest, payload, time.time())
            )
        except Exception as exc:
            logger.warning("%s: a snapshot at %d failed: %s", path, log.seq, exc)
            return
        seqs = log.snapshot_seqs
        seqs.append(log.seq)
        keep = policy.keep
        try:
            if len(seqs) > keep:
                dropped = seqs[-keep - 1]
                del seqs[:-keep]
                await store.delete_snapshots(persistence_id, dropped)
            if policy.delete_events and len(seqs) == keep:
                await log.journal.delete_events(persistence_id, seqs[0])
        except Exception as exc:
            logger.warning("%s: deleting old snapshots or events failed: %s", path, exc)

    # -- recovery -------------------------------------------------------------

    def _stores(self) -> tuple[Any, ...]:
        system = self.context.system
        journal = self._store("journal", Journal, (system.journal,))
        snapshot_store = self._store(
            "snapshot_store",
            SnapshotStore,
            (system.snapshot_store, journal),
            required=type(self).snapshots is not None,
        )
        return journal, snapshot_store

    async def _recover(
        self,
        persistence_id: str,
        codec: Codec,
        journal: Journal,
        snapshot_store: SnapshotStore | None,
    ) -> Any:
        self._persistence = None
        batch = type(self).replay_batch
        state: Any = None
        seq = 0
        if snapshot_store is not None:
            bound: int | None = None
            for _ in range(_SNAPSHOT_ATTEMPTS):
                snapshot = await snapshot_store.latest_snapshot(persistence_id, bound)
                if snapshot is None:
                    break
                try:
                    state = codec.decode(snapshot.manifest, snapshot.payload)
                except DecodeFailed as exc:
                    logger.warning(
                        "%s: the snapshot of %r at %d cannot be used: %s",
                        self.context.path,
                        persistence_id,
                        snapshot.sequence_nr,
                        exc,
                    )
                    bound = snapshot.sequence_nr - 1
                    continue
                seq = snapshot.sequence_nr
                break
        snapshot_seq = seq
        if not seq:
            state = self.empty_state()
        on_event = self.on_event
        decode = codec.decode
        read_any = False
        while True:
            events = await journal.replay(persistence_id, seq + 1, batch)
            for number, manifest, payload in events:
                if number != seq + 1:
                    if not read_any and number > seq + 1:
                        raise RecoveryFailed(
                            f"events {seq + 1} to {number - 1} are deleted and "
                            "no snapshot covers them"
                        )
                    raise RecoveryFailed(
                        f"the journal returned event {number} after {seq}: its "
                        "sequence numbers have a gap or repeat"
                    )
                read_any = True
                state = on_event(state, decode(manifest, payload))
                seq = number
            if len(events) < batch:
                break
        if not read_any:
            highest = await journal.highest_sequence_nr(persistence_id)
            if highest > seq:
                raise RecoveryFailed(
                    f"events {seq + 1} to {highest} are deleted and no snapshot "
                    "covers them"
                )
            if highest < seq:
                raise RecoveryFailed(
                    f"the journal's highest sequence number is {highest}, below "
                    f"the snapshot at {seq}: the journal lost events"
                )
        self._persistence = _Log(
            persistence_id,
            codec,
            journal,
            snapshot_store,
            type(self).snapshots,
            state,
            seq,
            snapshot_seq,
        )
        return state
