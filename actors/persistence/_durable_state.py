"""``DurableStateActor``: the whole state stored by key with a revision
(Akka's DurableStateBehavior), for entities whose history nobody needs.

A command goes to ``on_command(state, command)``, which returns a
[``StateEffect``][actors.persistence.StateEffect]. A persist encodes the new
state (a codec refusal fails the command, state unchanged) and writes it
conditionally on the revision last seen; only then is it the current state,
the side effects run and the ask is answered. A delete removes the stored
state conditionally the same way; the actor goes on from ``empty_state()``.
Refusals and failures follow the event-sourced rules (see
``_event_sourced``): a ``RevisionConflict`` stops the actor, an
``EventsRejected`` fails only the command, anything else fails the actor.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from .. import Actor
from ._codec import Codec
from ._durable import GET_STATE, DurableActor, _machinery
from ._effect import DELETE, NONE, PERSIST, STASH, UNHANDLED, StateEffect
from ._errors import EventsRejected, RevisionConflict
from ._journal import DurableStateStore

__all__ = ["DurableStateActor"]

C = TypeVar("C")
S = TypeVar("S")


class _Slot:
    """An incarnation's view of its stored state (made by recovery)."""

    __slots__ = ("persistence_id", "recovered", "revision", "state", "store")

    def __init__(
        self, persistence_id: str, store: DurableStateStore, state: Any, revision: int
    ) -> None:
        self.persistence_id = persistence_id
        self.store = store
        self.state = state
        self.revision = revision
        self.recovered = True


class DurableStateActor(DurableActor[C, S], Generic[C, S]):
    """An actor whose whole state is stored after each change.

    As [``EventSourcedActor``][actors.persistence.EventSourcedActor], without
    events: declare ``codec`` (the state classes), set
    ``self.persistence_id`` in ``__init__``, and write ``empty_state()`` and
    ``on_command(state, command)``, which returns a
    [``StateEffect``][actors.persistence.StateEffect]
    (``StateEffect.persist(new_state).then_reply(...)``). Recovery reads the
    stored state (or starts from ``empty_state()``) before the first command.

    Class attributes: ``codec`` (required), ``state_store`` (a
    [``DurableStateStore``][actors.persistence.DurableStateStore]; default:
    the system's journal or snapshot store when it is one, as the SQLite and
    memory journals are; it may also be set on the instance),
    ``recovery_timeout`` (seconds, default 30, None: no limit).
    """

    #: Its own state store (None: the system's journal, if it is one).
    state_store: DurableStateStore | None = None

    _persistence: _Slot | None = None

    def empty_state(self) -> S:
        """The state when none is stored."""
        raise NotImplementedError(f"{type(self).__qualname__} defines no empty_state")

    def on_command(self, state: S, command: C) -> StateEffect[S]:
        """Decide what a command does: return a StateEffect."""
        raise NotImplementedError(f"{type(self).__qualname__} defines no on_command")

    @property
    def revision(self) -> int:
        """The stored state's revision (0: none stored), from recovery on."""
        slot = self._persistence
        return 0 if slot is None else slot.revision

    @_machinery
    async def receive(self, message: C) -> Any:
        slot = self._persistence
        if slot is None or not slot.recovered:
            await self._recover_or_fail()
            slot = self._persistence
            assert slot is not None
        if message is GET_STATE:
            return (slot.state, slot.revision, slot.persistence_id)
        effect = self.on_command(slot.state, message)
        if type(effect) is not StateEffect:
            raise TypeError(
                f"{type(self).__qualname__}.on_command returned {effect!r}: it "
                "returns a StateEffect (StateEffect.persist(state), ...)"
            )
        kind = effect._kind
        if kind is PERSIST or kind is DELETE:
            refused = await self._write(slot, effect, message)
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
        return await self._side_effects(effect, slot.state)

    async def _write(
        self, slot: _Slot, effect: StateEffect[Any], command: object
    ) -> Any:
        """Store or delete the state; None, or the ErrorReply of a refusal."""
        store = slot.store
        persistence_id = slot.persistence_id
        try:
            if effect._kind is PERSIST:
                state = effect._values[0]
                manifest, payload = self._codec().encode(state)
                revision = await store.put_state(
                    persistence_id, manifest, payload, slot.revision
                )
            else:
                state = self.empty_state()
                await store.delete_state(persistence_id, slot.revision)
                revision = 0
        except RevisionConflict as exc:
            slot.recovered = False
            return self._stale(exc)
        except EventsRejected as exc:
            return self._rejected(command, exc)
        except BaseException:
            slot.recovered = False  # the write may have happened: recover first
            raise
        slot.state = state
        slot.revision = revision
        return None

    def _stores(self) -> tuple[Any, ...]:
        system = self.context.system
        store = self._store(
            "state_store",
            DurableStateStore,
            (system.journal, system.snapshot_store),
        )
        return (store,)

    async def _recover(
        self, persistence_id: str, codec: Codec, store: DurableStateStore
    ) -> Any:
        self._persistence = None
        stored = await store.get_state(persistence_id)
        if stored is None:
            state, revision = self.empty_state(), 0
        else:
            state = codec.decode(stored.manifest, stored.payload)
            revision = stored.revision
        self._persistence = _Slot(persistence_id, store, state, revision)
        return state
