"""A traced three-stage pipeline: each request is one trace across three actors.

    python examples/traced_pipeline.py --requests 3 --backend trio
    python examples/traced_pipeline.py --json        # the exporter's full JSON
    python examples/traced_pipeline.py --fail        # one request fails

A client sends each line of text as one request, under its own ``request``
span: ``Tokenize`` splits it into words and tells ``Count``, which counts them
and tells ``Store``, which keeps the totals. At the end the client asks
``Store`` for the totals (an ``ask`` client span). The spans go to
OpenTelemetry's ``ConsoleSpanExporter``: by default one line per span (trace,
span, parent, name, key attributes), with ``--json`` the exporter's own JSON.
With ``--fail`` one request carries a line the tokenizer rejects: its span
records the exception and the tokenizer's restart.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any, TextIO

import anyio

try:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import (
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )
except ModuleNotFoundError:  # the examples extra
    sys.exit(
        "examples/traced_pipeline.py needs opentelemetry-sdk: "
        'pip install "anyio-actors[examples]"'
    )

from actors import Actor, ActorRef, ActorSystem, Request, Telemetry

LINES = (
    "the quick brown fox",
    "jumps over the lazy dog",
    "the dog sleeps",
    "a fox runs",
)


@dataclass(frozen=True, slots=True)
class Line:
    text: str


@dataclass(frozen=True, slots=True)
class Words:
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Counts:
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class Totals(Request[dict[str, int]]):
    """Ask ``Store`` for the word totals so far."""


class Tokenize(Actor):
    """Stage 1: splits a line into words; rejects a line with no words."""

    def __init__(self, count: ActorRef[Words]) -> None:
        self.count = count

    def receive(self, message: Line) -> None:
        words = tuple(message.text.split())
        if not words:
            raise ValueError("an empty line")
        self.count.tell(Words(words))


class Count(Actor):
    """Stage 2: counts the words of one line."""

    def __init__(self, store: ActorRef[Counts]) -> None:
        self.store = store

    def receive(self, message: Words) -> None:
        self.store.tell(Counts(dict(Counter(message.words))))


class Store(Actor):
    """Stage 3: keeps the totals; answers ``Totals``; sets ``done`` after
    ``expected`` lines."""

    def __init__(self, expected: int, done: anyio.Event) -> None:
        self.totals: Counter[str] = Counter()
        self.lines = 0
        self.expected = expected
        self.done = done

    def receive(self, message: Any) -> Any:
        if isinstance(message, Totals):
            return dict(self.totals)
        self.totals.update(message.counts)
        self.lines += 1
        if self.lines == self.expected:
            self.done.set()
        return None


def one_line(span: ReadableSpan) -> str:
    """A compact rendering of a span for the console exporter."""
    context = span.get_span_context()
    assert context is not None
    parent = f"{span.parent.span_id:016x}"[:8] if span.parent else "-" * 8
    attributes = span.attributes or {}
    details = " ".join(
        f"{key.removeprefix('actor.')}={attributes[key]!s}"
        for key in ("actor.message.type", "actor.message.kind", "actor.outcome")
        if key in attributes
    )
    events = ",".join(event.name for event in span.events)
    return (
        f"trace={context.trace_id:032x}"[:14]
        + f" span={context.span_id:016x}"[:14]
        + f" parent={parent}  {span.name:<24} {details}"
        + (f" events={events}" if events else "")
        + os.linesep
    )


async def traced_pipeline(
    lines: list[str], out: TextIO = sys.stdout, json: bool = False
) -> dict[str, int]:
    """Run every line through the pipeline, printing the spans to ``out``.

    Returns:
        The word totals the store holds at the end.
    """
    # service.name: what a tracing backend (Jaeger, Tempo) lists this
    # program's spans under.
    resource = Resource.create({"service.name": "traced-pipeline"})
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    exporter = (
        ConsoleSpanExporter(out=out)
        if json
        else ConsoleSpanExporter(out=out, formatter=one_line)
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("traced_pipeline")
    telemetry = Telemetry(tracer_provider=provider)
    good = sum(1 for line in lines if line.split())
    done = anyio.Event()
    async with ActorSystem(telemetry=telemetry) as system:
        store = system.spawn(Store, good, done, name="store")
        count = system.spawn(Count, store, name="count")
        tokenize = system.spawn(Tokenize, count, name="tokenize")
        for number, text in enumerate(lines, 1):
            with tracer.start_as_current_span(f"request {number}"):
                tokenize.tell(Line(text))
        await done.wait()
        with tracer.start_as_current_span("report"):
            totals = await store.ask(Totals())
    provider.shutdown()
    return totals


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=len(LINES), help="lines to send"
    )
    parser.add_argument("--fail", action="store_true", help="add a failing request")
    parser.add_argument("--json", action="store_true", help="full JSON spans")
    parser.add_argument(
        "--backend", choices=["asyncio", "uvloop", "trio"], default="asyncio"
    )
    args = parser.parse_args(argv)
    if args.requests < 1:
        parser.error("--requests must be at least 1")
    lines = [LINES[i % len(LINES)] for i in range(args.requests)]
    if args.fail:
        lines.insert(1, "")
    backend, options = _backend(args.backend)
    totals = anyio.run(
        traced_pipeline,
        lines,
        sys.stdout,
        args.json,
        backend=backend,
        backend_options=options,
    )
    top = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    print("most common words:", ", ".join(f"{w} {n}" for w, n in top))


def _backend(name: str) -> tuple[str, dict[str, Any]]:
    if name == "uvloop":
        try:
            import uvloop
        except ModuleNotFoundError:
            sys.exit('--backend uvloop: pip install "anyio-actors[uvloop]"')
        return "asyncio", {"loop_factory": uvloop.new_event_loop}
    return name, {}


if __name__ == "__main__":
    main(sys.argv[1:])
