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

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell
    from ._timers import TimerScheduler

__all__ = ["ActorState", "cell_of", "request_rebind", "state_of"]


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
