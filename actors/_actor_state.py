"""What one actor instance rarely uses: its behaviour stack, its stash, its
receive timeout, the failure it is being replaced for. Made on first use
(Proto.Actor's ``ensureExtras``), so an actor that uses none of it carries one
class attribute lookup that answers None.

It lives on the instance, not on the cell: a restart builds a fresh instance,
so the next incarnation starts from its initial behaviour, with an empty
stash and no receive timeout, without anything to reset.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._control import REBIND
from ._lifecycle import current_cell

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell
    from ._timers import TimerScheduler

__all__ = ["ActorState", "cell_of", "check_own_task", "request_rebind", "state_of"]


class ActorState:
    """The rarely used state of one actor instance (see the module docstring)."""

    __slots__ = (
        "behaviours",
        "failed_message",
        "failure",
        "last_message",
        "now",
        "stash",
        "timeout",
        "timeout_timers",
        "unstashed",
    )

    def __init__(self) -> None:
        #: Handlers pushed by ``become`` above the initial ``receive``.
        self.behaviours: list[Callable[[Any], Any]] = []
        #: Items set aside by ``stash`` (as the message loop holds them: an
        #: ask's envelope, a traced envelope), oldest first.
        self.stash: deque[Any] = deque()
        #: Items unstashed and not yet put back in front of the mailbox (the
        #: loop does it before its next message).
        self.unstashed: list[Any] = []
        #: The receive timeout in seconds (None: none).
        self.timeout: float | None = None
        #: Its own timers (made by the runtime's timer factory, apart from
        #: ``context.timers`` so that ``cancel_all()`` there leaves it alone).
        self.timeout_timers: TimerScheduler | None = None
        #: The timers' clock, and when the last message was handled on it.
        self.now: Callable[[], float] | None = None
        self.last_message = 0.0
        #: The failure this instance reported and the message it failed on:
        #: ``on_restart(exc, message)`` of its replacement gets them.
        self.failure: BaseException | None = None
        self.failed_message: Any = None


def state_of(instance: Actor) -> ActorState:
    """``instance``'s rarely used state, made on first use."""
    state = instance._actors_state
    if state is None:
        state = instance._actors_state = ActorState()
    return state


def cell_of(instance: Actor) -> Cell | None:
    """The cell of a spawned instance; None for one made outside the runtime
    (a plain instantiation in a unit test)."""
    context = instance.__dict__.get("context")
    return None if context is None else context._cell


def check_own_task(instance: Actor, what: str) -> Cell | None:
    """The rule of the calls that change what an actor's own message loop
    does next (``become``, ``unbecome``, ``unstash_all``, ``unstash``): only
    the actor's own code, in its own task, may make them (its ``__init__``,
    hooks and handlers; not another task, its background work included, nor
    another thread, which would race with the loop). An instance made
    outside the runtime (a unit test's) has no loop: anything goes.

    Returns:
        The instance's cell (None outside the runtime).

    Raises:
        RuntimeError: called from another task or thread, or on an instance
            the cell no longer runs (an ended incarnation's).
    """
    cell = cell_of(instance)
    if cell is None:
        return None
    if current_cell.get() is not cell:
        raise RuntimeError(
            f"{what}() changes what {cell.path} does with its next messages: "
            "call it from this actor's own code (__init__, a hook, a handler), "
            "in its own task, not from another task (its background work "
            "included) or thread"
        )
    return cell


def request_rebind(instance: Actor) -> None:
    """Have the message loop bind ``instance``'s handler again before its next
    message (nothing to do for an instance outside the runtime, or one that
    is not, or no longer, the cell's)."""
    cell = cell_of(instance)
    if cell is None:
        return
    control = cell.control
    if REBIND not in control:
        control.append(REBIND)
