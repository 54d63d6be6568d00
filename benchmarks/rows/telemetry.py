"""Telemetry rows: the same actor workload with telemetry off and on.

* ``telemetry/tell``: one task tells ``count`` messages to one actor, which
  counts them; timed until the last one is handled. Unit: one message.
* ``telemetry/ask``: one task asks one actor ``count`` times in a row. Unit:
  one round trip.

Implementations, all ours, differing only in ``ActorSystem(telemetry=...)``:

* ``off``: no telemetry (the default): the subject, so the ratio columns read
  ``off / X``; X's overhead factor is the inverse (``0.25x``: on costs 4x).
* ``noop-api``: ``Telemetry`` on OpenTelemetry's no-op tracer and meter
  providers (what an application gets with the API installed and no SDK
  configured): our instrumentation plus the API's calls.
* ``sdk``: ``Telemetry`` on the SDK's providers: every span is sampled,
  recorded and ended (no span processor, so no export cost: that depends on
  the exporter), every metric aggregated (an in-memory reader, not collected
  while timing).
"""

from __future__ import annotations

from typing import Any

import anyio

from actors import Actor, ActorSystem, Telemetry

from .._clock import now
from .._registry import Impl, Row, Sample, SampleFn, register

__all__: list[str] = []

TELLS = 100_000  #: messages per sample of telemetry/tell
ASKS = 20_000  #: round trips per sample of telemetry/ask
QUICK = 500


def _noop() -> Telemetry:
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    return Telemetry(
        tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
    )


def _sdk() -> Telemetry:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider

    return Telemetry(
        tracer_provider=TracerProvider(shutdown_on_exit=False),
        meter_provider=MeterProvider(
            metric_readers=[InMemoryMetricReader()], shutdown_on_exit=False
        ),
    )


TELEMETRY = {"off": lambda: None, "noop-api": _noop, "sdk": _sdk}


class _Count(Actor):
    """Counts messages; sets ``done`` at ``expected``; replies to asks."""

    def __init__(self, expected: int, done: anyio.Event) -> None:
        self.count = 0
        self.expected = expected
        self.done = done

    def receive(self, message: Any) -> int:
        self.count += 1
        if self.count == self.expected:
            self.done.set()
        return message  # type: ignore[no-any-return]


def _tell(kind: str) -> SampleFn:
    async def sample(count: int) -> Sample:
        done = anyio.Event()
        async with ActorSystem(telemetry=TELEMETRY[kind]()) as system:
            ref = system.spawn(_Count, count, done)
            tell = ref.tell
            start = now()
            for i in range(count):
                tell(i)
            await done.wait()
            elapsed = now() - start
        # done is set by the count-th message, never before.
        return Sample(elapsed, count if done.is_set() else 0)

    return sample


def _ask(kind: str) -> SampleFn:
    async def sample(count: int) -> Sample:
        done = anyio.Event()
        replies = 0
        async with ActorSystem(telemetry=TELEMETRY[kind]()) as system:
            ref = system.spawn(_Count, count, done)
            ask = ref.ask
            start = now()
            for i in range(count):
                if await ask(i) == i:
                    replies += 1
            elapsed = now() - start
        return Sample(elapsed, replies)

    return sample


register(
    Row(
        "telemetry/tell",
        "one task tells one actor; telemetry off, on the no-op API, on the SDK",
        count=TELLS,
        quick_count=QUICK,
        impls=tuple(Impl(kind, _tell(kind)) for kind in TELEMETRY),
        unit="message",
        subject="off",
    )
)
register(
    Row(
        "telemetry/ask",
        "one task asks one actor in turn; telemetry off, no-op API, SDK",
        count=ASKS,
        quick_count=QUICK,
        impls=tuple(Impl(kind, _ask(kind)) for kind in TELEMETRY),
        unit="round trip",
        subject="off",
    )
)
