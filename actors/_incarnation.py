"""One incarnation of an actor: its instance built and started, then stopped.

A restart ends the old incarnation (children, timers, ``on_stop``) and starts a
new one from the factory, on the same cell: same ref, same mailbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._actor import Actor, Construction, constructing
from ._children import stop_children
from ._errors import describe
from ._invoke import call_hook
from ._lifecycle import STARTING, StopReason
from ._log import log_extra, logger
from ._receive_timeout import cancel_receive_timeout
from ._stash import put_back
from ._strategies import check_strategy_attribute

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["build_instance", "start_incarnation", "stop_incarnation"]


async def start_incarnation(
    cell: Cell, cause: BaseException | None, restarting: bool
) -> None:
    """Build an instance with the factory and run its start hook (``on_start``,
    or ``on_restart(cause, message)`` after a restart).

    Raises:
        Exception: the factory's or the hook's failure (the caller reports it
            to the supervisor); a TypeError if the factory returned something
            that is not an Actor or with a wrong ``supervisor_strategy``.
    """
    cell.incarnation += 1
    cell.started_ok = False
    cell.state = STARTING
    old = cell.instance
    cell.instance = None  # the failed one is gone, whatever the factory does
    if restarting:
        logger.info(
            "actor %s restarts (incarnation %d) after %s",
            cell.path,
            cell.incarnation,
            describe(cause) if cause is not None else "a normal exit",
            extra=log_extra(cell, "restart"),
        )
    instance = build_instance(cell)
    cell.instance = instance
    if restarting:
        if instance._actors_restart_message:
            await call_hook(instance.on_restart, cause, _failed_message(old, cause))
        else:  # an override written before on_restart took the message
            await call_hook(instance.on_restart, cause)
    else:
        await call_hook(instance.on_start)
    cell.started_ok = True


def build_instance(cell: Cell) -> Actor:
    """Call ``cell``'s factory; the instance has its ``context`` from
    ``__init__`` on (``Actor.context`` reads the construction).

    Raises:
        Exception: the factory's failure.
        TypeError: the factory returned something that is not an Actor, or
            one with a wrong ``supervisor_strategy``.
    """
    token = constructing.set(Construction(cell))
    try:
        instance = cell.factory(*cell.args, **cell.kwargs)
    finally:
        constructing.reset(token)
    if not isinstance(instance, Actor):
        raise TypeError(
            f"the factory of {cell.path} returned an instance of "
            f"{type(instance).__qualname__}, not an Actor"
        )
    check_strategy_attribute(instance, cell.path)
    instance.context = cell.context
    return instance


def _failed_message(old: Actor | None, cause: BaseException | None) -> object:
    """The message the replaced instance failed on, if ``cause`` is its own
    failure (a sibling restarted by one-for-all has none)."""
    state = None if old is None else old._actors_state
    if state is None or cause is None or state.failure is not cause:
        return None
    return state.failed_message


async def stop_incarnation(cell: Cell) -> None:
    """End the current instance: its stash, children, timers, ``on_stop``."""
    # First, before anything awaits: what is stashed goes back in front of
    # the mailbox (a restart handles it first, termination settles it).
    put_back(cell)
    cancel_receive_timeout(cell.instance)
    # A system shutdown reaches every actor as SYSTEM (what join() reports),
    # not as PARENT just because it travels down the tree.
    system_stop = cell.stop_requested and cell.stop_reason is StopReason.SYSTEM
    await stop_children(cell, StopReason.SYSTEM if system_stop else StopReason.PARENT)
    extras = cell.extras
    if extras is not None:
        # The next incarnation supervises new children with a fresh restart
        # history (Erlang: a restarted supervisor starts with none), or it
        # would give up again at its first child failure after an escalation.
        extras.intensity = None
        if extras.timers is not None:
            extras.timers.cancel_all()
    instance = cell.instance
    if instance is not None and cell.started_ok:
        try:
            await call_hook(instance.on_stop)
        except Exception as exc:  # reported, but the actor still stops
            logger.error(
                "actor %s: on_stop failed: %s",
                cell.path,
                describe(exc),
                exc_info=(type(exc), exc, exc.__traceback__),
                extra=log_extra(cell, "failure"),
            )
            cell.runtime.count_failure(cell, exc)
        if cell.children:  # spawned by on_stop: they end with the incarnation
            await stop_children(
                cell, StopReason.SYSTEM if system_stop else StopReason.PARENT
            )
    cell.started_ok = False
