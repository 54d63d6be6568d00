"""The lifecycle vocabulary every runtime module shares: how an actor ended,
the states of its cell, which cell's task is running, and "no item"."""

from __future__ import annotations

import enum
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = [
    "NOTHING",
    "RUNNING",
    "STARTING",
    "STOPPING",
    "SUSPENDED",
    "TERMINATED",
    "CellState",
    "ExitReason",
    "StopReason",
    "as_exit_reason",
    "current_cell",
]


class StopReason(enum.Enum):
    """How an actor ended, when it did not fail."""

    #: It was stopped (``ref.stop()``, ``context.stop()``).
    NORMAL = "normal"
    #: Its parent stopped it (the parent stopped, or restarted, or its strategy
    #: said so).
    PARENT = "stopped by its parent"
    #: Its system shut down.
    SYSTEM = "stopped by the system"

    def __repr__(self) -> str:
        return f"StopReason.{self.name}"


ExitReason: TypeAlias = StopReason | BaseException
"""How an actor ended: a ``StopReason`` when it was stopped, or the
exception of the failure that ended it (its supervisor said stop or gave
up, or it was ``temporary``). What ``ref.join()`` returns and
``Terminated.reason`` holds; tell them apart with ``isinstance(reason,
StopReason)`` or a ``match`` on the two."""


def as_exit_reason(value: object) -> ExitReason:
    """``value`` itself when it is an ``ExitReason``, else a RuntimeError
    naming it: a reason that came from elsewhere (another node's codec) is
    never passed on as something ``ExitReason`` does not cover."""
    if isinstance(value, StopReason | BaseException):
        return value
    return RuntimeError(f"the actor ended with {value!r}")


class CellState(enum.IntEnum):
    """Where an actor is in its life; ordered, so ``state >= STOPPING`` reads
    "stopping or gone"."""

    #: Building an instance and running its start hook.
    STARTING = 0
    #: Handling messages.
    RUNNING = 1
    #: Failed (or told to by a one-for-all / rest-for-one restart): waiting for
    #: its supervisor's directive.
    SUSPENDED = 2
    #: Terminating: children, ``on_stop``, dead letters, watchers.
    STOPPING = 3
    #: Gone.
    TERMINATED = 4


STARTING = CellState.STARTING
RUNNING = CellState.RUNNING
SUSPENDED = CellState.SUSPENDED
STOPPING = CellState.STOPPING
TERMINATED = CellState.TERMINATED

#: The cell whose task is running (set once per actor task).
current_cell: ContextVar[Cell | None] = ContextVar("actors_current_cell", default=None)


class _Nothing:
    """The type of ``NOTHING``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOTHING"


#: "No item": what the message loop holds when it is not handling one. Never
#: None, which is a legal message.
NOTHING: Any = _Nothing()
