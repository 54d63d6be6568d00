"""A real Prometheus endpoint for the telemetry tests: OpenTelemetry's
Prometheus exporter on its own registry, served by prometheus_client on a
free loopback port, scraped over HTTP and parsed by prometheus_client's own
parser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import anyio
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families

from actors import Telemetry

DASHBOARD = (
    Path(__file__).resolve().parents[2] / "docs" / "grafana" / "anyio-actors.json"
)


@dataclass
class Endpoint:
    telemetry: Telemetry
    meter_provider: MeterProvider
    url: str

    async def scrape(self) -> dict[str, list[Any]]:
        """Every sample on the page, by sample name (``..._total``,
        ``..._bucket``): what Prometheus would store."""
        text = await anyio.to_thread.run_sync(
            lambda: urlopen(self.url, timeout=10).read().decode()
        )
        samples: dict[str, list[Any]] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                samples.setdefault(sample.name, []).append(sample)
        return samples


@contextmanager
def prometheus_endpoint(service: str = "tests") -> Iterator[Endpoint]:
    registry = CollectorRegistry()
    reader = PrometheusMetricReader(registry=registry)
    meter_provider = MeterProvider(
        resource=Resource.create({"service.name": service}),
        metric_readers=[reader],
        shutdown_on_exit=False,
    )
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        yield Endpoint(
            Telemetry(meter_provider=meter_provider),
            meter_provider,
            f"http://127.0.0.1:{server.server_port}/metrics",
        )
    finally:
        server.shutdown()
        thread.join()
        meter_provider.shutdown()


def dashboard_queries() -> list[str]:
    """Every PromQL text of the Grafana dashboard: the panels' ``expr`` and
    the variables' queries."""
    dashboard = json.loads(DASHBOARD.read_text())
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "definition") and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(dashboard)
    return found


_SELECTOR = re.compile(r"\{([^{}]*)\}")
_BY = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
_LABEL_VALUES = re.compile(r"label_values\(([^,()]+(?:\{[^}]*\})?)\s*,\s*(\w+)\)")


def dashboard_names() -> tuple[set[str], set[str]]:
    """The metric names and the label names the dashboard's queries use."""
    metrics: set[str] = set()
    labels: set[str] = set()
    for query in dashboard_queries():
        for match in _LABEL_VALUES.finditer(query):
            labels.add(match[2])
            query = query.replace(match[0], match[1])
        for match in _SELECTOR.finditer(query):
            labels.update(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", match[1]))
        for match in _BY.finditer(query):
            labels.update(name.strip() for name in match[1].split(",") if name.strip())
        bare = _BY.sub(" ", _SELECTOR.sub(" ", query))
        metrics.update(re.findall(r"\b(actors_\w+|target_info)\b", bare))
    return metrics, labels
