"""The message loop: an incarnation drains its mailbox in batches (Akka's
Dispatch).

Per wake the actor takes up to ``drain`` items. Before each one it looks at
its control queue (a command or a stop request interrupts the batch; what is
left of it is carried over); then an ask is answered with the handler's
result, a signal goes to the runtime's handling of it, a message to
``receive``. A handler's exception is a failure for the supervisor; the rest
of the batch waits for the directive.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import copy_context
from typing import TYPE_CHECKING, Any

from ._actor import UNHANDLED
from ._behaviour import bind
from ._control import Restart, Stop
from ._death_watch import deliver_terminated
from ._envelope import Ask
from ._errors import UnhandledMessage
from ._faults import failed, handle_control
from ._invoke import PLAIN, awaitable_class, stray_failure
from ._lifecycle import NOTHING
from ._replies import ErrorReply
from ._stash import stashed_current
from ._system_signals import Terminated, Wake
from .mailbox import EndOfMailbox, Signal

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["handle_signal", "run_loop"]

#: Classes of items the loop has handled as plain messages (neither an
#: ``Ask`` envelope nor a ``Signal``): an item of one of them goes straight to
#: the handler, with one set lookup instead of an ``is Ask`` test and an
#: ``isinstance`` call per message. Shared by every actor, never holds an
#: ``Ask`` or ``Signal`` class (added only after both tests said no), and
#: bounded, as ``_invoke.PLAIN`` (past ``TOLD_MAX`` classes the rest take the
#: two tests every time).
TOLD: set[type] = set()
TOLD_MAX = 4096


async def run_loop(
    cell: Cell, resume: Callable[[Cell, None], None] | None = None
) -> None:
    """Handle messages until a control command or a stop interrupts.

    ``resume``: the run may end idle, registering ``resume(cell, None)``
    with the mailbox (``wait_detached``) and returning: the task ends, and
    the next item (or the mailbox's close) schedules a new run. It does so
    when the mailbox is empty at its first look (an actor just started, no
    mail yet; that look comes before the checkpoint every other look makes),
    and when the system's idle tick finds it parked since the tick before
    (``_hibernation``): a hot actor keeps its task and parks (no task is
    started per message), one that stayed idle gives it up.

    Returns:
        Only when the run ended idle (``resume`` registered).

    Raises:
        Restart: the supervisor restarts the actor.
        Stop: the actor stops (requested, or its mailbox closed and drained).
    """
    mailbox = cell.mailbox
    drain = cell.drain
    control = cell.control
    instance = cell.instance
    assert instance is not None
    runtime = cell.runtime
    backend = runtime.backend
    plain = PLAIN
    told = TOLD
    # Messages go to ``handler``, signals to ``receive``: the current
    # behaviour, bound again only after a Rebind command (become, unstash, a
    # receive timeout). ``handler`` is ``receive`` unless a receive timeout
    # or telemetry wraps it (_behaviour.bind).
    receive, handler, is_async = bind(cell, instance)
    # ``item``: the item being handled, NOTHING while control commands run.
    item: Any = NOTHING
    # Checkpoint, then take: yield once, take what came meanwhile, park only
    # if nothing did (Mailbox.receive_many_unchecked, written out here for an
    # actor's own Mailbox: no coroutine frame of the mailbox's per wake). A
    # pool worker's mailbox has its own hand-off rules: its receive is used.
    assert backend is not None  # set when the system was entered
    checkpoint = backend.checkpoint
    take = getattr(mailbox, "take_ready", None)
    # The system's idle tick, for a run that may end idle (not the
    # guardian's, nor a pool worker's on a shared queue).
    hibernation = runtime.hibernation if resume is not None else None
    registered = False  # in the tick's table: from this run's first park on
    first = resume  # its first look may end it at once (then None)
    try:
        while True:
            cell.batch = ()  # between batches: nothing in hand (Cell.in_hand)
            if cell.carry:
                batch, cell.carry = cell.carry, []
            else:
                try:
                    if take is None:
                        batch = await mailbox.receive_many_unchecked(drain)
                    else:
                        if first is not None:
                            # The first look of a run, before its checkpoint:
                            # with nothing queued (a new actor, no mail yet)
                            # it ends idle, holding no task, one trip through
                            # the event loop saved per spawn (queued mail, or
                            # a closed mailbox: checkpoint, then take, as
                            # every look). Its next run starts in what this
                            # one leaves (the context variables its hooks set).
                            if mailbox.wait_detached(first, cell):
                                cell.context_vars = copy_context()
                                return
                            first = None
                        await checkpoint()
                        batch = take(drain)
                        while not batch:
                            if not registered and hibernation is not None:
                                hibernation.enter(cell)  # it parks with a task
                                registered = True
                            if await mailbox.wait_ready() and (
                                # Interrupted by the idle tick (parked since
                                # the tick before): it gives up its task, as
                                # at a first look, unless mail came meanwhile.
                                resume is not None
                                and mailbox.wait_detached(resume, cell)
                            ):
                                cell.handling = NOTHING  # it keeps no message
                                cell.context_vars = copy_context()
                                return
                            batch = take(drain)
                except EndOfMailbox:
                    raise Stop from None
            cell.batch = batch
            index = 0
            item = NOTHING
            try:
                for item in batch:
                    if control or cell.stop_requested:
                        cell.carry = batch[index:]
                        pending, item = item, NOTHING  # not being handled yet
                        cell.handling = NOTHING  # the hooks commands run cannot stash
                        if await handle_control(cell):
                            # The behaviour changed or messages were unstashed:
                            # bind again, go on from cell.carry.
                            receive, handler, is_async = bind(cell, instance)
                            break
                        cell.carry = []
                        item = pending
                    index += 1
                    # What stash() sets aside (see _stash.py): a slot store, no call.
                    cell.handling = item
                    kind = type(item)
                    # A class seen before as a plain message's (the common case)
                    # skips both tests below: one set lookup, no isinstance call.
                    if kind not in told:
                        if kind is Ask:
                            cell.current = item
                            if is_async:
                                result = await handler(item.message)
                            else:
                                result = handler(item.message)
                                # A coroutine from a sync wrapper of an async def: a
                                # set lookup decides, no call (see _invoke.PLAIN).
                                if result.__class__ not in plain and awaitable_class(
                                    result.__class__
                                ):
                                    result = await result
                            if cell.current is not item:  # stashed: answered later
                                continue
                            cell.current = NOTHING
                            if result is UNHANDLED:  # counted as a dead letter already
                                item.fail(
                                    UnhandledMessage(f"{cell.path} did not handle it"),
                                    backend,
                                )
                            # An abandoned answer is a dead letter to the ref that was
                            # asked (a pool's, for its worker), as Ask.lost counts it
                            # when the asker leaves after the hand-off.
                            elif result.__class__ is ErrorReply:  # no failure
                                if not item.error_reply(result.error, backend):
                                    runtime.dead_letter(
                                        item.recipient, item.message, "ask abandoned"
                                    )
                            elif not item.reply(result, backend):
                                runtime.dead_letter(
                                    item.recipient, item.message, "ask abandoned"
                                )
                            continue
                        if isinstance(item, Signal):
                            await handle_signal(cell, item, receive)
                            continue
                        if len(told) < TOLD_MAX:
                            told.add(kind)
                    if is_async:
                        await handler(item)
                    else:
                        result = handler(item)
                        # None, what most handlers return, needs no lookup.
                        if (
                            result is not None
                            and result.__class__ not in plain
                            and awaitable_class(result.__class__)
                        ):
                            await result
            except (Restart, Stop):
                raise
            except Exception as exc:
                # ``item`` is NOTHING when a control command failed (a child's
                # failure escalated): ``cell.carry`` holds the rest of the batch
                # already, behind the messages a Rebind unstashed meanwhile (not
                # rebuilt from the batch: that would lose them).
                cell.current = NOTHING
                if item is not NOTHING:
                    cell.carry = batch[index:]
                await failed(cell, exc, item)
                # Resumed: go on with the rest of the batch.
            except BaseException as exc:
                failure = stray_failure(exc)
                if failure is not None:  # not a teardown: the handler failed
                    cell.current = NOTHING
                    if item is not NOTHING:  # (see above)
                        cell.carry = batch[index:]
                    await failed(cell, failure, item)
                    continue
                # Cancelled (the system is being torn down), or SystemExit: keep
                # what this batch has not finished, the item being handled
                # included (unless its handler stashed it), so that termination
                # counts them as dead letters. ``item`` is NOTHING while control
                # commands run, before the pending item began: ``cell.carry``
                # holds the rest then, messages unstashed meanwhile first.
                if item is not NOTHING:
                    handling = not stashed_current(cell, item)
                    cell.carry = batch[index - 1 if handling else index :]
                raise

    finally:
        if registered:
            assert hibernation is not None
            hibernation.leave(cell)


async def handle_signal(cell: Cell, item: Signal, receive: Any) -> None:
    """A runtime signal reached the front of the mailbox."""
    if type(item) is Wake:  # it only made the loop look at its control queue
        cell.wake_pending = False
        return
    if type(item) is Terminated:
        await deliver_terminated(cell, item, receive)
        return
    deliver = getattr(item, "deliver", None)
    if deliver is not None:  # timer firings and other runtime signals
        await deliver(cell, receive)
        return
    cell.runtime.dead_letter(cell, item, "unknown signal")
