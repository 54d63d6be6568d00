"""Fault handling, the child's side: a failure goes to the supervisor, and the
actor obeys the control commands it sends (Akka's FaultHandling).

The message loop calls ``handle_control`` before every message when a
command or a stop is pending. A failed actor is SUSPENDED in ``failed``
until its supervisor's directive arrives: resume returns to the loop, a
restart or a stop unwinds it (``Restart`` / ``Stop``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._actor_state import state_of
from ._control import (
    REBIND,
    ChildFailed,
    Command,
    Exit,
    Rebind,
    Restart,
    RestartNow,
    Resume,
    Start,
    Stop,
    StopRequested,
    Suspend,
)
from ._envelope import Ask
from ._incarnation import stop_incarnation
from ._invoke import add_note_once
from ._lifecycle import NOTHING, RUNNING, SUSPENDED
from ._log import log_failure
from ._stash import message_of, stashed_current, take_unstashed
from ._supervisor import handle_child_failure

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["failed", "handle_control", "run_command", "wait_for_start"]


async def handle_control(cell: Cell) -> bool:
    """Run the queued control commands.

    Returns:
        Whether one was a ``Rebind``: the loop binds its handler again,
        and goes on with ``cell.carry`` (unstashed messages first).

    Raises:
        Restart: a command restarts the actor.
        Stop: a stop was requested.
    """
    control = cell.control
    rebind = False
    while True:
        if cell.stop_requested:
            raise Stop
        if not control:
            return rebind
        command = control.pop(0)
        if command is REBIND:
            take_unstashed(cell)
            rebind = True
        else:
            await run_command(cell, command)


async def run_command(cell: Cell, command: Command) -> bool:
    """Run one command. Returns True when it resolves a waiting failure
    (a resume)."""
    match command:
        case RestartNow(cause=cause, delay=delay):
            raise Restart(cause, None, delay)
        case Resume():
            return True
        case Suspend(done=done):  # first half of a one-for-all / rest-for-one
            try:
                await stop_incarnation(cell)
            finally:  # the supervisor waits for it, whatever happens here
                done.set()
            await wait_for_start(cell)
        case Exit():  # a permanent child stopped itself: supervised
            await failed(cell, None, NOTHING)
        case ChildFailed(child=child, cause=cause, incarnation=incarnation):
            await handle_child_failure(
                cell, child, cause, incarnation, command.escalated
            )
        case Start():  # not suspended (any more): nothing to start
            command.done.set()
        case Rebind():  # no loop to rebind: the incarnation has ended
            pass
        case StopRequested():
            raise Stop
    return False


async def wait_for_start(cell: Cell) -> None:
    """Suspended by the supervisor: wait for its Start (or a stop).

    Raises:
        Restart: the Start came.
        Stop: a stop was requested.
    """
    control = cell.control
    while True:
        while not control:
            if cell.stop_requested:
                raise Stop
            await cell.wait_control()
        command = control.pop(0)
        match command:
            case Start(cause=cause, done=done):
                raise Restart(cause, done)
            case ChildFailed() | Resume() | Exit() | Rebind():
                # Its children were stopped with its incarnation, and a resume
                # or an exit of an incarnation that has ended means nothing.
                pass
            case _:
                await run_command(cell, command)


async def failed(cell: Cell, exc: Exception | None, item: Any) -> None:
    """The instance failed (or a permanent child exited, ``exc`` None): settle
    the item (``NOTHING`` when there is none), report to the parent, and
    obey its directive. Returns when resumed.

    Raises:
        Restart: the supervisor restarts the actor.
        Stop: the supervisor stops it (or the guardian itself failed).
    """
    system = cell.runtime
    telemetry = system.telemetry
    # The handler stashed it (as the loop held it, envelope and all): it
    # stays in the stash, neither a dead letter nor failed to its asker.
    kept = stashed_current(cell, item)
    if telemetry is None:
        await _failed(cell, exc, item, kept)
        return
    # The failed message's span stays open and current until the directive
    # (see _traced.instrument): what happens meanwhile is recorded on it.
    item = telemetry._unwrap_one(item)
    try:
        await _failed(cell, exc, item, kept)
    finally:
        telemetry._failure_settled(cell)


async def _failed(cell: Cell, exc: Exception | None, item: Any, kept: bool) -> None:
    system = cell.runtime
    if exc is not None:
        log_failure(cell, exc)  # as its supervisor's strategy or the system says
        system.count_failure(cell, exc)
        instance = cell.instance
        if instance is not None:  # what on_restart(exc, message) gets
            state = state_of(instance)
            state.failure = exc
            state.failed_message = message_of(item)
        if kept:  # the handler stashed it first: it stays in the stash
            pass
        elif type(item) is Ask:
            # The asker re-raises this same object: its traceback holds the
            # actor-side frames, and the note names where it came from (once,
            # however often the object is raised).
            add_note_once(exc, f"raised by actor {cell.path} while handling an ask")
            item.fail(exc, system.backend)
            system.dead_letter(cell, item.message, "handler failed")
        elif item is not NOTHING:
            # Whatever its kind (told, a timer's, a piped result, a
            # Terminated): the message the failed handler got.
            system.dead_letter(cell, message_of(item), "handler failed")
    parent = cell.parent
    if parent is None:  # the guardian itself failed: the system fails
        if exc is not None:
            system.record_failure(exc)
        raise Stop
    cell.state = SUSPENDED
    extras = cell.extras
    escalated = False
    if extras is not None and extras.escalated:
        escalated, extras.escalated = True, False
    parent.command(ChildFailed(cell, exc, cell.incarnation, escalated))
    # Our own children's failures (and a pending permanent exit) wait until we
    # are resumed: handled now, while SUSPENDED, they would be dropped as stale
    # and the child left suspended forever. A restart or a stop ends those
    # children anyway.
    deferred: list[Command] = []
    control = cell.control
    while True:
        while not control:
            if cell.stop_requested:
                raise Stop
            await cell.wait_control()
        command = control.pop(0)
        if isinstance(command, ChildFailed | Exit | Rebind):
            deferred.append(command)
        elif await run_command(cell, command):
            cell.state = RUNNING
            control[:0] = deferred
            return
