"""One incarnation of an actor: its instance built and started, then stopped.

The first instance is built by the spawner (``construct``, called by
``Runtime.spawn``), so a factory that fails at once raises from ``spawn``, as
OTP's ``start_child`` returns the ``init`` error. A restart ends the old
incarnation (children, timers, ``on_stop``) and starts a new one from the
factory, in the actor's own task, on the same cell: same ref, same mailbox.
Either way the factory runs with the new cell as the current one.
"""

from __future__ import annotations

import inspect
from functools import partial
from typing import TYPE_CHECKING

import anyio

from ._actor import Actor, Construction, constructing
from ._children import stop_children
from ._errors import describe
from ._invoke import call_hook
from ._lifecycle import STARTING, StopReason, current_cell
from ._log import log_extra, logger
from ._pipe import end_tasks
from ._receive_timeout import cancel_receive_timeout
from ._stash import put_back
from ._strategies import check_strategy_attribute

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["construct", "start_incarnation", "stop_incarnation"]


def construct(cell: Cell) -> Actor:
    """A new instance from ``cell``'s factory, made with ``cell`` as the
    current cell (what the instance's ``__init__`` sees as its own) and its
    ``context`` there from ``__init__`` on (``Actor.context`` reads the
    construction).

    Raises:
        Exception: whatever the factory raised.
        TypeError: the factory returned something that is not an Actor, one
            with a wrong ``supervisor_strategy``, or the instance of another
            actor (alive or ended).
        TypeError, ValueError: the class's ``_actors_check_built`` found the
            instance misconfigured (a durable actor's persistence id, codec
            or stores).
    """
    token = current_cell.set(cell)
    construction = Construction(cell)
    building = constructing.set(construction)
    try:
        instance = cell.factory(*cell.args, **cell.kwargs)
    finally:
        construction.active = False  # for the tasks started meanwhile
        constructing.reset(building)
        current_cell.reset(token)
    if not isinstance(instance, Actor):
        if inspect.iscoroutine(instance):
            instance.close()  # never left un-awaited
            raise TypeError(
                f"the factory of {cell.path} returned a coroutine: a factory "
                "is a plain callable that returns the actor (async def cannot "
                "be one; start async work in on_start)"
            )
        raise TypeError(
            f"the factory of {cell.path} returned an instance of "
            f"{type(instance).__qualname__}, not an Actor"
        )
    owner = instance.__dict__.get("context")
    if owner is not None and owner is not cell.context:
        # Another actor's (alive or not): this one's context would replace
        # that actor's own (its self_ref, its children, its stash), and an
        # ended one's leftovers (behaviour, stash) would carry over.
        raise TypeError(
            f"the factory of {cell.path} returned the instance of "
            f"{owner.path}: a factory makes a new instance at each call "
            "(pass the class, or a lambda that calls it)"
        )
    check_strategy_attribute(instance, cell.path)
    instance.context = cell.context
    check = type(instance)._actors_check_built
    if check is not None:
        check(instance)
    return instance


async def start_incarnation(
    cell: Cell, cause: BaseException | None, restarting: bool
) -> None:
    """Build an instance with the factory (the first one: unless the spawner
    built it already) and run its start hook (``on_start``, or
    ``on_restart(cause, message)`` after a restart).

    Raises:
        Exception: the factory's or the hook's failure (the caller reports it
            to the supervisor); a TypeError if the factory returned something
            that is not an Actor, with a wrong ``supervisor_strategy``, another
            actor's instance or, on a restart, the instance it replaces.
    """
    cell.incarnation += 1
    cell.started_ok = False
    cell.state = STARTING
    old = instance = cell.instance
    if restarting or instance is None:
        cell.instance = None  # the failed one is gone, whatever the factory does
        if restarting:
            logger.info(
                "actor %s restarts (incarnation %d) after %s",
                cell.path,
                cell.incarnation,
                describe(cause) if cause is not None else "a normal exit",
                extra=log_extra(cell, "restart"),
            )
        instance = construct(cell)
        if instance is old:
            # Not a fresh instance: it would keep the failed one's behaviour,
            # stash and state (Akka refuses this too).
            raise TypeError(
                f"the factory of {cell.path} returned the instance it replaces: "
                "a factory must build a new instance each time"
            )
        cell.instance = instance
    if restarting:
        how = instance._actors_restart_message
        if how is True:
            await call_hook(instance.on_restart, cause, _failed_message(old, cause))
        elif how:  # a keyword-only message
            message = _failed_message(old, cause)
            await call_hook(partial(instance.on_restart, message=message), cause)
        else:  # an override written before on_restart took the message
            await call_hook(instance.on_restart, cause)
    else:
        await call_hook(instance.on_start)
    cell.started_ok = True


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
    # Background work (context.run, context.ask) ends first, with the
    # incarnation that started it: nothing of it runs beside on_stop.
    await end_tasks(cell)
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
        # Once per instance, whatever happens in it (a crash below stops the
        # cell again, without the hook).
        cell.started_ok = False
        crash: BaseException | None = None
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
        except anyio.get_cancelled_exc_class():
            raise  # torn down (a stray one is a StrayCancellation, above)
        except BaseException as exc:
            # SystemExit, KeyboardInterrupt, a BaseException of the user's:
            # not supervised. The incarnation still ends (what on_stop
            # started too), then it goes on to shut the system down.
            crash = exc
        if cell.children:  # spawned by on_stop: they end with the incarnation
            await stop_children(
                cell, StopReason.SYSTEM if system_stop else StopReason.PARENT
            )
        await end_tasks(cell)  # started by on_stop: the same
        if crash is not None:
            raise crash
    cell.started_ok = False
