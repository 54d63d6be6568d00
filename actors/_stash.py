"""The stash (Akka's ``Stash``): a handler sets the message it is handling
aside, and later puts every stashed message back in front of the mailbox, in
order, before the messages that came meanwhile.

* ``stash()`` takes the item the message loop is handling, as the loop holds
  it: an ask keeps its envelope, so an ask stashed and unstashed is answered
  by the handler that finally handles it. The loop does not reply to an ask
  its handler stashed, and does not settle a stashed message if the handler
  then fails (it is still in the stash).
* ``unstash_all()`` / ``unstash()`` move stashed items to a list the loop
  puts in front of what it has not handled yet before its next message (a
  ``Rebind`` command in the control queue interrupts the batch; when the
  batch is done, a ``Wake`` signal makes sure the loop does not park while
  unstashed messages wait).
* Bounded: ``stash_capacity`` (a class attribute, 1000 by default) items;
  one more raises [``StashOverflow``][actors.StashOverflow] in the handler that stashed.
* A stashed message has left the mailbox: it no longer counts against the
  mailbox's capacity (its quota unit was released when the loop took it).
* When the incarnation ends, whatever is stashed (or unstashed and not yet
  put back) goes back in front of the mailbox (``put_back``, called by
  ``stop_incarnation`` and, for a teardown that cancelled the actor, by
  termination): a restart handles it first (Akka's ``preRestart``
  unstashes), a stop makes it dead letters (asks fail with ``ActorStopped``).

How ``stash()`` finds the message being handled without costing the message
loop anything: the loop keeps it in its local ``item``, and ``stash()`` reads
it from the loop's frame, found by walking up from the handler (the handler
runs in the loop's own task, called or awaited by it). Only ``stash()`` pays
for the walk; the loop stores nothing per message for it.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

from ._actor_state import cell_of, request_rebind, state_of
from ._envelope import Ask
from ._errors import StashOverflow
from ._invoke import call_handler, call_hook
from ._lifecycle import NOTHING
from ._receive_timeout import RECEIVE_TIMEOUT, TIMEOUT_CHECK
from ._system_signals import Terminated
from .mailbox import Signal

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell

__all__ = [
    "DEFAULT_STASH_CAPACITY",
    "check_stash_capacity",
    "message_of",
    "put_back",
    "register_loop",
    "stash",
    "stashed_current",
    "take_unstashed",
    "unstash",
    "unstash_all",
]

#: How many messages an actor may stash unless its class says otherwise.
DEFAULT_STASH_CAPACITY = 1000

#: The code of the message loop(s) whose frame holds the item being handled
#: in the local ``item`` and the cell in ``cell`` (see ``register_loop``).
_LOOPS: set[CodeType] = set()


def register_loop(code: CodeType) -> None:
    """Declare a message loop's code: its frame has locals ``cell`` and
    ``item`` (the item being handled, or NOTHING between items)."""
    _LOOPS.add(code)


def check_stash_capacity(capacity: object, owner: str) -> int:
    """Validate a ``stash_capacity`` attribute.

    Raises:
        TypeError: it is not an integer (a bool is not one).
        ValueError: it is < 1.
    """
    if isinstance(capacity, bool) or not isinstance(capacity, int):
        raise TypeError(
            f"{owner}.stash_capacity must be an integer, not "
            f"{type(capacity).__name__}"
        )
    if capacity < 1:
        raise ValueError(f"{owner}.stash_capacity must be at least 1, got {capacity}")
    return capacity


def _current_item(cell: Cell) -> Any:
    """The item ``cell``'s message loop is handling, read from the loop's
    frame up the stack (NOTHING if the caller is not inside a handler that
    the loop of ``cell`` runs)."""
    frame: FrameType | None = sys._getframe(2)
    loops = _LOOPS
    while frame is not None:
        if frame.f_code in loops:
            local = frame.f_locals
            if local.get("cell") is cell:
                return local.get("item", NOTHING)
            return NOTHING
        frame = frame.f_back
    return NOTHING


class _Redeliver(Signal):
    """A stashed runtime signal's message (a timer's, a ``Terminated``, a
    ``ReceiveTimeout``): handed once to the handler the loop has then, as the
    original would have been (the firing itself cannot be delivered twice)."""

    __slots__ = ("message",)

    def __init__(self, message: object) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"<stashed {self.message!r}>"

    async def deliver(self, cell: Cell, receive: Any) -> None:
        message = self.message
        if type(message) is Terminated:
            hook = getattr(cell.instance, "on_terminated", None)
            if hook is not None:
                await call_hook(hook, message)
                return
        await call_handler(receive, message)


def _is_timer_firing(item: Any) -> bool:
    # A keyed timer's firing (``_timers._Timer``, a feature this module does
    # not import): a signal with a key, a message and an interval.
    return (
        isinstance(item, Signal)
        and hasattr(item, "key")
        and hasattr(item, "interval")
        and hasattr(item, "message")
    )


def message_of(item: Any) -> Any:
    """The message a handler got for a loop item: an ask's message, a timer
    firing's message, a Terminated itself, a told message as it is (None for
    NOTHING, no item)."""
    if item is NOTHING:
        return None
    if type(item) is Ask:
        return item.message
    if isinstance(item, Signal) and type(item) is not Terminated:
        message = getattr(item, "message", item)
        # The receive timeout's own timer: its handler got a ReceiveTimeout.
        return RECEIVE_TIMEOUT if message is TIMEOUT_CHECK else message
    return item


def stash(instance: Actor) -> None:
    """Set the message being handled aside (see the module docstring).

    Raises:
        RuntimeError: not called while this actor handles a message (from
            ``__init__``, a hook, another task), or the instance is not
            spawned.
        StashOverflow: the stash holds ``stash_capacity`` items already.
    """
    cell = cell_of(instance)
    if cell is None:
        raise RuntimeError(
            f"{type(instance).__qualname__}.stash() needs a spawned actor: "
            "this instance was made outside the runtime"
        )
    item = _current_item(cell)
    if item is NOTHING or cell.instance is not instance:
        raise RuntimeError(
            "stash() sets aside the message being handled: call it from this "
            "actor's handler, in its own task (not from __init__, a lifecycle "
            "hook or another task)"
        )
    state = state_of(instance)
    if state.stashed_current is item:
        return  # stashed twice by one handler: once
    queue = state.stash
    capacity = instance.stash_capacity
    if len(queue) >= capacity:
        capacity = check_stash_capacity(capacity, type(instance).__qualname__)
        if len(queue) >= capacity:
            raise StashOverflow(
                f"{cell.path} cannot stash more than {capacity} messages "
                "(stash_capacity)"
            )
    if type(item) is Ask:
        if cell.current is item:
            cell.current = NOTHING  # the loop does not reply to it now
        queue.append(item)
    elif type(item) is Terminated or _is_timer_firing(item):
        # A firing is delivered once (and a Terminated only while watched):
        # the stash keeps what the handler got instead.
        queue.append(_Redeliver(message_of(item)))
    else:  # a message, or a runtime signal that can be delivered again
        queue.append(item)
    state.stashed_current = item


def stashed_current(instance: Any, item: Any) -> bool:
    """Whether the handler of ``item`` stashed it (so a failure of that
    handler leaves it in the stash)."""
    state = None if instance is None else instance._actors_state
    return state is not None and state.stashed_current is item


def _unstashed(instance: Actor) -> None:
    cell = cell_of(instance)
    request_rebind(instance)
    if cell is not None:
        # The loop may be handling the last item of its batch: without a
        # message to come it would park with unstashed messages waiting.
        cell.kick()


def unstash_all(instance: Actor) -> int:
    """Put every stashed message back in front of the mailbox, oldest first.

    Returns:
        How many there were.
    """
    state = instance._actors_state
    if state is None or not state.stash:
        return 0
    queue = state.stash
    count = len(queue)
    state.unstashed.extend(queue)
    queue.clear()
    _unstashed(instance)
    return count


def unstash(instance: Actor) -> bool:
    """Put the oldest stashed message back in front of the mailbox (after
    those unstashed before it by the same handler).

    Returns:
        Whether there was one.
    """
    state = instance._actors_state
    if state is None or not state.stash:
        return False
    state.unstashed.append(state.stash.popleft())
    _unstashed(instance)
    return True


def take_unstashed(cell: Cell) -> None:
    """The loop's side of a Rebind: the unstashed items go in front of what
    it has not handled yet (``cell.carry``)."""
    instance = cell.instance
    state = None if instance is None else instance._actors_state
    if state is None:
        return
    state.stashed_current = NOTHING
    unstashed = state.unstashed
    if unstashed:
        cell.carry[:0] = unstashed
        unstashed.clear()


def put_back(cell: Cell) -> None:
    """The incarnation ends: what is stashed, or unstashed and not yet put
    back, goes in front of the mailbox (``cell.carry``): the next incarnation
    handles it first, termination makes it dead letters."""
    instance = cell.instance
    state = None if instance is None else instance._actors_state
    if state is None:
        return
    state.stashed_current = NOTHING
    if state.unstashed or state.stash:
        cell.carry[:0] = [*state.unstashed, *state.stash]
        state.unstashed.clear()
        state.stash.clear()
