import re
from urllib.request import urlopen

import anyio
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, start_http_server

from actors import Actor, ActorSystem, Telemetry

SHOWN = (
    "actors_messages_sent_total",
    "actors_messages_handled_total",
    "actors_message_handling_duration_seconds_count",
)


class Echo(Actor):
    def receive(self, message: str) -> str:
        return message


async def main() -> None:
    # The exporter's own registry (the default is prometheus_client's global
    # one, shared with whatever else the process exports).
    registry = CollectorRegistry()
    reader = PrometheusMetricReader(registry=registry)
    meter_provider = MeterProvider(
        resource=Resource.create({"service.name": "echo-service"}),
        metric_readers=[reader],
    )
    # Loopback only; port 0 picks a free port. In production: a fixed port
    # (9464 is the exporter's usual one) that Prometheus scrapes.
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    port = server.server_port
    try:
        async with ActorSystem(
            telemetry=Telemetry(meter_provider=meter_provider)
        ) as system:
            echo = system.spawn(Echo, name="echo")
            for word in ("one", "two", "three"):
                await echo.ask(word)
            # What Prometheus would scrape (in a worker thread: the server
            # answers from its own thread, the event loop keeps running).
            url = f"http://127.0.0.1:{port}/metrics"
            page = await anyio.to_thread.run_sync(lambda: urlopen(url).read().decode())
    finally:
        server.shutdown()
        thread.join()
        meter_provider.shutdown()
    service = re.search(r'^target_info\{.*(service_name="[^"]*")', page, re.M)
    print("target_info:", service[1] if service else None)
    for line in page.splitlines():
        if line.startswith(SHOWN):
            # Without the otel_scope_* labels (the library's name and version).
            print(re.sub(r',?otel_scope_\w+="[^"]*"', "", line))


if __name__ == "__main__":
    anyio.run(main)
