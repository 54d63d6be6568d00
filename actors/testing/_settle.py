"""``settle``: wait until every actor of a system is idle."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import anyio

from .._lifecycle import RUNNING, STARTING, SUSPENDED
from ._blocked import wait_all_blocked
from ._timefactor import DEFAULT_TIMEOUT, dilated

if TYPE_CHECKING:
    from .._cell import Cell
    from .._system import ActorSystem

__all__ = ["busy_actors", "settle"]

#: Seconds between two looks once every task is blocked and some actor is
#: still busy (it waits on something outside the event loop, or on the clock).
_RETRY = 0.005


def _cells(cell: Cell) -> Iterator[Cell]:
    yield cell
    for child in list(cell.children.values()):
        yield from _cells(child)


def _idle(cell: Cell) -> bool:
    """Parked in its mailbox's receive (nothing left to take), or gone."""
    if cell.ended:
        return True
    if cell.carry:
        return False
    mailbox = cell.mailbox
    # A Mailbox parks its consumer in _consumer, a shared-queue worker's
    # mailbox in _parked: either way the actor waits for a message.
    return (
        getattr(mailbox, "_consumer", None) is not None
        or getattr(mailbox, "_parked", None) is not None
    )


def _queued(cell: Cell) -> str:
    try:
        return f"{len(cell.mailbox)} queued"
    except TypeError:  # a shared-queue worker's mailbox has no length
        return "a pool worker"


def _doing(cell: Cell) -> str:
    state = cell.state
    if state == RUNNING:
        return "in a handler"
    if state == STARTING:
        return "starting"
    if state == SUSPENDED:
        return "failed, waiting for its supervisor"
    return "stopping"


def busy_actors(system: ActorSystem) -> list[str]:
    """The paths of the system's actors that are not idle right now, each with
    its state and how many items wait in its mailbox."""
    guardian = system._runtime.guardian
    if guardian is None:
        return []
    return [
        f"{cell.path} ({_doing(cell)}, {_queued(cell)})"
        for cell in _cells(guardian)
        if not _idle(cell)
    ]


async def settle(system: ActorSystem, timeout: float | None = None) -> None:
    """Return once every actor of ``system`` is idle: waiting for a message
    with none queued (or terminated), every other task blocked.

    An actor inside a handler, suspended by a failure, or waiting out a
    restart backoff is busy. On a system with a ``ManualClock``, advance the
    clock for what waits on it.

    Args:
        system: a running system.
        timeout: seconds to wait at most (default 3 s times the time factor).

    Raises:
        AssertionError: some actors were still busy after ``timeout`` seconds
            (they are listed).
    """
    __tracebackhide__ = True  # pytest: a failure starts at the test's line
    if timeout is None:
        timeout = dilated(DEFAULT_TIMEOUT)
    deadline = anyio.current_time() + timeout
    while True:
        await wait_all_blocked()
        busy = busy_actors(system)
        if not busy:
            return
        if anyio.current_time() >= deadline:
            raise AssertionError(
                f"the actors did not settle within {timeout} s; busy: "
                + ", ".join(busy)
            )
        await anyio.sleep(_RETRY)
