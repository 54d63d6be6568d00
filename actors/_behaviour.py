"""Behaviours (Akka's ``become``/``unbecome``, OTP's ``gen_statem`` states):
which handler the next message goes to.

An instance starts with its ``receive``. ``become(handler)`` replaces the
current behaviour (``discard_old=False``: pushes it on a stack), ``unbecome()``
pops back to the one before (never below ``receive``). The message loop
binds the handler once per incarnation and again after a ``Rebind`` command
(queued by ``become``, ``unbecome``, unstashing and the receive timeout), which
it sees before its next message: an actor that never changes its behaviour
pays nothing per message. A restart builds a fresh instance, so it starts from
``receive`` again.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._actor_state import check_own_task, request_rebind, state_of
from ._receive_timeout import timed_handler, timed_signals

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell

__all__ = ["become", "bind", "current_behaviour", "unbecome"]


#: Whether a method's function is an ``async def`` (``bind``'s cache, keyed
#: by the function of a bound method; bounded as ``_invoke.PLAIN``).
_ASYNC_METHODS: dict[Any, bool] = {}
_ASYNC_METHODS_MAX = 4096


def become(instance: Actor, handler: Callable[[Any], Any], discard_old: bool) -> None:
    """Make ``handler`` the behaviour for the next messages.

    Raises:
        TypeError: ``handler`` is not callable.
        RuntimeError: not called from the actor's own task (see
            ``check_own_task``).
    """
    if not callable(handler):
        raise TypeError(
            f"become() takes a callable handler (a method, a function), not "
            f"{type(handler).__name__}: {handler!r}"
        )
    check_own_task(instance, "become")
    stack = state_of(instance).behaviours
    if discard_old and stack:
        stack[-1] = handler
    else:
        stack.append(handler)
    request_rebind(instance)


def unbecome(instance: Actor) -> None:
    """Go back to the behaviour before the current one (``receive`` at the
    bottom of the stack: no-op there).

    Raises:
        RuntimeError: not called from the actor's own task.
    """
    check_own_task(instance, "unbecome")
    state = instance._actors_state
    if state is not None and state.behaviours:
        state.behaviours.pop()
        request_rebind(instance)


def current_behaviour(instance: Actor) -> Callable[[Any], Any]:
    """The handler the next message goes to."""
    state = instance._actors_state
    if state is not None and state.behaviours:
        return state.behaviours[-1]
    return instance.receive


def bind(
    cell: Cell, instance: Actor
) -> tuple[Callable[[Any], Any], Callable[[Any], Any], bool]:
    """What the message loop calls: ``(receive, handler, is_async)``.

    ``receive`` takes the runtime's signals (timer firings, ``Terminated``):
    the current behaviour. ``handler`` takes messages: the same, wrapped when
    a receive timeout is set (each message resets it) and, in a traced
    system, for telemetry. ``is_async``: ``handler`` is an ``async def``.
    """
    receive = current_behaviour(instance)
    # A method's answer depends on its function alone: asked once per
    # function (inspect's test is about ten calls, paid per spawn otherwise).
    function = getattr(receive, "__func__", None)
    is_async = _ASYNC_METHODS.get(function) if function is not None else None
    if is_async is None:
        is_async = inspect.iscoroutinefunction(receive)
        if function is not None and len(_ASYNC_METHODS) < _ASYNC_METHODS_MAX:
            _ASYNC_METHODS[function] = is_async
    handler = receive
    state = instance._actors_state
    if state is not None and state.timeout is not None:
        handler = timed_handler(receive, is_async, state)
        receive = timed_signals(receive, state)
    telemetry = cell.runtime.telemetry
    if telemetry is not None:
        handler = telemetry._instrument(cell, handler, is_async)
    return receive, handler, is_async
