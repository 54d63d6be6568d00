"""``Telemetry``: OpenTelemetry traces and metrics for one actor system.

Off by default. ``ActorSystem(telemetry=Telemetry())`` turns it on for that
system. This module never imports OpenTelemetry at import time: ``import
actors`` works without it, and a system without telemetry runs exactly the code
it would run if OpenTelemetry were not installed (the per-message path makes no
telemetry call at all, see ``_traced.py``).

What is recorded:

* Traces. The context active where a message is told, sent or asked travels
  with it and is restored around its handling, so a chain A -> B -> C is one
  trace. Each handled message gets a CONSUMER span ``process <actor class>``
  (OpenTelemetry's messaging conventions: a low-cardinality name,
  ``messaging.system``, ``messaging.operation.type``/``.name``,
  ``messaging.destination.name``: the actor's path) with the actor's path and
  class, the message type, ``tell`` or ``ask``, and the outcome; a failed
  handling records the exception, an error status and ``error.type``. Each
  ask gets a CLIENT span ``ask <actor class>`` on the caller's side. A restart or
  escalation is an event on the failed message's span, which stays open and
  current until the supervisor's directive arrives; the runtime's own
  lifecycle log records (logger ``actors``, ``record.actor_path``,
  ``record.actor_event``: failure, restart, directive, escalation, stop) need
  no telemetry, and the failure record is emitted inside the failed span's
  context, so a logging bridge ties it to the trace. Signals (timer firings,
  ``Terminated``) run in an empty context: they never inherit a stale one.
* Metrics. Counters ``actors.messages.sent``, ``actors.messages.handled``
  (observable counters over plain ints: a message costs an increment, not an
  SDK call), ``actors.messages.dead_lettered``, ``actors.failures``,
  ``actors.restarts``;
  histograms ``actors.message.handling.duration`` and ``actors.mailbox.wait``
  (seconds); an observable gauge ``actors.mailbox.depth`` (queued messages, per
  actor class). Attributes are bounded: the actor class, the pool name for pool
  workers, and a small fixed vocabulary (outcome, dead-letter reason, error
  type); never a message, never a path.

Thread safety: metric readers (OpenTelemetry's ``PeriodicExportingMetricReader``
among them) call the observable instruments' callbacks from their own thread,
at any moment, even while the instruments are being made. The callbacks read
only state that is complete before it is published: the counts and the
watched mailboxes live in plain dicts changed and copied under one lock, an
entry is made whole before it goes in, and a mailbox's statistics are read
defensively. A handler's exception is user data: it is described for spans by
``describe`` and ``record_error``, which never raise.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ._telemetry_labels import (
    OUTCOMES,
    SENT,
    Labels,
    error_type,
    metric_attributes,
)
from .mailbox import Mailbox

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
    from opentelemetry.trace import TracerProvider

    from ._cell import Cell
    from ._pool import PoolRef
    from ._ref import ActorRef
    from ._traced import _Handling

__all__ = ["Telemetry"]

#: Metric attributes as a hashable key.
_Key = tuple[tuple[str, str], ...]

#: Upper bounds, in seconds, of the duration histograms' buckets: actor
#: handlers take microseconds to seconds.
DURATION_BUCKETS = (
    0.000001,
    0.000005,
    0.00001,
    0.00005,
    0.0001,
    0.0005,
    0.001,
    0.005,
    0.01,
    0.05,
    0.1,
    0.5,
    1.0,
    5.0,
    10.0,
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anyio-actors")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        return ""


class Telemetry:
    """OpenTelemetry tracing and metrics for an [``ActorSystem``][actors.ActorSystem].

    Pass one to ``ActorSystem(telemetry=Telemetry())``; one instance may serve
    several systems. Without it a system does no telemetry work at all.

    Args:
        tracer_provider: where spans go (default: the global tracer provider,
            as ``opentelemetry.trace.set_tracer_provider`` set it, looked up
            when spans are made).
        meter_provider: where metrics go (default: the global meter provider).

    Raises:
        ImportError: ``opentelemetry-api`` is not installed.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        from opentelemetry import metrics, trace

        from . import _traced

        self._traced = _traced
        # A reader's thread may call the callbacks as soon as they are
        # registered below: everything they read exists first.
        self._lock = threading.Lock()
        #: Counts by metric attributes (see Labels.counts); changed and copied
        #: under the lock.
        self._counts: dict[tuple[tuple[str, str], ...], list[int]] = {}
        #: The mailboxes the depth gauge reads, by id of their cell: the cell
        #: (weakly: one that never ran is not kept alive) and its metric
        #: attributes. Changed and copied under the lock.
        self._watched: dict[int, tuple[weakref.ref[Cell], _Key]] = {}
        #: The span of a failed message while its actor waits for its
        #: supervisor's directive (restart and escalation events go there);
        #: used in the event loop's thread only.
        self._failing: dict[Cell, _Handling] = {}
        #: The providers given (None: the global ones), for extensions such
        #: as the remote layer that make their own tracer and meter.
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        version = _version()
        self._tracer = trace.get_tracer(
            "actors", version, tracer_provider=tracer_provider
        )
        self._get_current_span = trace.get_current_span
        meter = metrics.get_meter("actors", version, meter_provider=meter_provider)
        # Sent and handled are counted per message: observable counters over
        # plain ints (Labels.counts), so the hot path makes no SDK call for
        # them. The rarer events use synchronous counters.
        meter.create_observable_counter(
            "actors.messages.sent",
            callbacks=[self._observe_sent],
            unit="{message}",
            description="Messages told, sent or asked to actors.",
        )
        meter.create_observable_counter(
            "actors.messages.handled",
            callbacks=[self._observe_handled],
            unit="{message}",
            description="Messages actors handled, by outcome.",
        )
        self._dead_lettered = meter.create_counter(
            "actors.messages.dead_lettered",
            unit="{message}",
            description="Messages that could not be delivered or handled.",
        )
        self._failures = meter.create_counter(
            "actors.failures",
            unit="{failure}",
            description="Actor failures (exceptions from handlers and hooks).",
        )
        self._restarts = meter.create_counter(
            "actors.restarts",
            unit="{restart}",
            description="Actor restarts ordered by supervisors.",
        )
        self._duration = meter.create_histogram(
            "actors.message.handling.duration",
            unit="s",
            description="Time an actor spent handling one message.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self._wait = meter.create_histogram(
            "actors.mailbox.wait",
            unit="s",
            description="Time from tell, send or ask until handling began.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        meter.create_observable_gauge(
            "actors.mailbox.depth",
            callbacks=[self._observe_depth],
            unit="{message}",
            description="Messages waiting in mailboxes, per actor class.",
        )

    def __repr__(self) -> str:
        return f"<Telemetry tracer={self._tracer!r}>"

    # -- called by the runtime when a cell is made or runs (private: they take
    # the runtime's cells; not part of the documented API) ---------------------

    # The runtime's hooks take its private Cell: they are private too (not
    # the API, not on the reference page); only the runtime calls them.

    def _make_ref(self, cell: Cell) -> ActorRef[Any]:
        """The ref of a new cell in a traced system (it carries contexts).

        Called while the cell is being built: its mailbox, parent and factory
        are set, not more.
        """
        metric = metric_attributes(cell)
        labels = self._labels(cell.path, metric)
        if cell.parent is not None and isinstance(cell.mailbox, Mailbox):
            # Not the guardian, nor a shared-queue pool worker's lane. The
            # entry is whole before it is published.
            entry = (weakref.ref(cell), tuple(sorted(metric.items())))
            with self._lock:
                self._watched[id(cell)] = entry
        return self._traced.TracedRef(cell, self, labels)

    def _labels(self, path: str, metric: dict[str, str]) -> Labels:
        key = tuple(sorted(metric.items()))
        with self._lock:
            counts = self._counts.get(key)
            if counts is None:
                counts = self._counts[key] = [0, 0, 0, 0]
        return Labels(path, metric, counts)

    @property
    def _pool_ref(self) -> type[PoolRef[Any]]:
        """The class of a pool's ref in a traced system."""
        return self._traced.TracedPoolRef

    def _instrument(
        self, cell: Cell, receive: Callable[[Any], Any], is_async: bool
    ) -> Callable[[Any], Any]:
        """``receive`` of a new incarnation, wrapped with spans and metrics
        (see ``_traced.instrument``)."""
        wrapped: Callable[[Any], Any] = self._traced.instrument(
            cell, self, receive, is_async
        )
        return wrapped

    def _failure_settled(self, cell: Cell) -> None:
        """The supervisor has decided on the actor's failure (or it stops):
        end the failed message's span, kept open until now."""
        handling = self._failing.pop(cell, None)
        if handling is not None:
            from opentelemetry.context import detach

            detach(handling.token)
            handling.span.end()

    def _unwrap(self, items: Iterable[Any]) -> list[Any]:
        """Items taken from a traced mailbox, each without its trace envelope."""
        traced = self._traced.Traced
        return [item.message if type(item) is traced else item for item in items]

    def _unwrap_one(self, item: Any) -> Any:
        """One item taken from a traced mailbox, without its trace envelope."""
        return item.message if type(item) is self._traced.Traced else item

    # -- hooks (called by ActorSystem's bookkeeping) ------------------------------

    def _dead_letter(self, cell: Cell, message: object, reason: str) -> None:
        """A message could not be delivered or handled."""
        self._dead_lettered.add(1, {**_metric(cell), "actor.reason": reason})
        span = self._get_current_span()
        if span.is_recording():
            span.add_event(
                "actor.dead_letter",
                {
                    "actor.path": cell.path,
                    "actor.reason": reason,
                    "actor.message.type": type(message).__qualname__,
                },
            )

    def _failure(self, cell: Cell, exc: BaseException) -> None:
        """An actor failed (a handler or a lifecycle hook raised)."""
        self._failures.add(1, {**_metric(cell), "error.type": error_type(exc)})

    def _restart(self, cell: Cell) -> None:
        """A supervisor restarts the actor."""
        self._restarts.add(1, _metric(cell))
        handling = self._failing.get(cell)
        if handling is not None:
            handling.span.add_event("actor.restart", {"actor.path": cell.path})

    def _escalation(self, cell: Cell) -> None:
        """A supervisor escalates its child's failure (and fails itself)."""
        for child in list(cell.children.values()):
            handling = self._failing.get(child)
            if handling is not None:
                handling.span.add_event(
                    "actor.escalation",
                    {"actor.path": child.path, "actor.supervisor.path": cell.path},
                )

    def _stopped(self, cell: Cell) -> None:
        """The actor terminated."""
        with self._lock:
            entry = self._watched.get(id(cell))
            if entry is not None and entry[0]() is cell:
                del self._watched[id(cell)]

    # -- observable instruments ---------------------------------------------

    # In a metric reader's thread, any time: see the module docstring.

    def _observe_sent(self, options: CallbackOptions) -> Iterable[Observation]:
        from opentelemetry.metrics import Observation

        with self._lock:
            counted = list(self._counts.items())
        return [
            Observation(counts[SENT], dict(key))
            for key, counts in counted
            if counts[SENT]
        ]

    def _observe_handled(self, options: CallbackOptions) -> Iterable[Observation]:
        from opentelemetry.metrics import Observation

        with self._lock:
            counted = list(self._counts.items())
        return [
            Observation(counts[index], {**dict(key), "actor.outcome": outcome})
            for key, counts in counted
            for index, outcome in OUTCOMES.items()
            if counts[index]
        ]

    def _observe_depth(self, options: CallbackOptions) -> Iterable[Observation]:
        from opentelemetry.metrics import Observation

        with self._lock:
            watched = list(self._watched.items())
        depths: dict[_Key, int] = {}
        gone: list[int] = []
        for ident, (cell_ref, key) in watched:
            cell = cell_ref()
            if cell is None:  # a cell that never ran, so never said stopped
                gone.append(ident)
                continue
            try:
                # The loop's thread may change the mailbox meanwhile: the
                # figure is a snapshot that may be off by the messages in
                # flight, never an error.
                queued = max(cell.mailbox.statistics().queued_messages, 0)
            except Exception:
                queued = 0
            depths[key] = depths.get(key, 0) + queued
        if gone:
            with self._lock:
                for ident in gone:
                    entry = self._watched.get(ident)
                    if entry is not None and entry[0]() is None:
                        del self._watched[ident]
        return [Observation(depth, dict(key)) for key, depth in depths.items()]


def _metric(cell: Cell) -> dict[str, str]:
    labels = getattr(cell.ref, "labels", None)
    return labels.metric if isinstance(labels, Labels) else metric_attributes(cell)
