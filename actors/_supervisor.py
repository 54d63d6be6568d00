"""A parent's side of supervision: deciding on and carrying out a directive.

Runs in the parent's own task, between its messages, when a child reports a
failure (``_faults.failed`` sends ``ChildFailed``). Semantics: Erlang/OTP's
supervisor (strategies, restart types, intensity) and Akka's directives and
backoff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ._control import RESUME, RestartNow, Start, Suspend
from ._errors import describe
from ._lifecycle import RUNNING, SUSPENDED, StopReason
from ._log import logger
from ._strategies import (
    Directive,
    OneForOne,
    RestartIntensity,
    SupervisorStrategy,
    check_strategy_attribute,
)

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["handle_child_failure", "strategy_of"]

DEFAULT_STRATEGY = OneForOne()


def strategy_of(cell: Cell) -> SupervisorStrategy:
    """The strategy a cell applies to its children."""
    if cell.parent is None:
        return cell.runtime.strategy
    strategy = getattr(cell.instance, "supervisor_strategy", None)
    if strategy is None:
        return DEFAULT_STRATEGY
    # Checked at spawn and at each start; this catches a later reassignment.
    check_strategy_attribute(cell.instance, cell.path)
    assert isinstance(strategy, SupervisorStrategy)
    return strategy


async def handle_child_failure(
    parent: Cell,
    child: Cell,
    exc: BaseException | None,
    incarnation: int,
    escalated: bool = False,
) -> None:
    """Apply the parent's strategy to a failed child (``exc`` None: a permanent
    child exited normally; ``escalated``: the child escalated, its own children
    are stopped). Raises the child's exception to escalate."""
    if (
        parent.state != RUNNING
        or child.state != SUSPENDED
        or child.incarnation != incarnation
        or parent.children.get(child.name) is not child
    ):
        return  # stale: the child was restarted or stopped meanwhile
    strategy = strategy_of(parent)
    directive = Directive.RESTART if exc is None else strategy.decide(exc)
    if directive is Directive.RESUME and (escalated or not child.started_ok):
        # Nothing to resume: the instance failed in on_start / on_restart, or
        # it escalated and stopped its children (a supervisor, a pool, would
        # go on without them). A restart, so it counts against the intensity
        # (a resume would retry the start forever).
        directive = Directive.RESTART
    if directive is Directive.RESTART and child.restart_type == "temporary":
        directive = Directive.STOP
    logger.info(
        "supervisor %s: %s %s after %s",
        parent.path,
        directive.value,
        child.path,
        describe(exc) if exc is not None else "a normal exit",
        extra={"actor_path": parent.path, "actor_event": "directive"},
    )
    if directive is Directive.RESUME:
        child.command(RESUME)
        return
    if directive is Directive.STOP:
        child.request_stop(exc if exc is not None else StopReason.NORMAL)
        return
    if directive is Directive.ESCALATE:
        await _escalate(parent, child, exc, "escalates")
        return
    if parent.parent is None and parent.runtime.guardian_per_child:
        # The default guardian: each top-level actor's restarts on their own
        # (Akka classic's guardian), so unrelated ones never add up.
        child_extras = child.ensure_extras()
        intensity = child_extras.own_intensity
        if intensity is None:
            intensity = child_extras.own_intensity = RestartIntensity()
    else:  # OTP: the supervisor's restarts, all children together
        parent_extras = parent.ensure_extras()
        intensity = parent_extras.intensity
        if intensity is None:
            intensity = parent_extras.intensity = RestartIntensity()
    clock = parent.runtime.clock
    now = anyio.current_time() if clock is None else clock.now()
    if not intensity.allow(strategy, now):
        await _escalate(
            parent,
            child,
            exc,
            f"exceeded its restart intensity ({strategy.max_restarts} restarts "
            f"within {strategy.within} s)",
        )
        return
    parent.runtime.count_restart(child)
    delay = 0.0
    extras = child.ensure_extras()
    if strategy.backoff is not None:
        if now - extras.last_restart > 2 * strategy.backoff.max_delay:
            extras.backoff_attempt = 0
        delay = strategy.backoff.delay(extras.backoff_attempt)
        extras.backoff_attempt += 1
    extras.last_restart = now
    if strategy.scope == "one":
        child.command(RestartNow(exc, delay))
        return
    siblings = list(parent.children.values())
    affected = (
        siblings if strategy.scope == "all" else siblings[siblings.index(child) :]
    )
    # Stop in reverse start order, then start again in start order (Erlang).
    restartable = []
    for cell in reversed(affected):
        if not cell.alive:
            continue
        if cell.restart_type == "temporary":
            cell.request_stop(StopReason.PARENT)
            await cell.terminated.wait()
            continue
        done = anyio.Event()
        cell.command(Suspend(done))
        await done.wait()  # set however the suspend ends, termination included
        restartable.append(cell)
    if delay:
        await parent.backoff(delay)
        if parent.stop_requested:
            return  # a stop during backoff wins: the suspended siblings stop with us
    for cell in reversed(restartable):
        if not cell.alive:
            continue  # stopped while suspended: it terminates instead
        done = anyio.Event()
        cell.command(Start(exc, done))
        await done.wait()  # set however the start ends, termination included


async def _escalate(
    parent: Cell, child: Cell, exc: BaseException | None, why: str
) -> None:
    """Stop all the parent's children, then fail the parent with ``exc``."""
    logger.error(
        "supervisor %s %s: stopping its children and failing",
        parent.path,
        why,
        extra={"actor_path": parent.path, "actor_event": "escalation"},
    )
    parent.runtime.count_escalation(parent)
    # In reverse start order, as stop_children, but the failed child ends
    # with its own failure (what its watchers and join() see).
    for cell in reversed(list(parent.children.values())):
        cell.request_stop(
            exc if cell is child and exc is not None else StopReason.PARENT
        )
        await cell.terminated.wait()
    parent.ensure_extras().escalated = True  # see handle_child_failure
    if exc is None:
        raise RuntimeError(f"{parent.path} {why}")
    raise exc
