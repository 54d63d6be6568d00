"""The remote layer's telemetry: W3C trace context in NATS headers, spans
that join the sender's trace, and metrics per peer.

Imported only when the node's system has a [``Telemetry``][actors.Telemetry]
([``Remote.start``][actors.remote.Remote.start]), so it imports
OpenTelemetry at the top. Turned on, it replaces the node's ``tell``,
``send``, ``ask`` and its per-envelope inbound handler with traced versions
(as OpenTelemetry's instrumentations wrap the instrumented callable): a node
without telemetry runs the plain ones and makes no telemetry check on any
message.

Traces:

* A frame carries the W3C ``traceparent`` (and ``tracestate``) of the
  context its envelopes were sent from, in its NATS headers (``HPUB``). The
  writer puts consecutive envelopes sent from one context into one frame, so
  a burst of tells from one handler still shares frames; a change of context
  starts a new frame.
* A remote ask gets a CLIENT span ``ask <path>`` (``messaging.system`` =
  ``nats``) whose context its frame carries; a tell or send carries the
  context it was told from.
* On the receiving node each tell and ask gets a CONSUMER span
  ``receive <path>`` (``messaging.system`` = ``nats``), child of the
  sender's context, and is handled inside it: the local actor's own handling
  span is its child, so one trace runs across both nodes. An ask's receive
  span lasts until its answer is sent, and records a failure.

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

import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import anyio
from opentelemetry import metrics, trace
from opentelemetry.context import Context, attach, detach
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import (
    TraceContextTextMapPropagator,
)

from .. import Telemetry
from ._errors import NodeUnreachable
from ._wire import Ask, Envelope, Tell

if TYPE_CHECKING:
    from ._node import NodeAddress
    from ._ref import RemoteRef
    from ._remote import Remote

__all__ = ["SYSTEM", "RemoteTelemetry"]

#: ``messaging.system`` of the remote layer's spans.
SYSTEM = "nats"
_PEER = "actors.remote.peer"
_DIRECTION = "actors.remote.direction"
_OUTCOME = "actor.outcome"


def record_error(span: Span, exc: BaseException) -> None:
    """Record ``exc`` on ``span`` and set its error status, never raising
    (an exception is user data: its ``str()`` may raise)."""
    try:
        span.record_exception(exc)
        text = f"{type(exc).__name__}: {exc}"
    except Exception:
        text = type(exc).__name__
    span.set_status(Status(StatusCode.ERROR, text))


class RemoteTelemetry:
    """The traced side of one node (see the module docstring).

    Args:
        telemetry: the system's telemetry (its providers are used).
        remote: the node, started.
    """

    def __init__(self, telemetry: Telemetry, remote: Remote) -> None:
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
        #: The context of the frame being handled (set per inbound frame).
        self._parent: Context = Context()
        #: Totals by (metric, direction, peer, incarnation) as last read:
        #: peers that are gone keep counting (counters never go back).
        self._totals: dict[tuple[str, str, str, str], int] = {}
        _metrics_of(telemetry).add(self)

    def install(self) -> None:
        """Replace the node's tell, send, ask and inbound handler with the
        traced ones."""
        remote = self.remote
        remote.tell = self.tell  # type: ignore[method-assign]
        remote.send = self.send  # type: ignore[method-assign]
        remote.ask = self.ask  # type: ignore[method-assign,assignment]
        remote._handle = self.handle  # type: ignore[method-assign]
        remote._on_frame = self.on_frame  # type: ignore[method-assign]

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

    def tell(self, ref: RemoteRef[Any], message: object) -> None:
        """``Remote.tell``, the frame carrying the current trace context."""
        remote = self.remote
        headers = self.headers()
        if headers is None:
            type(remote).tell(remote, ref, message)
            return
        remote._running()
        envelope = remote._wire.tell(ref.address.path, message)
        outbound = remote._outbound(ref._peer)
        try:
            if outbound is None:
                raise NodeUnreachable(str(ref._peer))
            outbound.try_put_traced(envelope, headers)
        except NodeUnreachable:
            remote._dead_letter(ref, message, "node unreachable", ref._peer)

    async def send(self, ref: RemoteRef[Any], message: object) -> None:
        """``Remote.send``, the frame carrying the current trace context."""
        remote = self.remote
        headers = self.headers()
        if headers is None:
            await type(remote).send(remote, ref, message)
            return
        remote._running()
        envelope = remote._wire.tell(ref.address.path, message)
        outbound = remote._outbound(ref._peer)
        if outbound is None:
            remote._dead_letter(ref, message, "node unreachable", ref._peer)
            return
        await outbound.put_traced(envelope, headers)

    async def ask(self, ref: RemoteRef[Any], message: object, timeout: float) -> Any:
        """``Remote.ask`` under a CLIENT span whose context its frame
        carries; the span records the outcome and any exception."""
        remote = self.remote
        path = ref.address.path
        peer = ref._peer
        span = self._tracer.start_span(
            f"ask {path}",
            kind=SpanKind.CLIENT,
            attributes={
                "messaging.system": SYSTEM,
                "messaging.operation.type": "send",
                "messaging.operation.name": "ask",
                "messaging.destination.name": path,
                "actor.path": path,
                _PEER: peer.node,
                "actor.message.type": type(message).__qualname__,
            },
        )
        outcome = "error"
        try:
            headers = self.headers(set_span_in_context(span))
            value = await type(remote).ask(remote, ref, message, timeout, headers)
            outcome = "ok"
            return value
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        except BaseException as exc:
            if type(exc).__name__ == "AskTimeout":
                outcome = "timeout"
            record_error(span, exc)  # never raises
            raise
        finally:
            span.set_attribute(_OUTCOME, outcome)
            span.end()

    # -- the receiving side --------------------------------------------------

    def on_frame(self, msg: Any) -> None:
        """The inbound frame handler: each envelope is handled in the
        context the frame's headers carry."""
        remote = self.remote
        headers = msg.headers
        self._parent = self._propagator.extract(headers) if headers else Context()
        try:
            type(remote)._on_frame(remote, msg)
        finally:
            self._parent = Context()

    def handle(
        self, envelope: Envelope, sender: NodeAddress | None, reply_to: str | None
    ) -> None:
        """``Remote._handle``: a tell or an ask under a CONSUMER span, child
        of the frame's context; everything else as it is."""
        remote = self.remote
        kind = type(envelope)
        if kind is not Tell and kind is not Ask:
            type(remote)._handle(remote, envelope, sender, reply_to)
            return
        assert isinstance(envelope, Tell | Ask)
        parent = self._parent
        span: Span | None = self._tracer.start_span(
            f"receive {envelope.path}",
            parent,
            SpanKind.CONSUMER,
            {
                "messaging.system": SYSTEM,
                "messaging.operation.type": "receive",
                "messaging.operation.name": "receive",
                "messaging.destination.name": envelope.path,
                "actor.path": envelope.path,
                "actor.message.kind": "tell" if kind is Tell else "ask",
                _PEER: "" if sender is None else sender.node,
            },
        )
        assert span is not None
        context = set_span_in_context(span, parent)
        token = attach(context)
        try:
            if kind is Tell:
                type(remote)._handle(remote, envelope, sender, reply_to)
            else:
                assert isinstance(envelope, Ask)
                # The span ends when the answer is sent (see answered).
                remote._serve(envelope, sender, reply_to, context, span)
                span = None
        except BaseException as exc:
            if span is not None:
                record_error(span, exc)
            raise
        finally:
            detach(token)
            if span is not None:
                span.end()

    @staticmethod
    def answered(span: Span, error: BaseException | None) -> None:
        """End an inbound ask's receive span: answered with a reply, or
        with ``error``."""
        if error is None:
            span.set_attribute(_OUTCOME, "ok")
        else:
            span.set_attribute(_OUTCOME, "error")
            record_error(span, error)
        span.end()

    # -- metrics ---------------------------------------------------------------

    def _total(self, key: tuple[str, str, str, str], value: int) -> None:
        if value > self._totals.get(key, 0):
            self._totals[key] = value

    def _read(self) -> None:
        """Fold the live counts into the totals."""
        remote = self.remote
        for peer, outbound in list(remote._outbounds.items()):
            node, incarnation = peer.node, peer.incarnation
            self._total(("frames", "sent", node, incarnation), outbound._frames)
            self._total(("bytes", "sent", node, incarnation), outbound._bytes)
            self._total(("envelopes", "sent", node, incarnation), outbound._envelopes)
            self._total(("batches", "sent", node, incarnation), outbound._batches)
            self._total(("returned", "sent", node, incarnation), outbound._returned)
        for peer, inbound in list(remote._inbound.items()):
            node, incarnation = peer.node, peer.incarnation
            self._total(("frames", "received", node, incarnation), inbound.frames)
            self._total(("bytes", "received", node, incarnation), inbound.bytes)
            self._total(("envelopes", "received", node, incarnation), inbound.envelopes)
        for peer, lost in list(remote.lost_frames.items()):
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
        if metric == "reconnects":
            client = self.remote._client
            return [(0 if client is None else client.statistics().reconnects, node)]
        if metric == "dead_letters":
            return [
                (count, {**node, _PEER: peer, "actor.reason": reason})
                for (peer, reason), count in list(
                    self.remote.dead_letters_by_peer.items()
                )
            ]
        self._read()
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
