"""In-memory OpenTelemetry SDK providers for the telemetry tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import Tracer

from actors import Telemetry


@dataclass
class Otel:
    """A Telemetry wired to in-memory exporters, and ways to read them."""

    telemetry: Telemetry
    tracer: Tracer  #: for the tests' own parent spans
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(
        self, name: str | None = None, path: str | None = None
    ) -> list[ReadableSpan]:
        """Finished spans named ``name`` (all: None) whose
        ``messaging.destination.name`` is ``path`` (any: None): span names
        are low-cardinality (``process Relay``), the actor is the path."""
        spans = list(self.exporter.get_finished_spans())
        if name is not None:
            spans = [s for s in spans if s.name == name]
        if path is not None:
            spans = [
                s
                for s in spans
                if (s.attributes or {}).get("messaging.destination.name") == path
            ]
        return spans

    def span(self, name: str, path: str | None = None) -> ReadableSpan:
        (span,) = self.spans(name, path)
        return span

    def metrics(self) -> dict[str, list[Any]]:
        """Every metric's data points, by metric name."""
        out: dict[str, list[Any]] = {}
        data = self.reader.get_metrics_data()
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = list(metric.data.data_points)
        return out

    def values(self, name: str) -> dict[frozenset[tuple[str, Any]], Any]:
        """One metric's values (sums, gauge values, histogram counts) by
        attribute set."""
        out = {}
        for point in self.metrics().get(name, []):
            key = frozenset(point.attributes.items())
            out[key] = point.count if hasattr(point, "bucket_counts") else point.value
        return out


def attrs(**kwargs: str) -> frozenset[tuple[str, str]]:
    """A metric attribute set written as keywords (``actor_class`` ->
    ``actor.class``)."""
    return frozenset((key.replace("_", "."), value) for key, value in kwargs.items())


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def by_id(spans: Sequence[ReadableSpan]) -> dict[int, ReadableSpan]:
    return {span.context.span_id: span for span in spans}
