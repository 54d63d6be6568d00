"""Termination: the last step of an actor's task.

The incarnation is stopped (unless the task was cancelled), then everything
that could still be waiting on the actor is settled: what was queued or taken
and not handled becomes dead letters, every pending ask fails with
``ActorStopped``, a supervisor waiting for this actor to suspend or start is
released, the parent forgets it, watchers get ``Terminated``, joiners wake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ._children import request_stop_of_children, unlink_from_parent
from ._control import Start, Suspend
from ._death_watch import notify_watchers
from ._envelope import Ask
from ._errors import ActorStopped, describe
from ._incarnation import stop_incarnation
from ._lifecycle import NOTHING, STOPPING, TERMINATED, StopReason
from ._log import log_extra, logger
from ._pipe import cancel_tasks
from ._stash import put_back
from .mailbox import Signal

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["finish", "terminate"]


async def terminate(cell: Cell, cancelled: bool) -> None:
    """Terminate ``cell``; ``cancelled``: its task was cancelled, so the
    incarnation's graceful stop (children waited for, ``on_stop``) is
    skipped. Never raises a cancellation: a cancelled graceful stop goes on
    as a cancelled one."""
    cell.state = STOPPING
    cell.stop_requested = True
    cell.mailbox.close()
    if not cancelled:
        try:
            await stop_incarnation(cell)
        except anyio.get_cancelled_exc_class():
            # The system's shutdown_timeout ran out (or it was cancelled from
            # outside): what is left of the stop is skipped.
            cancelled = True
        except BaseException as exc:
            # on_stop raised SystemExit, KeyboardInterrupt or another
            # BaseException (its incarnation has ended): the system shuts
            # down and it surfaces from the async with; the cell terminates.
            cell.runtime.crash(cell, exc)
            cancelled = True
    if cancelled:
        request_stop_of_children(cell, StopReason.SYSTEM)
        cancel_tasks(cell)
        extras = cell.extras
        if extras is not None and extras.timers is not None:
            extras.timers.cancel_all()
    finish(cell)


def finish(cell: Cell) -> None:
    """The part of termination that never waits: settle what is left, release
    waiters, unlink, notify. Also for a cell whose task never ran (cancelled
    before its first step, as asyncio does to a task cancelled at once)."""
    cell.state = STOPPING
    cell.stop_requested = True
    cell.mailbox.close()
    reason = cell.stop_reason
    put_back(cell)  # what is stashed is settled with the rest
    cell.instance = None
    _settle_leftovers(cell)
    # A supervisor may be waiting for this actor to suspend or start.
    for command in cell.control:
        if isinstance(command, Suspend | Start):
            command.done.set()
    cell.control.clear()
    cell.state = TERMINATED
    cell.reason = reason
    unlink_from_parent(cell)
    notify_watchers(cell, reason)
    logger.info(
        "actor %s stopped: %s",
        cell.path,
        describe(reason) if isinstance(reason, BaseException) else repr(reason),
        extra=log_extra(cell, "stop"),
    )
    cell.runtime.on_terminated(cell)
    cell.mark_terminated()


def _settle_leftovers(cell: Cell) -> None:
    """Dead letters for what was not handled; failures for pending asks."""
    system = cell.runtime
    backend = system.backend
    current = cell.current
    leftovers = [*cell.carry, *cell.mailbox.take_all()]
    if current is not NOTHING:
        leftovers.insert(0, current)
    if system.telemetry is not None:  # take off the trace envelopes
        leftovers = system.telemetry._unwrap(leftovers)
    cell.current = NOTHING
    cell.carry = ()
    stopped = ActorStopped(f"{cell.path} stopped before replying")
    for item in leftovers:
        if isinstance(item, Signal):
            # Runtime signals end with the actor, except those carrying
            # something of the user's (a piped result): a dead letter each.
            undelivered = getattr(item, "undelivered", None)
            if undelivered is not None:
                undelivered(cell)
            continue
        if type(item) is Ask:
            if not item.done:
                item.fail(stopped, backend)
                system.dead_letter(cell, item.message, "actor stopped")
        else:
            system.dead_letter(cell, item, "actor stopped")
