import io
import json

import anyio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

from actors import Actor, ActorSystem, Telemetry


class Echo(Actor):
    def receive(self, message: str) -> str:
        return message


async def main() -> None:
    # In production: OTLPSpanExporter / OTLPMetricExporter from
    # opentelemetry-exporter-otlp instead of the console exporters.
    resource = Resource.create({"service.name": "echo-service"})
    spans_out, metrics_out = io.StringIO(), io.StringIO()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(ConsoleSpanExporter(out=spans_out))
    )
    reader = PeriodicExportingMetricReader(
        ConsoleMetricExporter(out=metrics_out), export_interval_millis=60_000
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    try:
        async with ActorSystem(telemetry=telemetry) as system:
            echo = system.spawn(Echo, name="echo")
            for word in ("one", "two", "three"):
                await echo.ask(word)
    finally:
        # Flush what is buffered before the process ends.
        tracer_provider.shutdown()
        meter_provider.shutdown()

    decoder = json.JSONDecoder()
    text, spans = spans_out.getvalue(), []
    while text.strip():
        span, end = decoder.raw_decode(text.lstrip())
        spans.append(span)
        text = text.lstrip()[end:]
    print(f"exported {len(spans)} spans:", sorted({s["name"] for s in spans}))
    print("service.name:", spans[0]["resource"]["attributes"]["service.name"])
    print("metrics exported:", "actors.messages.handled" in metrics_out.getvalue())


if __name__ == "__main__":
    anyio.run(main)
