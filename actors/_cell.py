"""The actor cell: one actor's runtime state and its control inbox.

An ``ActorRef`` is a thin handle on a cell. The cell's task (``_actor_task``;
none while the actor is idle, see there) runs incarnation after incarnation
of the actor: it builds an instance with the
factory and starts it (``_incarnation``), drains the mailbox in batches
(``_dispatch``) until a control command interrupts it (``_faults`` obeys them,
``_supervisor`` sends them), and finally terminates (``_termination``). Death
watch and children have their own modules.

This module holds the state those modules share, and the cell's control inbox:
commands queued beside the mailbox, never behind its backlog, and the waits for
them. The state a message rarely needs (watchers, restart statistics, backoff,
timers) lives in a ``CellExtras`` made on first use, so the per-message
state stays small.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import Context
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import anyio

from ._control import EXIT, STOP_REQUESTED, Command
from ._lifecycle import (
    NOTHING,
    STARTING,
    STOPPING,
    CellState,
    ExitReason,
    StopReason,
    current_cell,
)
from ._system_signals import WAKE
from .mailbox import Mailbox, Signal

if TYPE_CHECKING:
    from ._actor import Actor
    from ._context import ActorContext
    from ._pipe import ActorTasks
    from ._ref import ActorRef
    from ._runtime import Runtime
    from ._strategies import RestartIntensity, RestartType
    from ._timers import TimerScheduler

__all__ = ["NO_CHILDREN", "Cell", "CellExtras"]

#: The children of a cell that has none: read-only (a write raises
#: TypeError), typed as the dict the first child's spawn puts in its place
#: (``Runtime.spawn``), so reads need no test and no cast.
NO_CHILDREN: Final[dict[str, Cell]] = MappingProxyType({})  # type: ignore[assignment]


class CellExtras:
    """What an actor rarely uses: made on first use (``Cell.ensure_extras``)."""

    __slots__ = (
        "backoff_attempt",
        "escalated",
        "intensity",
        "last_restart",
        "own_intensity",
        "remote_watched",
        "tasks",
        "timers",
        "watchers",
        "watching",
    )

    def __init__(self) -> None:
        #: Cells watching this one (they get its Terminated).
        self.watchers: set[Cell] = set()
        #: Cells this one watches, and refs without a local cell (remote).
        self.watching: set[Cell | ActorRef[Any]] = set()
        #: Another node watches it: its termination is reported to the
        #: system's remote extension.
        self.remote_watched = False
        #: Its keyed timers (``context.timers``).
        self.timers: TimerScheduler | None = None
        #: Its background work (``context.run``, ``context.ask``).
        self.tasks: ActorTasks | None = None
        #: Its restarts of its own children, for the restart intensity; reset
        #: when it is itself restarted.
        self.intensity: RestartIntensity | None = None
        #: Its own restarts, when its supervisor counts them per child (the
        #: default guardian): kept across its restarts, gone with the cell.
        self.own_intensity: RestartIntensity | None = None
        #: Its own consecutive restarts with backoff, and when the last was.
        self.backoff_attempt = 0
        self.last_restart = 0.0
        #: Its failure being reported is an escalation: it stopped its
        #: children first, so there is nothing left to resume.
        self.escalated = False


class Cell:
    """Runtime state of one actor (see the module docstring)."""

    __slots__ = (
        "__weakref__",  # telemetry keeps cells in weak collections
        "_terminated",
        "args",
        "batch",
        "carry",
        "children",
        "context",
        "context_vars",
        "control",
        "control_event",
        "current",
        "drain",
        "ended",
        "extras",
        "factory",
        "handling",
        "incarnation",
        "instance",
        "kwargs",
        "mailbox",
        "name",
        "parent",
        "path",
        "reason",
        "ref",
        "restart_type",
        "runtime",
        "started_ok",
        "state",
        "stop_reason",
        "stop_requested",
        "wake_pending",
    )

    def __init__(
        self,
        runtime: Runtime,
        parent: Cell | None,
        name: str,
        factory: Callable[..., Actor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        capacity: int | None,
        drain: int,
        restart_type: RestartType,
        mailbox: Any,
        ref: Callable[[Cell], ActorRef[Any]],
        context: Callable[[Cell], ActorContext],
    ) -> None:
        #: What the actors of its system share (the system's internals).
        self.runtime = runtime
        self.parent = parent
        self.name = name
        self.path: str = f"{parent.path}/{name}" if parent is not None else f"/{name}"
        self.factory = factory
        self.args = args
        self.kwargs = kwargs
        #: Its mailbox (a pool's shared-queue workers bring their own).
        self.mailbox: Mailbox[Any] = Mailbox(capacity) if mailbox is None else mailbox
        #: Items taken from the mailbox per wake.
        self.drain = drain
        self.restart_type = restart_type
        #: Live children by name, in start order: NO_CHILDREN until the
        #: first (most actors never have one; an empty dict is 64 bytes).
        self.children: dict[str, Cell] = NO_CHILDREN
        self.instance: Actor | None = None
        self.incarnation = 0
        self.state: CellState = STARTING
        #: Control commands, oldest first: a list, not a deque (rarely more
        #: than one queued; an empty list is 56 bytes, an empty deque 760).
        self.control: list[Command] = []
        #: Set while the actor's task waits for a command (``wait_control``).
        self.control_event: anyio.Event | None = None
        #: A Wake signal is queued: no second one is needed.
        self.wake_pending = False
        self.stop_requested = False
        self.stop_reason: ExitReason = StopReason.NORMAL
        #: How it ended (set on termination): what join() returns.
        self.reason: ExitReason = StopReason.NORMAL
        #: Terminated (``finish`` ran): what ``terminated`` reports, kept as
        #: a flag so that the event is made only for someone who waits.
        self.ended = False
        self._terminated: anyio.Event | None = None
        #: Items taken from the mailbox, not handled yet (a control command
        #: interrupted the batch, or a handler failed in it); an empty tuple
        #: when none (an empty list is 56 bytes per actor).
        self.carry: Sequence[Any] = ()
        #: The batch the message loop is handling (``handling`` is in it),
        #: empty between batches: what ``in_hand`` counts.
        self.batch: Sequence[Any] = ()
        #: The ask being handled (NOTHING otherwise).
        self.current: Any = NOTHING
        #: The item the message loop hands to a handler, as it holds it (what
        #: ``stash()`` sets aside; ``_stash.STASHED`` once it did); NOTHING
        #: between items (see ``_stash``).
        self.handling: Any = NOTHING
        #: The instance's start hook has finished.
        self.started_ok = False
        self.extras: CellExtras | None = None
        #: What the next run starts in while the actor is idle (no task):
        #: the context variables its last run left (None: not idle yet).
        self.context_vars: Context | None = None
        #: Its ref (chosen by the spawner: a traced system's refs carry trace
        #: contexts) and its actor's ``context``.
        self.ref: ActorRef[Any] = ref(self)
        self.context: ActorContext = context(self)

    def __repr__(self) -> str:
        return f"<Cell {self.path}>"

    @property
    def terminated(self) -> anyio.Event:
        """Set once the actor has terminated; made on first use (most actors
        are never joined): check ``ended`` to know without making it."""
        event = self._terminated
        if event is None:
            event = self._terminated = anyio.Event()
            if self.ended:
                event.set()
        return event

    def in_hand(self) -> int:
        """Messages (not signals) the message loop took from the mailbox and
        has not given to a handler yet: the rest of its batch after the item
        being handled (the whole batch before the first; one too many at most
        when a batch holds one object twice), or what a control command set
        aside."""
        rest: Sequence[Any] = self.carry
        if not rest:
            batch = self.batch
            handling = self.handling
            rest = batch
            for position, item in enumerate(batch):
                if item is handling:
                    rest = batch[position + 1 :]
                    break
        return sum(1 for item in rest if not isinstance(item, Signal))

    def mark_terminated(self) -> None:
        """The actor has terminated: wake whoever waits for it."""
        self.ended = True
        event = self._terminated
        if event is not None:
            event.set()

    def remove_child(self, child: Cell) -> None:
        """``child`` has terminated: no longer one of ``children``."""
        children = self.children
        if children.get(child.name) is child:
            del children[child.name]
            if not children:  # the dict keeps its table: let it go
                self.children = NO_CHILDREN

    def ensure_extras(self) -> CellExtras:
        """The cell's rarely used state, made on first use."""
        extras = self.extras
        if extras is None:
            extras = self.extras = CellExtras()
        return extras

    # -- the control inbox ------------------------------------------------------

    def command(self, command: Command) -> None:
        """Queue a control command and make sure the actor's task sees it."""
        self.control.append(command)
        self.kick()

    def kick(self) -> None:
        """Wake the actor's task to look at its control queue: through the
        event it waits on, else through a Wake signal in its mailbox."""
        event = self.control_event
        if event is not None:
            event.set()
        elif not self.wake_pending and not self.mailbox.closed:
            self.wake_pending = True
            self.mailbox.send_signal(WAKE)

    async def wait_control(self) -> None:
        """Wait until a command is queued or a stop is requested (the actor's
        own task only)."""
        event = self.control_event = anyio.Event()
        try:
            if not self.control and not self.stop_requested:
                await event.wait()
        finally:
            self.control_event = None

    async def backoff(self, delay: float) -> None:
        """Wait ``delay`` seconds; only a stop request ends the wait early.

        Other commands arriving meanwhile stay queued for the next incarnation:
        each one sets the event and we wait again (``wait_control`` would
        return at once while the queue is not empty, and spin).
        """
        clock = self.runtime.clock
        with (
            anyio.move_on_after(delay) if clock is None else clock.move_on_after(delay)
        ):
            while not self.stop_requested:
                event = self.control_event = anyio.Event()
                try:
                    await event.wait()
                finally:
                    self.control_event = None

    def request_stop(self, reason: ExitReason = StopReason.NORMAL) -> None:
        """Stop after the current message; queued messages become dead letters."""
        if self.stop_requested or self.state >= STOPPING:
            return
        if (
            reason is StopReason.NORMAL
            and self.restart_type == "permanent"
            and self.parent is not None
            and current_cell.get() is self
        ):
            # Erlang's permanent child: even a normal exit is restarted, so it
            # goes to the supervisor like a failure instead of ending the actor.
            if EXIT not in self.control:  # stopping twice exits once
                self.command(EXIT)
            return
        self.stop_requested = True
        self.stop_reason = reason
        # Also a command: the message loop tests only its control queue
        # before each message (StopRequested).
        self.control.append(STOP_REQUESTED)
        self.mailbox.close()  # later tells raise; wakes an idle actor
        self.kick()

    @property
    def alive(self) -> bool:
        """Not stopping yet: what ``ref.is_alive`` says."""
        return self.state < STOPPING and not self.stop_requested
