"""What telemetry knows about an actor, computed once, and how it records a
user's exception: shared by [``Telemetry``][actors.Telemetry] (``_telemetry.py``) and
the per-message side (``_traced.py``). No OpenTelemetry import at module level.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from ._pool_spawn import PoolSupervisor

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from ._cell import Cell

__all__ = [
    "ABANDONED",
    "SYSTEM",
    "ERROR",
    "OK",
    "OUTCOMES",
    "SENT",
    "Labels",
    "describe",
    "error_type",
    "metric_attributes",
    "record_error",
]

#: ``messaging.system`` of every span.
SYSTEM = "anyio-actors"


#: Stands for the text of an exception whose ``str()`` raised (as Python's
#: own tracebacks write it).
UNPRINTABLE = "<exception str() failed>"


def describe(exc: BaseException) -> str:
    """``"TypeName: message"`` for a span status; never raises, even for an
    exception whose ``__str__`` does (a handler's exception is user data)."""
    try:
        text = str(exc)
    except Exception:
        text = UNPRINTABLE
    return f"{type(exc).__name__}: {text}"


def error_type(exc: BaseException) -> str:
    """``error.type`` of a failure: the exception's class name
    (``type(exc).__qualname__``), on failed spans and on the
    ``actors.failures`` metric alike, so a dashboard can join them."""
    return type(exc).__qualname__


def record_error(span: Span, exc: BaseException) -> None:
    """Record ``exc`` on ``span`` (an ``exception`` event), set its error
    status and its ``error.type`` attribute (OpenTelemetry's convention for a
    failed operation), as ``span.record_exception`` and ``span.set_status``
    do, without ever raising: the SDK's ``record_exception`` calls
    ``str(exc)``."""
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type(exc))
    try:
        span.record_exception(exc)
    except Exception:
        try:
            stacktrace = "".join(traceback.format_exception(exc))
        except Exception:
            stacktrace = ""
        kind = type(exc)
        span.add_event(
            "exception",
            {
                "exception.type": f"{kind.__module__}.{kind.__qualname__}",
                "exception.message": UNPRINTABLE,
                "exception.stacktrace": stacktrace,
                "exception.escaped": "False",
            },
        )
    span.set_status(Status(StatusCode.ERROR, describe(exc)))


#: Indexes into ``Labels.counts``.
SENT, OK, ERROR, ABANDONED = range(4)
#: ``actor.outcome`` of a handled message, by index.
OUTCOMES = {OK: "ok", ERROR: "error", ABANDONED: "abandoned"}


class Labels:
    """What the instruments need to know about one actor (or pool), computed
    once: span names and attributes, metric attributes, and the counts behind
    the observable counters.

    Span names are low-cardinality, as OpenTelemetry's messaging conventions
    require of them (a tracing backend lists, groups and samples by name):
    ``process <actor class>`` and ``ask <actor class>``, the class being the
    ``actor.class`` metric attribute (a pool's: its workers'). Forty workers
    of one class make two names, not eighty. The concrete path, one per
    actor, is on the span as ``messaging.destination.name`` and
    ``actor.path``; a pool worker's pool as ``actor.pool``.
    """

    __slots__ = (
        "ask_attributes",
        "ask_name",
        "counts",
        "metric",
        "path",
        "process_name",
        "span",
    )

    def __init__(self, path: str, metric: dict[str, str], counts: list[int]) -> None:
        self.path = path
        #: Metric attributes: bounded values only.
        self.metric = metric
        #: Messages sent, handled ok, failed, abandoned (see SENT, OK, ...),
        #: shared by every actor with the same metric attributes. Plain ints:
        #: a message costs an increment, the SDK reads them at collection.
        self.counts = counts
        actor = metric["actor.class"]
        self.process_name = f"process {actor}"
        #: Attributes every handling span starts with.
        self.span: dict[str, str] = {
            "messaging.system": SYSTEM,
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "messaging.destination.name": path,
            "actor.path": path,
            **metric,
        }
        self.ask_name = f"ask {actor}"
        self.ask_attributes: dict[str, str] = {
            "messaging.system": SYSTEM,
            "messaging.operation.type": "send",
            "messaging.operation.name": "ask",
            "messaging.destination.name": path,
            "actor.path": path,
            **metric,
        }


def metric_attributes(cell: Cell) -> dict[str, str]:
    """An actor's metric attributes: its class, and its pool if it is a worker."""
    metric = {"actor.class": actor_class(cell)}
    pool = pool_name(cell)
    if pool is not None:
        metric["actor.pool"] = pool
    return metric


def actor_class(cell: Cell) -> str:
    """The actor's class name (the factory's, if the factory is not a class)."""
    factory = cell.factory
    return getattr(factory, "__qualname__", None) or type(factory).__qualname__


def pool_name(cell: Cell) -> str | None:
    """The name of the pool a worker belongs to, None for other actors."""
    parent = cell.parent
    if parent is None:
        return None
    return parent.name if parent.factory is PoolSupervisor else None
