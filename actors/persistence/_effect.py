"""Effects: what a durable actor's command handler returns (Akka Typed's
``Effect``), as data, so the actor (or a test) decides what happens.

An effect is a primary effect (persist events, persist or delete a state,
nothing, unhandled, stash) followed by side effects that run, in the order they
were chained, after the primary effect is done: after the events are stored and
applied for a persist. ``then_reply(fn)`` makes the reply to an ``ask``
``fn(state)``, with the state after the events; ``then_run(fn)`` calls
``fn(state)`` (sync or async); ``then_stop()`` stops the actor;
``then_unstash_all()`` puts the stashed commands back. Effects are immutable:
each ``then_*`` returns a new one, so a module-level ``Effect.none()`` can be
shared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Generic, Self, TypeVar

__all__ = ["Effect", "StateEffect"]

# Covariant: an Effect[Deposited, Any] is an Effect[Deposited | Withdrew,
# Balance] (the state appears only in the argument of a callback argument).
E = TypeVar("E", covariant=True)
S = TypeVar("S", covariant=True)
E2 = TypeVar("E2")
S2 = TypeVar("S2")

#: Primary effects.
PERSIST: Final = "persist"
NONE: Final = "none"
UNHANDLED: Final = "unhandled"
STASH: Final = "stash"
DELETE: Final = "delete"

#: Side effects: (kind, function or value).
RUN: Final = "run"
REPLY: Final = "reply"
REPLY_VALUE: Final = "reply value"
STOP: Final = "stop"
UNSTASH_ALL: Final = "unstash all"


class _Effect(Generic[S]):
    """The side effects every effect chains."""

    __slots__ = ("_actions", "_kind", "_values")

    def __init__(
        self,
        kind: str,
        values: tuple[Any, ...] = (),
        actions: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        self._kind = kind
        self._values = values
        self._actions = actions

    def _then(self, action: str, value: Any) -> Self:
        if action in (REPLY, REPLY_VALUE) and self._actions and self.has_reply:
            raise ValueError("an effect replies once: it has a reply already")
        new = object.__new__(type(self))
        new._kind = self._kind
        new._values = self._values
        new._actions = (*self._actions, (action, value))
        return new

    def then_reply(self, reply: Callable[[S], object]) -> Self:
        """Answer the ask with ``reply(state)``, the state after the effect.

        Raises:
            TypeError: ``reply`` is not callable.
            ValueError: the effect has a reply already.
        """
        if not callable(reply):
            raise TypeError(
                f"then_reply takes a function of the state, not {reply!r} (use "
                "Effect.reply(value) for a value)"
            )
        return self._then(REPLY, reply)

    def then_run(self, callback: Callable[[S], object]) -> Self:
        """Call ``callback(state)`` (sync or async) after the effect, with the
        state after it. An exception it raises fails the actor (the events
        are stored already).

        Raises:
            TypeError: ``callback`` is not callable.
        """
        if not callable(callback):
            raise TypeError(f"then_run takes a function of the state, not {callback!r}")
        return self._then(RUN, callback)

    def then_stop(self) -> Self:
        """Stop the actor after the effect (later commands become dead
        letters)."""
        return self._then(STOP, None)

    def then_unstash_all(self) -> Self:
        """Put every stashed command back in front of the mailbox after the
        effect (``Actor.unstash_all``)."""
        return self._then(UNSTASH_ALL, None)

    @property
    def has_reply(self) -> bool:
        """Whether the effect answers the ask (``then_reply``, ``reply``)."""
        return any(action in (REPLY, REPLY_VALUE) for action, _ in self._actions)

    def __repr__(self) -> str:
        parts = [
            f"{type(self).__name__}.{self._kind}({', '.join(map(repr, self._values))})"
        ]
        for action, value in self._actions:
            if action == REPLY_VALUE:
                parts.append(f"reply({value!r})")
            elif action in (REPLY, RUN):
                parts.append(f"then_{action}({getattr(value, '__name__', value)!r})")
            else:
                parts.append(f"then_{action.replace(' ', '_')}()")
        return ".".join(parts)


class Effect(_Effect[S], Generic[E, S]):
    """What ``EventSourcedActor.on_command`` returns.

    Make one with a factory (``Effect.persist(Deposited(10))``,
    ``Effect.none()``, ...) and chain side effects on it
    (``.then_reply(lambda state: state.balance)``).
    """

    __slots__ = ()

    @property
    def events(self) -> tuple[E, ...]:
        """The events a persist stores (empty for the other effects)."""
        return self._values

    @property
    def kind(self) -> str:
        """``"persist"``, ``"none"``, ``"unhandled"`` or ``"stash"``."""
        return self._kind

    @staticmethod
    def persist(*events: E2) -> Effect[E2, Any]:
        """Store ``events`` (atomically: all of them or none), then apply
        them with ``on_event``, then run the side effects. With no event it
        is ``Effect.none()``. Commands that arrive meanwhile wait, in order.
        """
        return Effect(PERSIST if events else NONE, events)

    @staticmethod
    def none() -> Effect[Any, Any]:
        """Store nothing; run the side effects (a query)."""
        return _NONE

    @staticmethod
    def reply(value: object) -> Effect[Any, Any]:
        """Store nothing and answer the ask with ``value``."""
        return _NONE._then(REPLY_VALUE, value)

    @staticmethod
    def stop() -> Effect[Any, Any]:
        """Store nothing and stop the actor."""
        return _NONE._then(STOP, None)

    @staticmethod
    def unhandled() -> Effect[Any, Any]:
        """The command is not handled here: a dead letter ("unhandled"), and
        an asker gets ``UnhandledMessage`` (as ``Actor.receive``'s default)."""
        return _UNHANDLED

    @staticmethod
    def stash() -> Effect[Any, Any]:
        """Set the command aside (``Actor.stash``) until a later effect's
        ``then_unstash_all()``; an ask is answered when it is handled."""
        return _STASH


class StateEffect(_Effect[S]):
    """What ``DurableStateActor.on_command`` returns: persist a new state,
    delete it, or nothing, with the same side effects as
    [``Effect``][actors.persistence.Effect]."""

    __slots__ = ()

    @property
    def state(self) -> S | None:
        """The state a persist stores (None for the other effects)."""
        return self._values[0] if self._kind == PERSIST else None

    @property
    def kind(self) -> str:
        """``"persist"``, ``"delete"``, ``"none"``, ``"unhandled"`` or
        ``"stash"``."""
        return self._kind

    @staticmethod
    def persist(state: S2) -> StateEffect[S2]:
        """Store ``state`` as the whole new state (conditional on the
        revision last seen), then run the side effects."""
        return StateEffect(PERSIST, (state,))

    @staticmethod
    def delete() -> StateEffect[Any]:
        """Delete the stored state; the actor goes on from ``empty_state()``."""
        return StateEffect(DELETE)

    @staticmethod
    def none() -> StateEffect[Any]:
        """Store nothing; run the side effects."""
        return _STATE_NONE

    @staticmethod
    def reply(value: object) -> StateEffect[Any]:
        """Store nothing and answer the ask with ``value``."""
        return _STATE_NONE._then(REPLY_VALUE, value)

    @staticmethod
    def stop() -> StateEffect[Any]:
        """Store nothing and stop the actor."""
        return _STATE_NONE._then(STOP, None)

    @staticmethod
    def unhandled() -> StateEffect[Any]:
        """Not handled here: a dead letter, ``UnhandledMessage`` to an asker."""
        return _STATE_UNHANDLED

    @staticmethod
    def stash() -> StateEffect[Any]:
        """Set the command aside until a later ``then_unstash_all()``."""
        return _STATE_STASH


_NONE: Effect[Any, Any] = Effect(NONE)
_UNHANDLED: Effect[Any, Any] = Effect(UNHANDLED)
_STASH: Effect[Any, Any] = Effect(STASH)
_STATE_NONE: StateEffect[Any] = StateEffect(NONE)
_STATE_UNHANDLED: StateEffect[Any] = StateEffect(UNHANDLED)
_STATE_STASH: StateEffect[Any] = StateEffect(STASH)
