"""Telemetry across nodes: the W3C trace context travels in the frames' NATS
headers, the receiving node's spans (``messaging.system`` = ``nats``) join
the sender's trace with the local handling spans under them, the remote
metrics count frames, bytes, envelopes, batches, reconnects, dead letters and
lost frames per peer; a node without telemetry runs the plain code."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind

from actors import Actor, ActorSystem, Telemetry
from actors.nats import NatsServer, connect
from actors.nats._protocol import new_nuid
from actors.remote import NodeAddress, RefAddress, Remote, RemoteRef

pytestmark = pytest.mark.anyio


class Otel:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider(shutdown_on_exit=False)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(
            metric_readers=[self.reader], shutdown_on_exit=False
        )
        self.telemetry = Telemetry(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
        )
        self.tracer = self.tracer_provider.get_tracer("tests")

    def spans(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]

    def values(self, metric: str) -> dict[frozenset[tuple[str, Any]], Any]:
        out: dict[frozenset[tuple[str, Any]], Any] = {}
        data = self.reader.get_metrics_data()
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        for point in m.data.data_points:
                            out[frozenset(point.attributes.items())] = point.value
        return out


@pytest.fixture
def otel() -> Iterator[Otel]:
    otel = Otel()
    yield otel
    otel.meter_provider.shutdown()
    otel.tracer_provider.shutdown()


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


class Collector(Actor):
    def __init__(self) -> None:
        self.items: list[Any] = []

    def receive(self, message: Any) -> Any:
        if message == "get":
            return self.items
        self.items.append(message)
        return None


@asynccontextmanager
async def traced_nodes(
    server: NatsServer, otel: Otel
) -> AsyncIterator[tuple[ActorSystem, ActorSystem, str]]:
    system = "o" + new_nuid(10)
    async with (
        ActorSystem(
            remote=Remote(server.url, system=system, node="b"),
            telemetry=otel.telemetry,
        ) as b,
        ActorSystem(
            remote=Remote(server.url, system=system, node="a"),
            telemetry=otel.telemetry,
        ) as a,
    ):
        yield a, b, system


def child_of(span: ReadableSpan, parent: ReadableSpan) -> bool:
    assert span.parent is not None and span.context is not None
    assert parent.context is not None
    return (
        span.parent.span_id == parent.context.span_id
        and span.context.trace_id == parent.context.trace_id
    )


async def test_a_remote_ask_joins_the_senders_trace_on_the_other_node(
    nats_server: NatsServer, otel: Otel
) -> None:
    async with traced_nodes(nats_server, otel) as (a, b, system):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        headers: list[dict[str, str] | None] = []
        async with connect(nats_server.url) as raw:
            # A plain subscriber on b's inbox sees each frame's headers.
            await raw.subscribe(
                f"actors.{system}.b.{b.remote.node.incarnation}",
                callback=lambda msg: headers.append(msg.headers),
            )
            await raw.flush()
            with otel.tracer.start_as_current_span("root") as root:
                assert await ref.ask("hi") == "hi"
            await raw.flush()
        [ask] = otel.spans("ask /user/echo")
        [receive] = otel.spans("receive /user/echo")
        [process] = otel.spans("process Echo")
        assert ask.kind == SpanKind.CLIENT and receive.kind == SpanKind.CONSUMER
        assert ask.attributes is not None and receive.attributes is not None
        assert ask.attributes["messaging.system"] == "nats"
        assert receive.attributes["messaging.system"] == "nats"
        assert receive.attributes["actor.message.kind"] == "ask"
        assert ask.attributes["actor.outcome"] == "ok"
        assert receive.attributes["actor.outcome"] == "ok"
        # One trace: root -> ask (a) -> receive (b) -> process (b's actor).
        root_span = otel.spans("root")[0]
        assert root.get_span_context().trace_id == root_span.context.trace_id  # type: ignore[union-attr]
        assert child_of(ask, root_span)
        assert child_of(receive, ask)
        assert child_of(process, receive)
        # In the NATS headers: the ask span's traceparent.
        assert ask.context is not None
        traceparent = f"00-{ask.context.trace_id:032x}-{ask.context.span_id:016x}-"
        assert any(
            h is not None and h["traceparent"].startswith(traceparent) for h in headers
        )


async def test_tells_carry_the_context_they_were_told_from(
    nats_server: NatsServer, otel: Otel
) -> None:
    async with traced_nodes(nats_server, otel) as (a, b, _):
        b.spawn(Collector, name="c")
        ref = await a.remote.lookup("b", "/user/c")
        with otel.tracer.start_as_current_span("burst"):
            for n in range(50):
                ref.tell(n)
        with otel.tracer.start_as_current_span("other"):
            ref.tell(50)
        ref.tell(51)  # no context: the receiving span is a root
        assert await ref.ask("get") == list(range(52))
        burst, other = otel.spans("burst")[0], otel.spans("other")[0]
        receives = [
            s
            for s in otel.spans("receive /user/c")
            if s.attributes is not None and s.attributes["actor.message.kind"] == "tell"
        ]
        assert len(receives) == 52
        assert sum(child_of(s, burst) for s in receives[:50]) == 50
        assert child_of(receives[50], other)
        assert receives[51].parent is None
        # The local handling spans sit under the receive spans.
        processes = [
            s
            for s in otel.spans("process Collector")
            if s.attributes is not None and s.attributes["actor.message.kind"] == "tell"
        ]
        assert len(processes) == 52
        assert all(child_of(p, r) for p, r in zip(processes, receives, strict=True))
        # The burst of 50 from one span shared frames: far fewer than 50.
        frames = otel.values("actors.remote.frames")
        sent = {
            k: v
            for k, v in frames.items()
            if ("actors.remote.direction", "sent") in k
            and ("actors.remote.node", "a") in k
        }
        assert sum(sent.values()) < 50


async def test_a_failed_remote_ask_is_an_error_on_both_sides(
    nats_server: NatsServer, otel: Otel
) -> None:
    class Boom(Actor):
        def receive(self, message: Any) -> Any:
            raise ValueError("boom")

    async with traced_nodes(nats_server, otel) as (a, b, _):
        b.spawn(Boom, name="boom")
        ref = await a.remote.lookup("b", "/user/boom")
        with pytest.raises(ValueError, match="boom"):
            await ref.ask(1)
        [ask] = otel.spans("ask /user/boom")
        [receive] = otel.spans("receive /user/boom")
        assert ask.attributes is not None and receive.attributes is not None
        assert ask.attributes["actor.outcome"] == "error"
        assert receive.attributes["actor.outcome"] == "error"
        assert not ask.status.is_ok and not receive.status.is_ok
        assert ask.attributes["error.type"] == "ValueError"
        assert receive.attributes["error.type"] == "ValueError"
        assert child_of(receive, ask)


async def test_remote_span_names_are_templates_and_the_path_an_attribute(
    nats_server: NatsServer, otel: Otel
) -> None:
    # 12 actors of one class: one ask name and one receive name, not 12 each
    # (OpenTelemetry's messaging conventions: low-cardinality span names).
    async with traced_nodes(nats_server, otel) as (a, b, _):
        for n in range(12):
            b.spawn(Echo, name=f"worker-{n}")
        for n in range(12):
            ref = await a.remote.lookup("b", f"/user/worker-{n}")
            assert await ref.ask(n) == n
        spans = otel.exporter.get_finished_spans()
        remote_names = {
            s.name for s in spans if s.name.startswith(("ask ", "receive "))
        }
        assert remote_names == {"ask /user/worker-{n}", "receive /user/worker-{n}"}
        asks = otel.spans("ask /user/worker-{n}")
        assert len(asks) == 12
        paths = {
            s.attributes["messaging.destination.name"] for s in asks if s.attributes
        }
        assert paths == {f"/user/worker-{n}" for n in range(12)}
        for span in asks:
            assert span.attributes is not None
            assert span.attributes["messaging.destination.template"] == (
                "/user/worker-{n}"
            )


def test_a_path_template_keeps_names_and_templates_numbers_and_ids() -> None:
    from actors.remote._telemetry import path_template

    assert path_template("/user/echo") == "/user/echo"
    assert path_template("/user/worker-12") == "/user/worker-{n}"
    assert path_template("/user/node-agent/pool-x-3/worker_0") == (
        "/user/node-agent/pool-x-{n}/worker_{n}"
    )
    assert path_template("/user/pool-hasher-a3f9c1") == "/user/pool-hasher-{id}"
    assert path_template("/user/ab12") == "/user/ab12"  # short: a name
    assert path_template("greeter") == "greeter"  # a registered name


async def test_remote_metrics_count_per_peer(
    nats_server: NatsServer, otel: Otel
) -> None:
    async with traced_nodes(nats_server, otel) as (a, b, _):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        for n in range(10):
            assert await ref.ask(n) == n
        # A tell to a missing actor: a dead letter on b, from peer a.
        RemoteRef[Any](a.remote, RefAddress("b", ref.node.incarnation, "/x")).tell(1)
        # A tell to a node nobody listens on: its frame comes back.
        gone = NodeAddress.new("gone")
        letter = anyio.Event()
        with a.dead_letters.subscribe(lambda _: letter.set()):
            RemoteRef[Any](
                a.remote, RefAddress(gone.node, gone.incarnation, "/x")
            ).tell(2)
            with anyio.fail_after(5):
                await letter.wait()
        assert await ref.ask("sync") == "sync"  # the tell to b is handled

        def value(metric: str, **attributes: str) -> Any:
            wanted = {(f"actors.remote.{k}", v) for k, v in attributes.items()}
            found = [v for k, v in otel.values(metric).items() if wanted <= k]
            assert len(found) == 1, (metric, attributes, otel.values(metric))
            return found[0]

        assert value("actors.remote.frames", node="a", peer="b", direction="sent") >= 11
        assert (
            value("actors.remote.frames", node="b", peer="a", direction="received")
            >= 11
        )
        assert (
            value("actors.remote.envelopes", node="a", peer="b", direction="sent") >= 12
        )
        assert value("actors.remote.bytes", node="a", peer="b", direction="sent") > 0
        assert value("actors.remote.batches", node="a", peer="b", direction="sent") >= 1
        assert value("actors.remote.reconnects", node="a") == 0
        dead = otel.values("actors.remote.dead_letters")
        assert (
            dead[
                frozenset(
                    {
                        ("actors.remote.node", "b"),
                        ("actors.remote.peer", "a"),
                        ("actor.reason", "actor not found"),
                    }
                )
            ]
            == 1
        )
        assert (
            dead[
                frozenset(
                    {
                        ("actors.remote.node", "a"),
                        ("actors.remote.peer", "gone"),
                        ("actor.reason", "node unreachable"),
                    }
                )
            ]
            == 1
        )
        assert (
            value("actors.remote.frames.lost", node="a", peer="gone", cause="returned")
            == 1
        )


async def test_a_node_without_telemetry_runs_the_plain_code(
    nats_server: NatsServer,
) -> None:
    async with ActorSystem(
        remote=Remote(nats_server.url, system="o" + new_nuid(10), node="a")
    ) as a:
        remote = a.remote
        assert remote._observer is None
        assert remote._parts is not None and remote._parts.inbound.observer is None
        # Nothing shadows a method on any part (an instrumentor fills hook
        # points, it replaces no method).
        parts = remote._parts
        for part in (remote, parts.inbound, parts.asks, parts.peers, parts.serving):
            for name in ("tell", "send", "ask", "on_frame", "serve"):
                assert name not in vars(part), name
