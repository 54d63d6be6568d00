"""What event-sourced and durable state actors share: where their journal
and codec come from, recovery on start and restart, and what a refused write
does.

Recovery runs in the start hook, in the actor's own task, before its first
command: the runtime hands the actor no message while ``on_start`` (or
``on_restart``) runs, so commands that arrive during recovery wait in the
mailbox, in order, and are handled afterwards with the recovered state. A
persist is awaited inside the handler, so commands that arrive while it is in
flight wait the same way. That is Akka's internal stash, without a second
queue: the waiting commands keep their place among timer firings and
``Terminated`` signals, and they stay under the mailbox's capacity, so a
bounded mailbox gives backpressure where Akka's stash would overflow. A
subclass's own ``on_start`` and ``on_restart`` are wrapped so that recovery
runs first, whatever they call.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import Any, ClassVar, Generic, TypeVar

import anyio

from .. import Actor, DeadLetter, ErrorReply
from ._codec import Codec
from ._effect import REPLY, REPLY_VALUE, RUN, STOP, UNSTASH_ALL, _Effect
from ._errors import PersistenceError, RecoveryFailed
from ._records import check_persistence_id

__all__ = ["DurableActor", "GetState", "logger"]

C = TypeVar("C")
S = TypeVar("S")

logger = logging.getLogger("actors.persistence")

#: Marks the functions of this package that a subclass may not see wrapped.
_MACHINERY = "_actors_persistence"


class GetState:
    """Asks a durable actor for ``(state, sequence number or revision,
    persistence id)`` (the test kit's view; handled before ``on_command``)."""

    __slots__ = ()


GET_STATE = GetState()


def _machinery(function: Callable[..., Any]) -> Callable[..., Any]:
    setattr(function, _MACHINERY, True)
    return function


async def _call(hook: Callable[..., Any], *args: Any) -> Any:
    result = hook(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _recovering(hook: Callable[..., Any]) -> Callable[..., Any]:
    """A subclass's ``on_start`` / ``on_restart``, recovering first. Its
    signature is the hook's (``__wrapped__``), so the runtime passes
    ``on_restart`` what the subclass's takes."""

    @functools.wraps(hook)
    async def recover_first(
        self: DurableActor[Any, Any], *args: Any, **kwargs: Any
    ) -> None:
        await self._ensure_recovered()
        await _call(hook, self, *args, **kwargs)

    return _machinery(recover_first)


def _check_built(actor: DurableActor[Any, Any]) -> None:
    """What the runtime checks of a durable actor it has built, once its
    factory returned (``Actor._actors_check_built``): its persistence id, its
    codec and its stores, so that a misconfigured one makes ``spawn`` raise
    the error (the factory's errors are ``spawn``'s) instead of failing its
    start restart after restart until its supervisor gives up.

    Raises:
        TypeError: no ``persistence_id`` or not a str, no codec, no journal
            or store (neither the actor's own nor its system's).
        ValueError: an empty, too long or unprintable persistence id.
    """
    actor._persistence_id()
    actor._codec()
    actor._stores()


class DurableActor(Actor[C], Generic[C, S]):
    """The base of ``EventSourcedActor`` and ``DurableStateActor``."""

    #: The codec of what the actor stores (a ``Codec`` of its event and state
    #: classes). Required.
    codec: ClassVar[Codec | None] = None
    #: Seconds recovery may take before it fails (None: no limit).
    recovery_timeout: ClassVar[float | None] = 30.0

    #: Set by ``__init__``: which entity this is (unique in its journal).
    persistence_id: str

    _persistence: Any = None
    _actors_check_built = _check_built

    def __init_subclass__(cls, **kwargs: Any) -> None:
        own = cls.__dict__
        receive = own.get("receive")
        if receive is not None and not getattr(receive, _MACHINERY, False):
            raise TypeError(
                f"{cls.__qualname__} defines receive: a durable actor handles "
                "its commands in on_command (receive is its persistence "
                "machinery)"
            )
        for name in ("on_start", "on_restart"):
            hook = own.get(name)
            if hook is None or getattr(hook, _MACHINERY, False):
                continue
            if not inspect.isfunction(hook):
                raise TypeError(
                    f"{cls.__qualname__}.{name} must be a plain method (sync or "
                    "async) on a durable actor"
                )
            setattr(cls, name, _recovering(hook))
        codec = own.get("codec")
        if codec is not None and not isinstance(codec, Codec):
            raise TypeError(
                f"{cls.__qualname__}.codec must be an actors.persistence.Codec, "
                f"not {codec!r}"
            )
        timeout = own.get("recovery_timeout", None)
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not timeout > 0
        ):
            raise ValueError(
                f"{cls.__qualname__}.recovery_timeout must be None or seconds > 0, "
                f"not {timeout!r}"
            )
        super().__init_subclass__(**kwargs)

    @_machinery
    async def on_start(self) -> None:
        """Recovers (a subclass's own ``on_start`` runs after recovery)."""
        await self._ensure_recovered()

    def on_recovery_completed(self, state: S) -> Awaitable[None] | None:
        """Called once recovery has rebuilt ``state``, before the first
        command (sync or async). An exception here fails the recovery."""
        return None

    def on_recovery_failed(self, error: BaseException) -> Awaitable[None] | None:
        """Called when recovery fails with ``error`` (sync or async), before
        the actor fails with [``RecoveryFailed``][actors.persistence.RecoveryFailed].
        An exception here is logged; the failure is still RecoveryFailed."""
        return None

    # -- for the subclasses ---------------------------------------------------

    async def _ensure_recovered(self) -> None:
        state = self._persistence
        if state is None or not state.recovered:
            await self._recover_or_fail()

    async def _recover_or_fail(self) -> None:
        persistence_id = self._persistence_id()
        codec = self._codec()
        stores = self._stores()
        timeout = type(self).recovery_timeout
        path = self.context.path
        try:
            scope = nullcontext() if timeout is None else anyio.fail_after(timeout)
            with scope:
                state = await self._recover(persistence_id, codec, *stores)
            await _call(self.on_recovery_completed, state)
        except Exception as exc:
            if self._persistence is not None:
                self._persistence.recovered = False
            try:
                await _call(self.on_recovery_failed, exc)
            except Exception:
                logger.exception("%s: on_recovery_failed raised", path)
            if isinstance(exc, TimeoutError):
                reason = f"it took over {timeout} s (recovery_timeout)"
            else:
                reason = str(exc) or type(exc).__name__
            raise RecoveryFailed(
                f"{path} could not recover {persistence_id!r}: {reason}"
            ) from exc

    async def _recover(self, persistence_id: str, codec: Codec, *stores: Any) -> Any:
        raise NotImplementedError

    def _stores(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _persistence_id(self) -> str:
        try:
            value = self.persistence_id
        except AttributeError:
            raise TypeError(
                f"{type(self).__qualname__} has no persistence_id: set "
                "self.persistence_id in __init__ (a str naming the entity)"
            ) from None
        return check_persistence_id(value)

    def _codec(self) -> Codec:
        codec = type(self).codec
        if codec is None:
            raise TypeError(
                f"{type(self).__qualname__} has no codec: declare its event and "
                "state classes (codec = Codec(Deposited, Withdrawn, Account))"
            )
        return codec

    def _store(
        self,
        attribute: str,
        kind: type,
        fallback: tuple[object, ...],
        required: bool = True,
    ) -> Any:
        """The actor's own store (``attribute``), else the first of
        ``fallback`` that is a ``kind``, else None if not ``required``.

        Raises:
            TypeError: the actor's own is not a ``kind``, or none is found
                and one is ``required``.
        """
        own = getattr(self, attribute, None)
        name = type(self).__qualname__
        if own is not None:
            if not isinstance(own, kind):
                raise TypeError(
                    f"{name}.{attribute} must be an actors.persistence."
                    f"{kind.__name__}, not {own!r}"
                )
            return own
        for candidate in fallback:
            if isinstance(candidate, kind):
                return candidate
        if not required:
            return None
        raise TypeError(
            f"{name} has no {kind.__name__}: give its system one "
            f"(ActorSystem(journal=SqliteJournal(path))) or set {name}.{attribute}"
        )

    def _rejected(self, command: object, error: PersistenceError) -> ErrorReply:
        """A write refused for certain: the asker gets ``error``; a told
        command becomes a dead letter; the actor goes on."""
        context = self.context
        logger.warning("%s: a command's write was refused: %s", context.path, error)
        context.system.dead_letters.publish(
            DeadLetter(context.self_ref, command, f"write refused: {error}")
        )
        return ErrorReply(error)

    def _stale(self, error: PersistenceError) -> ErrorReply:
        """Another writer of this persistence id wrote first: stop."""
        context = self.context
        logger.error("%s stops: %s", context.path, error)
        context.stop()
        return ErrorReply(error)

    async def _side_effects(self, effect: _Effect[Any], state: Any) -> Any:
        """Run ``effect``'s side effects in order; return its reply."""
        actions = effect._actions
        if len(actions) == 1 and actions[0][0] is REPLY:  # the usual one
            return actions[0][1](state)
        reply = None
        for action, value in actions:
            if action is RUN:
                await _call(value, state)
            elif action is REPLY:
                reply = value(state)
            elif action is REPLY_VALUE:
                reply = value
            elif action is STOP:
                self.context.stop()
            elif action is UNSTASH_ALL:
                self.unstash_all()
        return reply
