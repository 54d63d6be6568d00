from dataclasses import dataclass

import anyio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from actors import Actor, ActorRef, ActorSystem, Request, Telemetry


@dataclass
class Price(Request[float]):
    item: str


class Catalog(Actor):
    def receive(self, message: Price) -> float:
        return {"tea": 3.5, "cake": 4.0}[message.item]


class Shop(Actor):
    def __init__(self, catalog: ActorRef[Price]) -> None:
        self.catalog = catalog

    async def receive(self, message: Price) -> float:
        # Asked inside Shop's handling: the same trace goes on.
        return await self.catalog.ask(message) * 1.2


async def main() -> None:
    # service.name: what a tracing backend lists this program's spans under.
    resource = Resource.create({"service.name": "shop"})
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    telemetry = Telemetry(
        tracer_provider=tracer_provider,
        meter_provider=MeterProvider(resource=resource, metric_readers=[metrics]),
    )
    async with ActorSystem(telemetry=telemetry) as system:
        catalog = system.spawn(Catalog, name="catalog")
        shop = system.spawn(Shop, catalog, name="shop")
        print("tea costs", await shop.ask(Price("tea")))

    finished = spans.get_finished_spans()
    print("one trace:", len({span.context.trace_id for span in finished}) == 1)
    for span in sorted(finished, key=lambda span: span.start_time or 0):
        # A low-cardinality name (the actor's class), the path in an attribute.
        path = str((span.attributes or {})["messaging.destination.name"])
        print(f"{span.kind.name:<8} {span.name:<16} {path}")
    data = metrics.get_metrics_data()
    assert data is not None
    names = sorted(
        {
            metric.name
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }
    )
    print("metrics:", ", ".join(names))


if __name__ == "__main__":
    anyio.run(main)
