"""Span names fit a tracing backend: low-cardinality names (OpenTelemetry's
messaging conventions), the concrete actor in attributes, and failed spans
with ``error.type``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from actors import Actor, ActorSystem, Directive, OneForOne, Routing

from ._support import Otel

pytestmark = pytest.mark.anyio


class Worker(Actor):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise KeyError("boom")
        return message


@pytest.mark.parametrize("routing", ["round_robin", "shared_queue"])
async def test_forty_actors_of_one_class_make_two_span_names(
    otel: Otel, routing: Routing
) -> None:
    # 30 named actors and a pool of 10, each told and asked: one name per
    # operation, not one per actor (the issue counted 71 before).
    async with ActorSystem(telemetry=otel.telemetry) as system:
        named = [system.spawn(Worker, name=f"worker-{i}") for i in range(30)]
        pool = system.spawn_pool(Worker, 10, routing=routing, name="crew")
        for ref in named:
            ref.tell("hello")
            assert await ref.ask("hi") == "hi"
        for i in range(20):
            assert await pool.ask(i) == i
        pool.broadcast("all")
    spans = otel.spans()
    assert {s.name for s in spans} == {"process Worker", "ask Worker"}
    # The concrete actor is in the attributes: every named actor and pool
    # worker handled messages under its own path.
    handled = {
        (s.attributes or {})["messaging.destination.name"]
        for s in spans
        if s.kind is SpanKind.CONSUMER
    }
    assert {f"/user/worker-{i}" for i in range(30)} <= handled
    workers = {path for path in handled if str(path).startswith("/user/crew/")}
    assert len(workers) == 10
    for span in spans:
        attributes = span.attributes or {}
        assert attributes["actor.class"] == "Worker"
        assert attributes["messaging.destination.name"] == attributes["actor.path"]
    asks = {(s.attributes or {})["actor.path"] for s in otel.spans("ask Worker")}
    assert "/user/crew" in asks


async def test_a_failed_handling_and_its_ask_carry_error_type(otel: Otel) -> None:
    strategy = OneForOne(decider={Exception: Directive.RESUME})
    async with ActorSystem(telemetry=otel.telemetry, strategy=strategy) as system:
        ref = system.spawn(Worker, name="w")
        with pytest.raises(KeyError):
            await ref.ask("boom")
        assert await ref.ask("fine") == "fine"
    failed = [s for s in otel.spans() if s.status.status_code is StatusCode.ERROR]
    assert sorted(s.name for s in failed) == ["ask Worker", "process Worker"]
    for span in failed:
        assert (span.attributes or {})["error.type"] == "KeyError"
    # The same value as the failures metric's, so a dashboard can join them.
    ((key, count),) = otel.values("actors.failures").items()
    assert dict(key)["error.type"] == "KeyError" and count == 1
    # A span that did not fail has none.
    ok = [s for s in otel.spans() if s.status.status_code is not StatusCode.ERROR]
    assert ok and all("error.type" not in (s.attributes or {}) for s in ok)


async def test_an_ask_that_times_out_has_error_type_ask_timeout(otel: Otel) -> None:
    release = anyio.Event()

    class Parked(Actor):
        async def receive(self, message: Any) -> None:
            await release.wait()

    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Parked)
        with pytest.raises(Exception, match="did not reply"):
            await ref.ask("q", timeout=0.01)
        release.set()
    (ask,) = otel.spans(f"ask {Parked.__qualname__}")
    assert (ask.attributes or {})["error.type"] == "AskTimeout"
