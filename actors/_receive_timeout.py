"""The receive timeout (Akka's ``setReceiveTimeout``, the ``gen_server``
timeout): a [``ReceiveTimeout``][actors.ReceiveTimeout] is delivered when no
message came for that many seconds.

``self.context.set_receive_timeout(seconds)`` arms one single timer on the
runtime's timer service (a scheduler of its own, apart from
``context.timers``), and has the message loop bind the handler again, wrapped
so that each message notes when it was handled. When the timer fires, its
check compares: a message handled within the timeout re-arms the timer for
what is left; none, and the actor receives ``ReceiveTimeout`` and the timer is
armed again for another full timeout. ``None`` cancels it and unwraps the
handler: an actor without a receive timeout pays nothing per message.

What resets it: every message told, sent or asked (handled, not merely
queued: the idle time counts from the end of the last handler). Runtime
signals do not: timer firings, ``Terminated``, the ``ReceiveTimeout`` itself
(Akka's ``NotInfluenceReceiveTimeout``). It ends with the incarnation: a
restart starts without one, a stop cancels it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from ._actor_state import ActorState, request_rebind, state_of
from ._invoke import PLAIN, awaitable_class
from ._validation import check_duration

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell
    from ._runtime import Runtime

__all__ = [
    "RECEIVE_TIMEOUT",
    "TIMEOUT_CHECK",
    "ReceiveTimeout",
    "cancel_receive_timeout",
    "set_receive_timeout",
    "timed_handler",
    "timed_signals",
]


class ReceiveTimeout:
    """The message an actor receives when no message came for the seconds it
    set with ``self.context.set_receive_timeout(seconds)``. All instances are
    equal: match it with ``case ReceiveTimeout():`` or ``isinstance``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ReceiveTimeout()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReceiveTimeout)

    def __hash__(self) -> int:
        return hash(ReceiveTimeout)


#: The one instance the runtime delivers.
RECEIVE_TIMEOUT = ReceiveTimeout()


class _Check:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<receive timeout check>"


#: What the receive timeout's timer sends (also its key): never reaches a
#: handler, the wrapped signal handler takes it.
TIMEOUT_CHECK: Any = _Check()


def _clock(runtime: Runtime) -> Callable[[], float]:
    # The timers' clock: the system's own when it has one (a test clock),
    # else the event loop's, as the timer service reads it.
    clock = runtime.clock
    now: Callable[[], float] = anyio.current_time if clock is None else clock.now
    return now


def set_receive_timeout(cell: Cell, instance: Actor, timeout: float | None) -> None:
    """Set (or with None cancel) ``instance``'s receive timeout, in seconds.

    Raises:
        TypeError: ``timeout`` is neither a number nor None.
        ValueError: ``timeout`` is not > 0 and finite.
    """
    if timeout is not None:
        timeout = check_duration("timeout", timeout)
    state = state_of(instance)
    was = state.timeout
    if timeout is None:
        state.timeout = None
        if state.timeout_timers is not None:
            state.timeout_timers.cancel(TIMEOUT_CHECK)
    else:
        timers = state.timeout_timers
        if timers is None:
            timers = state.timeout_timers = cell.runtime.make_timers(cell)
        now = state.now
        if now is None:
            now = state.now = _clock(cell.runtime)
        timers.start_single(TIMEOUT_CHECK, TIMEOUT_CHECK, timeout)
        state.timeout = timeout
        state.last_message = now()
    if (was is None) != (timeout is None):
        request_rebind(instance)


def cancel_receive_timeout(instance: Actor | None) -> None:
    """The incarnation ends: its receive timeout with it."""
    state = None if instance is None else instance._actors_state
    if state is not None and state.timeout_timers is not None:
        state.timeout = None
        state.timeout_timers.cancel_all()


async def _timed_after(
    awaitable: Awaitable[Any], state: ActorState, now: Callable[[], float]
) -> Any:
    try:
        return await awaitable
    finally:
        state.last_message = now()


def timed_handler(
    handler: Callable[[Any], Any], is_async: bool, state: ActorState
) -> Callable[[Any], Any]:
    """``handler`` wrapped to note when each message was handled (only while
    a receive timeout is set)."""
    now = state.now
    assert now is not None

    if is_async:

        async def timed_async(message: Any) -> Any:
            try:
                return await handler(message)
            finally:
                state.last_message = now()

        return timed_async

    def timed(message: Any) -> Any:
        try:
            result = handler(message)
        except BaseException:
            state.last_message = now()
            raise
        if result.__class__ not in PLAIN and awaitable_class(result.__class__):
            return _timed_after(result, state, now)  # the loop awaits it
        state.last_message = now()
        return result

    return timed


def timed_signals(
    receive: Callable[[Any], Any], state: ActorState
) -> Callable[[Any], Any]:
    """The handler of signals while a receive timeout is set: the timer's
    check is taken here, everything else goes to ``receive``."""

    def on_signal(message: Any) -> Any:
        if message is TIMEOUT_CHECK:
            return _check(receive, state)
        return receive(message)

    return on_signal


def _check(receive: Callable[[Any], Any], state: ActorState) -> Any:
    timeout = state.timeout
    timers = state.timeout_timers
    now = state.now
    if timeout is None or timers is None or now is None:
        return None  # cancelled after its firing was queued
    current = now()
    remaining = state.last_message + timeout - current
    # (A timer started while the actor or its system stops does nothing.)
    if remaining > 0:  # a message came meanwhile: wait for the rest
        timers.start_single(TIMEOUT_CHECK, TIMEOUT_CHECK, remaining)
        return None
    # Fires: and again a full timeout later unless a message comes.
    state.last_message = current
    timers.start_single(TIMEOUT_CHECK, TIMEOUT_CHECK, timeout)
    return receive(RECEIVE_TIMEOUT)
