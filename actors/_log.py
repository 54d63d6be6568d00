"""The runtime's logger (``actors``), the extras of its lifecycle records, and
how failures are logged ([``FailureLogging``][actors.FailureLogging])."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._errors import describe

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = [
    "FailureLogging",
    "check_log_failures",
    "log_extra",
    "log_failure",
    "logger",
]

logger = logging.getLogger("actors")


def log_extra(cell: Cell, event: str) -> dict[str, str]:
    """``extra`` of the lifecycle log records: ``record.actor_path`` and
    ``record.actor_event`` ("failure", "restart", "directive", "escalation",
    "stop"), so handlers can filter on them."""
    return {"actor_path": cell.path, "actor_event": event}


@dataclass(frozen=True, slots=True)
class FailureLogging:
    """How an actor's failure (an exception from a handler or a hook) is
    logged on the ``actors`` logger: one record per failure, at ``level``,
    with the traceback when ``traceback`` is True.

    Given as ``ActorSystem(log_failures=...)`` (every failure) or as a
    strategy's ``log_failures`` (the failures of that supervisor's children,
    as Akka's ``loggingEnabled``); ``True`` means ``FailureLogging()``,
    ``False`` logs nothing. The failures are still counted
    (``system.failures``), supervised and, with telemetry, recorded.

    Args:
        level: the records' level (a ``logging`` level number, default
            WARNING).
        traceback: whether the records carry the exception's traceback.

    Raises:
        TypeError: ``level`` is not an int, or ``traceback`` is not a bool.
    """

    level: int = logging.WARNING
    traceback: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.level, bool) or not isinstance(self.level, int):
            raise TypeError(
                f"level must be a logging level (an int), not {self.level!r}"
            )
        if not isinstance(self.traceback, bool):
            raise TypeError(f"traceback must be a bool, not {self.traceback!r}")


#: What ``log_failures=True`` means.
DEFAULT_FAILURE_LOGGING = FailureLogging()


def check_log_failures(
    value: object, name: str = "log_failures", inherit: bool = False
) -> FailureLogging | None:
    """A ``log_failures`` argument made a
    [``FailureLogging``][actors.FailureLogging] (None: log nothing).
    ``inherit``: None is allowed too, and stays None.

    Raises:
        TypeError: it is neither a bool nor a FailureLogging (nor None where
            ``inherit``).
    """
    if value is True:
        return DEFAULT_FAILURE_LOGGING
    if value is False:
        return None
    if isinstance(value, FailureLogging) or (inherit and value is None):
        return value
    allowed = "a bool, a FailureLogging" + (" or None" if inherit else "")
    raise TypeError(f"{name} must be {allowed}, not {value!r}")


def log_failure(cell: Cell, exc: BaseException, what: str = "failed") -> None:
    """Log ``cell``'s failure as its supervisor's strategy says (its
    ``log_failures``), else as its system does."""
    setting = cell.runtime.log_failures
    parent = cell.parent
    if parent is not None:
        # The supervisor's strategy, read as _supervisor.strategy_of does
        # (without its checks: a broken attribute is reported there).
        strategy = (
            parent.runtime.strategy
            if parent.parent is None
            else getattr(parent.instance, "supervisor_strategy", None)
        )
        if strategy is not None:
            own = getattr(strategy, "log_failures", None)
            if own is not None:  # checked when the strategy was made
                setting = DEFAULT_FAILURE_LOGGING if own is True else own or None
    if not isinstance(setting, FailureLogging):
        return
    logger.log(
        setting.level,
        "actor %s %s: %s",
        cell.path,
        what,
        describe(exc),
        exc_info=(type(exc), exc, exc.__traceback__) if setting.traceback else None,
        extra=log_extra(cell, "failure"),
    )
