"""Telemetry is safe to read from other threads, and safe with any exception.

OpenTelemetry's standard ``PeriodicExportingMetricReader`` calls the observable
instruments' callbacks from its own thread, while actors spawn and stop in the
event loop's thread: no callback may fail then (the SDK logs a failure on its
``opentelemetry`` logger and drops that collection's points). And a handler's
exception is user data: one whose ``__str__`` raises must not break a span.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode

from actors import Actor, ActorSystem, Directive, OneForOne, Telemetry

from ._support import Otel

pytestmark = pytest.mark.anyio

#: Collections the reader must have made while actors spawned and stopped.
COLLECTIONS = 40


class Counting(MetricExporter):
    """Counts exports and the depth points seen; thread-safe."""

    def __init__(self) -> None:
        super().__init__()
        self.exports = 0
        self.depths = 0
        self.changed = threading.Condition()

    def export(
        self,
        metrics_data: MetricsData,
        timeout_millis: float = 10_000,
        **kwargs: Any,
    ) -> MetricExportResult:
        depths = 0
        for resource in metrics_data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "actors.mailbox.depth":
                        depths += len(list(metric.data.data_points))
        with self.changed:
            self.exports += 1
            self.depths += depths
            self.changed.notify_all()
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


class Failures(logging.Handler):
    """Every ERROR record of a logger, whatever thread emits it."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def failures() -> Iterator[Failures]:
    handler = Failures()
    logger = logging.getLogger("opentelemetry")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


@pytest.fixture
def fast_switching() -> Iterator[None]:
    # Let the reader's thread preempt the loop's often (every 10 us instead of
    # 5 ms), so it lands inside spawns and stops as often as possible.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


class Worker(Actor):
    def receive(self, message: Any) -> Any:
        return message


class Spawner(Actor):
    """Spawns children that get a message each and stop."""

    async def receive(self, count: int) -> int:
        for _ in range(count):
            child = self.context.spawn(Worker)
            child.tell("work")
            child.tell("more")
            self.context.stop(child)
        return count


def describe(records: Sequence[logging.LogRecord]) -> str:
    return "\n".join(
        f"{r.getMessage()}: {r.exc_info[1]!r}" if r.exc_info else r.getMessage()
        for r in records
    )


async def test_observable_callbacks_never_fail_in_a_periodic_readers_thread(
    failures: Failures, fast_switching: None
) -> None:
    exporter = Counting()
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=1)
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    telemetry = Telemetry(
        tracer_provider=TracerProvider(shutdown_on_exit=False),
        meter_provider=meter_provider,
    )
    try:
        async with ActorSystem(telemetry=telemetry) as system:
            with exporter.changed:
                start = exporter.exports
            spawners = [system.spawn(Spawner) for _ in range(4)]
            refs = []
            rounds = 0
            with anyio.fail_after(60):
                while exporter.exports - start < COLLECTIONS or rounds < 20:
                    rounds += 1
                    # Top-level actors too: spawned, told and stopped.
                    refs = [system.spawn(Worker) for _ in range(20)]
                    for ref in refs:
                        ref.tell("x")
                    for spawner in spawners:
                        spawner.tell(10)
                    for ref in refs:
                        ref.stop()
                    for ref in refs:
                        await ref.join()
                    await anyio.lowlevel.checkpoint()
                for spawner in spawners:
                    assert await spawner.ask(1) == 1
    finally:
        meter_provider.shutdown()
    assert failures.records == [], describe(failures.records)
    assert exporter.depths > 0  # the depth gauge was read, and not vacuously


class Unprintable(Exception):
    """An exception whose ``str()`` raises, as a buggy one can."""

    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class RaisesUnprintable(Actor):
    def receive(self, message: Any) -> Any:
        raise Unprintable


async def test_an_exception_whose_str_raises_is_recorded_on_spans_all_the_same(
    otel: Otel,
) -> None:
    strategy = OneForOne(decider={Exception: Directive.RESUME})
    async with ActorSystem(telemetry=otel.telemetry, strategy=strategy) as system:
        ref = system.spawn(RaisesUnprintable)
        with pytest.raises(Unprintable):
            await ref.ask("boom")
        ref.tell("again")
        with pytest.raises(Unprintable):
            await ref.ask("once more")
        assert ref.is_alive
    spans = otel.spans("process RaisesUnprintable", path=ref.path)
    assert len(spans) == 3
    for span in [*spans, *otel.spans("ask RaisesUnprintable", path=ref.path)]:
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description is not None
        assert span.status.description.startswith("Unprintable")


async def test_a_periodic_reader_with_spans_exported_works_end_to_end() -> None:
    # The same providers a deployment uses; spans and metrics flow.
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(shutdown_on_exit=False)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    exporter = Counting()
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=50)
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    async with ActorSystem(telemetry=telemetry) as system:
        ref = system.spawn(Worker)
        assert await ref.ask("x") == "x"
    meter_provider.shutdown()  # exports once more
    tracer_provider.shutdown()
    assert exporter.exports >= 1
    assert {span.name for span in spans.get_finished_spans()} >= {
        "process Worker",
        "ask Worker",
    }
