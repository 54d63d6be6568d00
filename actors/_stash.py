"""The stash (Akka's ``Stash``): a handler sets the message it is handling
aside, and later puts every stashed message back in front of the mailbox, in
order, before the messages that came meanwhile.

* ``stash()`` takes the item the message loop is handling, as the loop holds
  it: an ask keeps its envelope, so an ask stashed and unstashed is answered
  by the handler that finally handles it. The loop does not reply to an ask
  its handler stashed, and does not settle a stashed message if the handler
  then fails (it is still in the stash).
* A runtime signal is stashed as what its handler got (``_Redeliver``),
  unless it says otherwise: a signal with an ``on_stash()`` method (the
  delivery layer's batch of deliveries) puts what that returns (a signal)
  in the stash instead.
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

How ``stash()`` finds the message being handled: the message loop stores
each item in ``cell.handling`` before it hands it over (a slot store: no
call, no allocation), and a handler that stashes replaces it with a marker,
so the loop knows the item is in the stash (it neither replies to it nor
settles it if the handler then fails, and a second ``stash()`` by the same
handler stashes nothing more). The marker is per handling, not per object:
the same object told twice is two messages. Wherever the actor's own task
runs user code outside a handler (control commands, a failure waiting for
its directive, the hooks those run, the end of the incarnation) the slot
holds NOTHING; between a handler's return and the next item it still holds
the last item (not cleared: that would cost a store per message), which is
why ``stash()`` also checks that it runs in the actor's own task (its
``current_cell``, the rule ``ref.send`` uses to spot a handler waiting on
its own mailbox): a background task cannot stash the message its actor
happens to handle, or the one it handled last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._actor_state import cell_of, check_own_task, request_rebind, state_of
from ._envelope import Ask
from ._errors import StashOverflow
from ._invoke import call_handler, call_hook
from ._lifecycle import NOTHING, current_cell
from ._receive_timeout import RECEIVE_TIMEOUT, TIMEOUT_CHECK
from ._system_signals import Terminated
from .mailbox import Signal

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell

__all__ = [
    "DEFAULT_STASH_CAPACITY",
    "STASHED",
    "check_stash_capacity",
    "message_of",
    "put_back",
    "stash",
    "stashed_current",
    "take_unstashed",
    "unstash",
    "unstash_all",
]

#: How many messages an actor may stash unless its class says otherwise.
DEFAULT_STASH_CAPACITY = 1000


class _Stashed:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<stashed by its handler>"


#: What ``cell.handling`` holds once the handler stashed its item.
STASHED: Any = _Stashed()


def check_stash_capacity(capacity: object, owner: str) -> int:
    """Validate a ``stash_capacity`` attribute.

    Raises:
        TypeError: it is not an integer (a bool is not one).
        ValueError: it is < 1.
    """
    if isinstance(capacity, bool) or not isinstance(capacity, int):
        raise TypeError(
            f"{owner}.stash_capacity must be an integer, not {type(capacity).__name__}"
        )
    if capacity < 1:
        raise ValueError(f"{owner}.stash_capacity must be at least 1, got {capacity}")
    return capacity


class _Redeliver(Signal):
    """A stashed runtime signal's message (a timer's, a ``Terminated``, a
    ``ReceiveTimeout``, a piped result): handed once to the handler the loop
    has then, as the original was (a firing cannot be delivered twice, and a
    piped result's ``then`` ran already)."""

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

    def undelivered(self, cell: Cell) -> None:
        """The actor stopped with it still stashed: a dead letter, as every
        stashed message."""
        cell.runtime.dead_letter(cell, self.message, "actor stopped")


def message_of(item: Any) -> Any:
    """The message a handler got for a loop item: an ask's message, a timer
    firing's or a piped result's message, a Terminated itself, a told message
    as it is (None for NOTHING, no item)."""
    if item is NOTHING:
        return None
    if type(item) is Ask:
        return item.message
    if isinstance(item, Signal) and type(item) is not Terminated:
        # A runtime signal keeps what its handler got in ``message`` (a piped
        # result once ``then`` has made it).
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
    item = cell.handling
    if (
        item is NOTHING
        or cell.instance is not instance
        or current_cell.get() is not cell
    ):
        raise RuntimeError(
            "stash() sets aside the message being handled: call it from this "
            "actor's handler, in its own task (not from __init__, a lifecycle "
            "hook or another task)"
        )
    if item is STASHED:
        return  # stashed twice by one handler: once
    state = state_of(instance)
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
    elif isinstance(item, Signal):
        # A firing is delivered once, a Terminated only while watched, a piped
        # result's ``then`` runs once: the stash keeps what the handler got.
        # A signal that hands messages over itself (the delivery layer's
        # batches) says what is stashed instead (``on_stash()``: a signal).
        on_stash = getattr(item, "on_stash", None)
        queue.append(_Redeliver(message_of(item)) if on_stash is None else on_stash())
    else:  # a message (in a traced system: its envelope)
        queue.append(item)
    cell.handling = STASHED


def stashed_current(cell: Cell, item: Any) -> bool:
    """The handler of ``item`` ended without returning (it failed, or it was
    cancelled): whether it stashed ``item`` (which then stays in the stash).
    From here on no message is being handled: the hooks that run next (a
    supervisor's directive, a teardown) cannot stash."""
    stashed = item is not NOTHING and cell.handling is STASHED
    cell.handling = NOTHING
    return stashed


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

    Raises:
        RuntimeError: not called from the actor's own task.
    """
    check_own_task(instance, "unstash_all")
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

    Raises:
        RuntimeError: not called from the actor's own task.
    """
    check_own_task(instance, "unstash")
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
    unstashed = state.unstashed
    if unstashed:
        cell.carry = [*unstashed, *cell.carry]
        unstashed.clear()


def put_back(cell: Cell) -> None:
    """The incarnation ends: what is stashed, or unstashed and not yet put
    back, goes in front of the mailbox (``cell.carry``): the next incarnation
    handles it first, termination makes it dead letters. No message is being
    handled any more (``on_stop`` cannot stash)."""
    cell.handling = NOTHING
    instance = cell.instance
    state = None if instance is None else instance._actors_state
    if state is None:
        return
    if state.unstashed or state.stash:
        cell.carry = [*state.unstashed, *state.stash, *cell.carry]
        state.unstashed.clear()
        state.stash.clear()
