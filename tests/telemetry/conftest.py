"""The ``otel`` fixture: a Telemetry on in-memory SDK providers, fresh per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from actors import Telemetry

from ._support import Otel


@pytest.fixture
def otel() -> Iterator[Otel]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(shutdown_on_exit=False)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    yield Otel(telemetry, tracer_provider.get_tracer("tests"), exporter, reader)
    meter_provider.shutdown()
    tracer_provider.shutdown()
