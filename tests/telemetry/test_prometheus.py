"""The runtime's metrics on a real Prometheus endpoint (docs/how-to/prometheus.md),
and the Grafana dashboard (docs/grafana/anyio-actors.json) querying only what
a run really exports."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("opentelemetry.exporter.prometheus")

from actors import Actor, ActorSystem

from ._prometheus import (
    Endpoint,
    dashboard_names,
    prometheus_endpoint,
)

pytestmark = pytest.mark.anyio

#: What Prometheus adds to every series (job, instance) or derives (le).
SCRAPE_LABELS = {"job", "instance", "le"}


class Worker(Actor):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return message


class Gate(Actor):
    """Holds its handler until ``release``: what is told meanwhile queues."""

    def __init__(self, entered: anyio.Event, release: anyio.Event) -> None:
        self.entered = entered
        self.release = release

    async def receive(self, message: Any) -> None:
        self.entered.set()
        await self.release.wait()


def _value(samples: dict[str, list[Any]], name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    return sum(
        sample.value
        for sample in samples.get(name, [])
        if all(sample.labels.get(k) == v for k, v in labels.items())
    )


async def _runtime_workload(endpoint: Endpoint) -> dict[str, list[Any]]:
    """Every runtime metric gets data: tells and asks, a failure and its
    restart, a dead letter, messages queued behind a busy handler."""
    entered, release = anyio.Event(), anyio.Event()
    async with ActorSystem(telemetry=endpoint.telemetry) as system:
        worker = system.spawn(Worker, name="worker")
        for i in range(5):
            worker.tell(i)
        assert await worker.ask("hi") == "hi"
        with pytest.raises(ValueError):
            await worker.ask("boom")  # restarted; the ask fails with it
        assert await worker.ask("again") == "again"
        gate = system.spawn(Gate, entered, release, name="gate")
        gate.tell("first")
        await entered.wait()
        for i in range(3):
            gate.tell(i)  # queued behind "first"
        samples = await endpoint.scrape()
        release.set()
    return samples


async def test_a_scrape_of_the_endpoint_shows_the_runtime_s_real_numbers() -> None:
    with prometheus_endpoint(service="shop") as endpoint:
        samples = await _runtime_workload(endpoint)
    worker = {"actor_class": "Worker"}
    assert _value(samples, "actors_messages_sent_total", **worker) == 8
    assert (
        _value(samples, "actors_messages_handled_total", **worker, actor_outcome="ok")
        == 7
    )
    assert (
        _value(
            samples, "actors_messages_handled_total", **worker, actor_outcome="error"
        )
        == 1
    )
    assert (
        _value(samples, "actors_failures_total", **worker, error_type="ValueError") == 1
    )
    assert _value(samples, "actors_restarts_total", **worker) == 1
    assert _value(samples, "actors_messages_dead_lettered_total", **worker) >= 1
    assert (
        _value(samples, "actors_message_handling_duration_seconds_count", **worker) == 8
    )
    assert _value(samples, "actors_mailbox_wait_seconds_count", **worker) == 8
    # Three messages wait behind the gate's first one.
    assert _value(samples, "actors_mailbox_depth", actor_class="Gate") == 3
    # service.name reaches Prometheus as target_info's service_name.
    (target,) = samples["target_info"]
    assert target.labels["service_name"] == "shop"


async def _remote_workload(endpoint: Endpoint, cluster: Any) -> dict[str, list[Any]]:
    """Two nodes with telemetry: asks and tells across them, and tells to an
    actor that stopped (the remote layer's dead letters)."""
    async with cluster(2, system_options={"telemetry": endpoint.telemetry}) as nodes:
        a, b = nodes[0], nodes[1]
        echo = b.spawn(Worker, name="echo")
        ref = await a.remote.lookup("node-1", "/user/echo")
        for i in range(3):
            assert await ref.ask(i) == i
            ref.tell(i)
        echo.stop()
        await echo.join()
        # The remote layer counts its dead letter before it is published:
        # once node-1's subscriber saw it, one scrape has it.
        counted = anyio.Event()

        def seen(letter: Any) -> None:
            if letter.message == "late":
                counted.set()

        with b.dead_letters.subscribe(seen):
            ref.tell("late")  # to a stopped actor: a dead letter on node-1
            with anyio.fail_after(10):
                await counted.wait()
        samples = await endpoint.scrape()
        assert _value(samples, "actors_remote_dead_letters_total")
        return samples


async def test_the_dashboard_queries_only_metrics_and_labels_a_run_exports(
    cluster: Any,
) -> None:
    pytest.importorskip("msgspec")
    with prometheus_endpoint() as endpoint:
        runtime = await _runtime_workload(endpoint)
    with prometheus_endpoint() as endpoint:
        remote = await _remote_workload(endpoint, cluster)
    exported = {**runtime, **remote}
    labels = SCRAPE_LABELS | {
        label
        for samples in exported.values()
        for sample in samples
        for label in sample.labels
    }
    metrics, used_labels = dashboard_names()
    # A short run loses no frame: frames.lost has no series until one is lost
    # (its name is checked below, through the exporter itself).
    never_in_a_short_run = {"actors_remote_frames_lost_total"}
    missing = metrics - set(exported) - never_in_a_short_run
    assert not missing, f"the dashboard queries metrics no run exports: {missing}"
    assert not used_labels - labels - {"actors_remote_cause"}, used_labels - labels
    # Every panel group is there: runtime and remote.
    assert {m for m in metrics if m.startswith("actors_remote_")} >= {
        "actors_remote_frames_total",
        "actors_remote_bytes_total",
        "actors_remote_envelopes_total",
        "actors_remote_batches_total",
        "actors_remote_reconnects_total",
        "actors_remote_dead_letters_total",
    }


async def test_the_lost_frames_series_has_the_name_the_dashboard_queries() -> None:
    # actors.remote.frames.lost, as the remote layer declares it, through the
    # real exporter: the name and the cause label the dashboard uses.
    pytest.importorskip("msgspec")
    from opentelemetry.metrics import CallbackOptions, Observation

    from actors.remote._telemetry import _INSTRUMENTS

    ((unit, _),) = [(u, d) for n, u, d in _INSTRUMENTS if n == "frames.lost"]

    def observe(options: CallbackOptions) -> list[Observation]:
        return [Observation(1, {"actors.remote.cause": "returned"})]

    with prometheus_endpoint() as endpoint:
        meter = endpoint.meter_provider.get_meter("actors.remote")
        meter.create_observable_counter(
            "actors.remote.frames.lost", callbacks=[observe], unit=unit
        )
        samples = await endpoint.scrape()
    (sample,) = samples["actors_remote_frames_lost_total"]
    assert sample.labels["actors_remote_cause"] == "returned"
    assert "actors_remote_frames_lost_total" in dashboard_names()[0]
