"""The control protocol between a supervisor and its children.

Commands travel beside the mailbox, in the cell's control queue, so a stop or a
restart is never stuck behind a backlog: the message loop looks at them before
every message (see ``_faults.py``). Each command is a small frozen class; only
this module and the modules that send or obey a command know its fields.

Two exceptions unwind an actor's task out of its message loop: ``Restart``
into the next incarnation, ``Stop`` into termination.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = [
    "ChildFailed",
    "Command",
    "Rebind",
    "Exit",
    "Restart",
    "RestartNow",
    "Resume",
    "Start",
    "Stop",
    "StopRequested",
    "Suspend",
]


@dataclass(frozen=True, slots=True)
class RestartNow:
    """Supervisor -> failed child: replace the instance (one-for-one), after
    ``delay`` seconds of backoff once the old incarnation has ended."""

    cause: BaseException | None
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Resume:
    """Supervisor -> failed child: keep the instance, go on with the next
    message."""


@dataclass(frozen=True, slots=True)
class Suspend:
    """Supervisor -> sibling, first half of a one-for-all / rest-for-one
    restart: end the current incarnation, set ``done``, then wait for
    ``Start``."""

    done: anyio.Event


@dataclass(frozen=True, slots=True)
class Start:
    """Supervisor -> suspended sibling, second half: start a new incarnation;
    ``done`` is set once it has started (or failed to)."""

    cause: BaseException | None
    done: anyio.Event


@dataclass(frozen=True, slots=True)
class Exit:
    """A ``permanent`` child stopped itself: it goes to its supervisor like a
    failure (Erlang's permanent restart type)."""


@dataclass(frozen=True, slots=True)
class ChildFailed:
    """Child -> parent: ``child`` failed with ``cause`` (None: a permanent
    child exited) in incarnation ``incarnation``; the parent decides.
    ``escalated``: the failure is the child's escalation (it stopped its own
    children), so it cannot be resumed."""

    child: Cell
    cause: BaseException | None
    incarnation: int
    escalated: bool = False


@dataclass(frozen=True, slots=True)
class Rebind:
    """The actor -> its own message loop: the handler changed (``become``,
    ``unbecome``, a receive timeout set or cleared) or messages were
    unstashed; the loop binds the handler again and puts the unstashed
    messages first, before its next message. Queued here because the loop
    looks at this queue before every message anyway: a handler that never
    changes costs nothing."""


@dataclass(frozen=True, slots=True)
class StopRequested:
    """The actor's stop was requested (``Cell.request_stop``, which sets
    ``stop_requested`` too): queued with the flag, so that the message
    loop's one test before each message (is the queue empty?) sees a stop
    as well. Whoever runs it stops the actor (``Stop``)."""


Command = (
    RestartNow | Resume | Suspend | Start | Exit | ChildFailed | Rebind | StopRequested
)

#: The one Resume, Exit, Rebind and StopRequested there need to be.
RESUME = Resume()
EXIT = Exit()
REBIND = Rebind()
STOP_REQUESTED = StopRequested()


class Restart(Exception):
    """Unwinds the message loop into the next incarnation."""

    def __init__(
        self,
        cause: BaseException | None,
        done: anyio.Event | None = None,
        delay: float = 0.0,
    ):
        self.cause = cause
        #: set once the new incarnation has started (or failed to)
        self.done = done
        #: backoff seconds, waited after the old incarnation has ended
        self.delay = delay


class Stop(Exception):
    """Unwinds the message loop into termination."""
