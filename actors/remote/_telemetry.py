"""The remote layer's telemetry: W3C trace context in NATS headers, spans
that join the sender's trace, and metrics per peer.

Imported only when the node's system has a [``Telemetry``][actors.Telemetry]
([``Remote.start``][actors.remote.Remote.start]), so it imports
OpenTelemetry at the top. Turned on, it is the node's observer: it fills the
hook points of ``_observer`` (around an outgoing tell, send and ask, and an
inbound frame, tell and ask), as OpenTelemetry's instrumentations wrap the
instrumented call; it replaces no method and reads only the node's public
counters (``Remote.statistics``). A node without telemetry runs the plain
code, with one ``is None`` test at each hook point.

Traces:

* A frame carries the W3C ``traceparent`` (and ``tracestate``) of the
  context its envelopes were sent from, in its NATS headers (``HPUB``). The
  writer puts consecutive envelopes sent from one context into one frame, so
  a burst of tells from one handler still shares frames; a change of context
  starts a new frame.
* A remote ask gets a CLIENT span ``ask <template>`` (``messaging.system`` =
  ``nats``) whose context its frame carries; a tell or send carries the
  context it was told from.
* On the receiving node each tell and ask gets a CONSUMER span
  ``receive <template>`` (``messaging.system`` = ``nats``), child of the
  sender's context, and is handled inside it: the local actor's own handling
  span is its child, so one trace runs across both nodes. An ask's receive
  span lasts until its answer is sent, and records a failure.
* Span names are low-cardinality, as OpenTelemetry's messaging conventions
  ask: ``<template>`` is the actor's path with its per-instance parts
  templated (``/user/worker-{n}``, see ``path_template``), never a node or a
  subject; the concrete path is in ``messaging.destination.name`` (and
  ``actor.path``), the template in ``messaging.destination.template``. A
  failed span has the error status, the exception as an event, and
  ``error.type`` (the exception's class).

Metrics are observable instruments over the counts the layer keeps anyway
(a message costs no SDK call), made once per Telemetry however many nodes it
traces; attributes: ``actors.remote.node`` (this node's name),
``actors.remote.peer`` (the peer node's name: bounded by the nodes of the
system) and, where it applies,
``actors.remote.direction`` (``sent`` or ``received``):

* ``actors.remote.frames``, ``actors.remote.bytes``,
  ``actors.remote.envelopes``: NATS messages, their payload bytes, and the
  envelopes in them (received: frames from nodes, numbered).
* ``actors.remote.batches``: the writer's wakes, each publishing what it took
  in one go (sent only).
* ``actors.remote.reconnects``: reconnections of the node's NATS client (no
  peer attribute).
* ``actors.remote.dead_letters``: dead letters the remote layer made, with
  ``actor.reason`` (sent to a node that is gone, or from a peer to a missing
  actor, a full mailbox or a stopped actor).
* ``actors.remote.frames.lost``: frames lost, with ``actors.remote.cause``:
  ``returned`` (NATS said nobody listened: counted on the sender, whose
  envelopes in it are dead letters or failed asks) or ``gap`` (the frame
  numbers from a peer skipped some: counted on the receiver).

Thread safety: metric readers call the callbacks from their own thread; the
callbacks copy the node's dicts (one C call each under the GIL) and read
plain ints, so a figure may be off by what is in flight, never an error.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable
from typing import Any, Protocol

import anyio
from opentelemetry import metrics, trace
from opentelemetry.context import Context, attach, detach
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import (
    TraceContextTextMapPropagator,
)

from .. import AskTimeout, Telemetry
from ._node import NodeAddress
from ._observer import AskCall
from ._peers import RemoteStatistics
from ._ref import RemoteRef


class Counted(Protocol):
    """What the metrics read of a node (``Remote``): its public counters."""

    node_name: str

    def statistics(self) -> RemoteStatistics:
        """The node's counters now."""


__all__ = ["SYSTEM", "RemoteTelemetry", "path_template"]

#: ``messaging.system`` of the remote layer's spans.
SYSTEM = "nats"
_PEER = "actors.remote.peer"
_DIRECTION = "actors.remote.direction"
_OUTCOME = "actor.outcome"


def record_error(span: Span, exc: BaseException) -> None:
    """Record ``exc`` on ``span``, set its error status and ``error.type``
    (the exception's class, as the runtime's ``actors.failures`` metric
    names it), never raising (an exception is user data: its ``str()`` may
    raise)."""
    span.set_attribute("error.type", type(exc).__qualname__)
    try:
        span.record_exception(exc)
        text = f"{type(exc).__name__}: {exc}"
    except Exception:
        text = type(exc).__name__
    span.set_status(Status(StatusCode.ERROR, text))


def path_template(path: str) -> str:
    """``path`` with its per-instance parts templated, for low-cardinality
    span names: a part of a segment (split at ``-`` and ``_``) that is all
    digits becomes ``{n}``, one that is a hex token of six or more
    characters with a digit becomes ``{id}``; ``/user/worker-12`` ->
    ``/user/worker-{n}``, ``pool-hasher-a3f9c1`` -> ``pool-hasher-{id}``."""
    template = _templates.get(path)
    if template is None:
        template = _SEPARATED.sub(_template_part, path)
        if len(_templates) < _MAX_TEMPLATES:
            _templates[path] = template
    return template


def _template_part(match: re.Match[str]) -> str:
    part = match.group(0)
    if part.isdigit():
        return "{n}"
    if len(part) >= 6 and _HEX(part) and any(c.isdigit() for c in part):
        return "{id}"
    return part


#: The parts of a path between separators (``/``, ``-``, ``_``, ``.``).
_SEPARATED = re.compile(r"[^/\-_.]+")
_HEX = re.compile(r"[0-9a-f]+").fullmatch
#: Templates made so far, by path (bounded: a cache, not a table of record).
_templates: dict[str, str] = {}
_MAX_TEMPLATES = 4096


class _Receipt:
    """One inbound tell or ask under its CONSUMER span (see ``receive``)."""

    __slots__ = ("_token", "context", "span")

    def __init__(self, span: Span, context: Context) -> None:
        self.span = span
        self.context = context
        self._token: object = attach(context)

    def detach(self) -> None:
        token = self._token
        if token is not None:
            self._token = None
            detach(token)  # type: ignore[arg-type]

    def end(self, error: BaseException | None) -> None:
        span = self.span
        if error is None:
            span.set_attribute(_OUTCOME, "ok")
        else:
            span.set_attribute(_OUTCOME, "error")
            record_error(span, error)
        span.end()


class RemoteTelemetry:
    """The observer of one traced node (see the module docstring): it fills
    the remote layer's hook points (``_observer``) and makes the node's
    metrics.

    Args:
        telemetry: the system's telemetry (its providers are used).
        remote: the node, started (its public counters are read).
    """

    def __init__(self, telemetry: Telemetry, remote: Counted) -> None:
        self.remote = remote
        self._tracer = trace.get_tracer(
            "actors.remote", tracer_provider=telemetry.tracer_provider
        )
        self._propagator = TraceContextTextMapPropagator()
        self._get_current_span = trace.get_current_span
        #: The headers made last, and the span context they were made for: a
        #: burst of tells from one span shares one dict (and so its frames).
        self._last_context: object = None
        self._last_headers: dict[str, str] | None = None
        #: Totals by (metric, direction, peer, incarnation) as last read:
        #: peers that are gone keep counting (counters never go back).
        self._totals: dict[tuple[str, str, str, str], int] = {}
        _metrics_of(telemetry).add(self)

    # -- the sending side ----------------------------------------------------

    def headers(self, context: Context | None = None) -> dict[str, str] | None:
        """The W3C headers of ``context`` (default: the current one), or
        None when it has no valid span."""
        span_context = self._get_current_span(context).get_span_context()
        if not span_context.is_valid:
            return None
        if span_context is self._last_context:
            return self._last_headers
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context)
        self._last_context = span_context
        self._last_headers = carrier
        return carrier

    async def ask(
        self, call: AskCall, ref: RemoteRef[Any], message: object, timeout: float
    ) -> Any:
        """An outgoing ask under a CLIENT span whose context its frame
        carries; the span records the outcome and any exception."""
        path = ref.address.path
        template = path_template(path)
        span = self._tracer.start_span(
            f"ask {template}",
            kind=SpanKind.CLIENT,
            attributes={
                "messaging.system": SYSTEM,
                "messaging.operation.type": "send",
                "messaging.operation.name": "ask",
                "messaging.destination.name": path,
                "messaging.destination.template": template,
                "actor.path": path,
                _PEER: ref.node.node,
                "actor.message.type": type(message).__qualname__,
            },
        )
        outcome = "error"
        try:
            headers = self.headers(set_span_in_context(span))
            value = await call(ref, message, timeout, headers)
            outcome = "ok"
            return value
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        except BaseException as exc:
            if isinstance(exc, AskTimeout):
                outcome = "timeout"
            record_error(span, exc)  # never raises
            raise
        finally:
            span.set_attribute(_OUTCOME, outcome)
            span.end()

    # -- the receiving side --------------------------------------------------

    def frame(self, headers: dict[str, str] | None) -> object:
        """The context an inbound frame's headers carry."""
        return self._propagator.extract(headers) if headers else Context()

    def receive(
        self, parent: object, kind: str, path: str, sender: NodeAddress | None
    ) -> _Receipt:
        """An inbound tell or ask under a CONSUMER span, child of the frame's
        context; the local actor's handling joins it. An ask's span lasts
        until its answer is sent."""
        assert parent is None or isinstance(parent, Context)
        template = path_template(path)
        span = self._tracer.start_span(
            f"receive {template}",
            parent,
            SpanKind.CONSUMER,
            {
                "messaging.system": SYSTEM,
                "messaging.operation.type": "receive",
                "messaging.operation.name": "receive",
                "messaging.destination.name": path,
                "messaging.destination.template": template,
                "actor.path": path,
                "actor.message.kind": kind,
                _PEER: "" if sender is None else sender.node,
            },
        )
        return _Receipt(span, set_span_in_context(span, parent))

    # -- metrics ---------------------------------------------------------------

    def _total(self, key: tuple[str, str, str, str], value: int) -> None:
        if value > self._totals.get(key, 0):
            self._totals[key] = value

    def _read(self, stats: RemoteStatistics) -> None:
        """Fold the live counts into the totals."""
        for peer, counts in stats.peers.items():
            node, incarnation = peer.node, peer.incarnation
            if counts.sending:
                self._total(("frames", "sent", node, incarnation), counts.frames_sent)
                self._total(("bytes", "sent", node, incarnation), counts.bytes_sent)
                self._total(
                    ("envelopes", "sent", node, incarnation), counts.envelopes_sent
                )
                self._total(("batches", "sent", node, incarnation), counts.batches)
                self._total(
                    ("returned", "sent", node, incarnation), counts.frames_returned
                )
            if counts.receiving:
                self._total(
                    ("frames", "received", node, incarnation), counts.frames_received
                )
                self._total(
                    ("bytes", "received", node, incarnation), counts.bytes_received
                )
                self._total(
                    ("envelopes", "received", node, incarnation),
                    counts.envelopes_received,
                )
        for peer, lost in stats.frames_lost.items():
            self._total(("gap", "received", peer.node, peer.incarnation), lost)

    def _sums(self, metric: str) -> dict[tuple[str, str], int]:
        sums: dict[tuple[str, str], int] = {}
        for (name, direction, node, _), value in list(self._totals.items()):
            if name == metric:
                key = (direction, node)
                sums[key] = sums.get(key, 0) + value
        return sums

    def observe(self, metric: str) -> list[tuple[int, dict[str, str]]]:
        """This node's values of one metric, with their attributes (a
        metric reader's thread calls it)."""
        node = {_NODE: self.remote.node_name}
        stats = self.remote.statistics()
        if metric == "reconnects":
            return [(stats.reconnects, node)]
        if metric == "dead_letters":
            return [
                (count, {**node, _PEER: peer, "actor.reason": reason})
                for (peer, reason), count in stats.dead_letters.items()
            ]
        self._read(stats)
        if metric == "frames.lost":
            return [
                (value, {**node, _PEER: peer, "actors.remote.cause": cause})
                for cause in ("returned", "gap")
                for (_, peer), value in self._sums(cause).items()
            ]
        return [
            (value, {**node, _DIRECTION: direction, _PEER: peer})
            for (direction, peer), value in self._sums(metric).items()
        ]


_NODE = "actors.remote.node"

#: The remote metrics: name, unit, description.
_INSTRUMENTS = (
    ("frames", "{frame}", "NATS messages (frames) sent to or received from peers."),
    ("bytes", "By", "Payload bytes of the frames sent or received."),
    ("envelopes", "{envelope}", "Envelopes in the frames sent or received."),
    ("batches", "{batch}", "Writer wakes, each publishing one batch."),
    ("reconnects", "{reconnect}", "Reconnections of the node's NATS client."),
    ("dead_letters", "{message}", "Dead letters made by the remote layer."),
    ("frames.lost", "{frame}", "Frames lost between nodes, per peer and cause."),
)


class _Metrics:
    """The remote instruments of one Telemetry, over every node it traces
    (an instrument is made once per meter; nodes are told apart by the
    ``actors.remote.node`` attribute)."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._lock = threading.Lock()
        self._nodes: weakref.WeakSet[RemoteTelemetry] = weakref.WeakSet()
        meter = metrics.get_meter(
            "actors.remote", meter_provider=telemetry.meter_provider
        )
        for name, unit, description in _INSTRUMENTS:
            meter.create_observable_counter(
                f"actors.remote.{name}",
                callbacks=[self._observer(name)],
                unit=unit,
                description=description,
            )

    def add(self, node: RemoteTelemetry) -> None:
        with self._lock:
            self._nodes.add(node)

    def _observer(self, metric: str) -> Any:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            with self._lock:
                nodes = list(self._nodes)
            out: list[Observation] = []
            for node in nodes:
                try:
                    values = node.observe(metric)
                except Exception:  # a snapshot while the loop changes it
                    continue
                out.extend(Observation(value, attrs) for value, attrs in values)
            return out

        return observe


_registry: weakref.WeakKeyDictionary[Telemetry, _Metrics] = weakref.WeakKeyDictionary()
_registry_lock = threading.Lock()


def _metrics_of(telemetry: Telemetry) -> _Metrics:
    with _registry_lock:
        found = _registry.get(telemetry)
        if found is None:
            found = _registry[telemetry] = _Metrics(telemetry)
        return found
