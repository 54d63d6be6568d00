"""Sharding's metrics: observable instruments over each node's figures,
reported when the system has telemetry."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from actors import ActorSystem, Telemetry
from actors.sharding import Entity, Sharding

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                out[metric.name] = list(metric.data.data_points)
    return out


async def test_shards_entities_and_activations_are_reported_as_metrics() -> None:
    reader = InMemoryMetricReader()
    telemetry = Telemetry(meter_provider=MeterProvider(metric_readers=[reader]))
    async with (
        ActorSystem(telemetry=telemetry) as system,
        Sharding(system, [Entity("t", recorders(Log()), shards=4)], node="n1") as s,
    ):
        for i in range(10):
            await s.entity_ref("t", str(i)).ask(i)
        points = _points(reader)
        attributes = {"actors.sharding.node": "n1", "actors.sharding.type": "t"}
        (entities,) = points["actors.sharding.entities"]
        assert entities.value == 10 and dict(entities.attributes) == attributes
        (activations,) = points["actors.sharding.activations"]
        assert activations.value == 10
        (shards,) = points["actors.sharding.shards"]
        assert shards.value == s.statistics().shards_per_node["t"]["n1"]
        assert points["actors.sharding.buffered"][0].value == 0
