"""Tracing: contexts travel with messages, one consumer span per handled
message, client spans for asks, failures, restarts, escalations and stops."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    AskTimeout,
    Directive,
    OneForOne,
    Terminated,
    UnhandledMessage,
)

from ._support import Otel, by_id, parent_id

pytestmark = pytest.mark.anyio


class Relay(Actor):
    """Tells each message to ``next`` (if any); replies with the message."""

    def __init__(self, next: ActorRef[Any] | None = None) -> None:
        self.next = next

    def receive(self, message: Any) -> Any:
        if self.next is not None:
            self.next.tell(message)
        return message


class Sink(Actor):
    """Collects messages and sets ``done`` after ``expected`` of them."""

    def __init__(self, seen: list[Any], expected: int, done: anyio.Event) -> None:
        self.seen = seen
        self.expected = expected
        self.done = done

    def receive(self, message: Any) -> None:
        self.seen.append(message)
        if len(self.seen) == self.expected:
            self.done.set()


class Tagger(Actor):
    """Tags the span current in its handler with the message, yields, then
    tells the message on to ``next``."""

    def __init__(self, next: ActorRef[Any]) -> None:
        self.next = next

    async def receive(self, message: int) -> int:
        trace.get_current_span().set_attribute("test.i", message)
        await anyio.lowlevel.checkpoint()
        self.next.tell(message)
        return message * 2


class Fails(Actor):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return message


async def test_a_chain_of_three_actors_is_one_trace(otel: Otel) -> None:
    seen: list[Any] = []
    done = anyio.Event()
    async with ActorSystem(telemetry=otel.telemetry) as system:
        c = system.spawn(Sink, seen, 1, done, name="c")
        b = system.spawn(Relay, c, name="b")
        a = system.spawn(Relay, b, name="a")
        with otel.tracer.start_as_current_span("request") as request:
            a.tell("hello")
        await done.wait()
    root = otel.span("request")
    span_a, span_b, span_c = (
        otel.span(f"process {cls}", path=f"/user/{name}")
        for cls, name in (("Relay", "a"), ("Relay", "b"), ("Sink", "c"))
    )
    assert {s.context.trace_id for s in (span_a, span_b, span_c)} == {
        request.get_span_context().trace_id
    }
    assert parent_id(span_a) == root.context.span_id
    assert parent_id(span_b) == span_a.context.span_id
    assert parent_id(span_c) == span_b.context.span_id


async def test_handling_spans_follow_the_messaging_conventions(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Relay, name="echo")
        ref.tell(1)
        assert await ref.ask("two") == "two"
    told, asked = sorted(
        otel.spans("process Relay", path="/user/echo"), key=lambda s: s.start_time or 0
    )
    assert told.kind is SpanKind.CONSUMER
    assert dict(told.attributes or {}) == {
        "messaging.system": "anyio-actors",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": "/user/echo",
        "actor.path": "/user/echo",
        "actor.class": "Relay",
        "actor.message.type": "int",
        "actor.message.kind": "tell",
        "actor.outcome": "ok",
    }
    assert asked.attributes is not None
    assert asked.attributes["actor.message.kind"] == "ask"
    assert asked.attributes["actor.message.type"] == "str"
    assert told.status.status_code is StatusCode.UNSET


async def test_fifty_concurrent_asks_each_get_a_span_under_their_own_parent(
    otel: Otel,
) -> None:
    seen: list[Any] = []
    done = anyio.Event()

    async def ask_under_a_parent(ref: ActorRef[Any], i: int) -> None:
        with otel.tracer.start_as_current_span(f"parent-{i}"):
            assert await ref.ask(i) == i * 2

    async with ActorSystem(telemetry=otel.telemetry) as system:
        sink = system.spawn(Sink, seen, 50, done, name="sink")
        tagger = system.spawn(Tagger, sink, name="tagger")
        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(ask_under_a_parent, tagger, i)
        await done.wait()
    spans = by_id(otel.spans())
    handled = otel.spans("process Tagger", path="/user/tagger")
    assert len(handled) == 50
    downstream = {
        parent_id(s): s for s in otel.spans("process Sink", path="/user/sink")
    }
    for span in handled:
        assert span.attributes is not None
        tag = span.attributes["test.i"]  # set by the handler, on its span
        ask = spans[parent_id(span)]  # type: ignore[index]
        assert ask.name == "ask Tagger" and ask.kind is SpanKind.CLIENT
        parent = spans[parent_id(ask)]  # type: ignore[index]
        assert parent.name == f"parent-{tag!s}"
        assert span.context.trace_id == parent.context.trace_id
        # What the handler told on runs under the handler's own span.
        assert downstream[span.context.span_id].context.trace_id == (
            parent.context.trace_id
        )


async def test_messages_of_one_batch_never_share_a_context(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Relay, name="r")
        with otel.tracer.start_as_current_span("first"):
            ref.tell(1)
        ref.tell(2)  # outside any span: a new trace
        with otel.tracer.start_as_current_span("third"):
            ref.tell(3)
        await ref.ask(4)
    spans = by_id(otel.spans())
    handled = sorted(
        otel.spans("process Relay", path="/user/r"), key=lambda s: s.start_time or 0
    )
    parents = [spans.get(parent_id(span) or 0) for span in handled]
    assert [p.name if p is not None else None for p in parents] == [
        "first",
        None,
        "third",
        "ask Relay",
    ]


async def test_an_ask_has_a_client_span_around_the_handling(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Relay, name="svc")
        with otel.tracer.start_as_current_span("caller"):
            await ref.ask("q")
    caller, ask, handling = (
        otel.span("caller"),
        otel.span("ask Relay", path="/user/svc"),
        otel.span("process Relay", path="/user/svc"),
    )
    assert ask.kind is SpanKind.CLIENT
    assert parent_id(ask) == caller.context.span_id
    assert parent_id(handling) == ask.context.span_id
    assert ask.attributes is not None
    assert ask.attributes["messaging.operation.name"] == "ask"
    assert ask.attributes["messaging.destination.name"] == "/user/svc"
    assert ask.attributes["actor.outcome"] == "ok"
    assert ask.start_time is not None and handling.start_time is not None
    assert ask.end_time is not None and handling.end_time is not None
    assert ask.start_time <= handling.start_time <= handling.end_time <= ask.end_time


async def test_an_ask_that_times_out_marks_its_client_span_as_an_error(
    otel: Otel,
) -> None:
    release = anyio.Event()

    class Slow(Actor):
        async def receive(self, message: Any) -> None:
            await release.wait()

    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Slow, name="slow")
        with pytest.raises(AskTimeout):
            await ref.ask("q", timeout=0.01)
        release.set()
    ask = otel.span(f"ask {Slow.__qualname__}", path="/user/slow")
    assert ask.status.status_code is StatusCode.ERROR
    assert ask.attributes is not None and ask.attributes["actor.outcome"] == "timeout"
    assert [e.name for e in ask.events] == ["exception"]
    # The handling finished after its asker gave up: the reply was abandoned.
    handling = otel.span(f"process {Slow.__qualname__}", path="/user/slow")
    assert handling.attributes is not None
    assert handling.attributes["actor.outcome"] == "abandoned"


async def test_a_failed_handling_records_the_exception(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Fails, name="f")
        ref.tell("boom")
        with pytest.raises(ValueError, match="boom"):
            await ref.ask("boom")
        assert await ref.ask("fine") == "fine"
    failed = [
        s
        for s in otel.spans("process Fails", path="/user/f")
        if s.status.status_code is StatusCode.ERROR
    ]
    assert len(failed) == 2
    for span in failed:
        assert span.attributes is not None
        assert span.attributes["actor.outcome"] == "error"
        assert span.status.description == "ValueError: boom"
        exception = next(e for e in span.events if e.name == "exception")
        assert exception.attributes is not None
        assert exception.attributes["exception.type"] == "ValueError"
        assert exception.attributes["exception.message"] == "boom"
    # The asker's client span fails with the handler's exception too.
    ask = next(
        s
        for s in otel.spans("ask Fails", path="/user/f")
        if s.status.status_code is StatusCode.ERROR
    )
    assert ask.attributes is not None and ask.attributes["actor.outcome"] == "error"


class Lifecycle(logging.Handler):
    """The runtime's lifecycle log records (``actor_event``, ``actor_path``)
    with the span current when each was emitted (what a logging bridge
    would tie it to)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, str, int | None]] = []

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "actor_event", None)
        if event is not None:
            context = trace.get_current_span().get_span_context()
            span = context.span_id if context.is_valid else None
            self.seen.append((event, record.__dict__["actor_path"], span))


@pytest.fixture
def lifecycle() -> Iterator[Lifecycle]:
    handler = Lifecycle()
    runtime = logging.getLogger("actors")
    level = runtime.level
    runtime.addHandler(handler)
    runtime.setLevel(logging.DEBUG)
    yield handler
    runtime.removeHandler(handler)
    runtime.setLevel(level)


async def test_a_restart_is_an_event_on_the_failed_span(
    otel: Otel, lifecycle: Lifecycle
) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Fails, name="f")
        ref.tell("boom")
        assert await ref.ask("after") == "after"
        assert system.restarts == 1
    (failed,) = [
        s
        for s in otel.spans("process Fails", path="/user/f")
        if s.status.status_code is StatusCode.ERROR
    ]
    names = [e.name for e in failed.events]
    assert names == ["exception", "actor.dead_letter", "actor.restart"]
    restart = failed.events[2]
    assert restart.attributes is not None
    assert restart.attributes["actor.path"] == "/user/f"
    # The runtime's failure record is emitted inside the failed span.
    failure = failed.context.span_id
    assert ("failure", "/user/f", failure) in lifecycle.seen
    assert ("restart", "/user/f", None) in lifecycle.seen


class Escalating(Actor):
    """Escalates every child failure; spawns one failing child."""

    supervisor_strategy = OneForOne(decider=lambda exc: Directive.ESCALATE)

    def __init__(self, restarted: anyio.Event) -> None:
        self.restarted = restarted

    def on_start(self) -> None:
        self.child = self.context.spawn(Fails, name="child")

    def on_restart(self, exc: BaseException | None) -> None:
        self.restarted.set()
        self.on_start()

    def receive(self, message: Any) -> None:
        self.child.tell(message)


async def test_an_escalation_is_an_event_on_the_failed_span(
    otel: Otel, lifecycle: Lifecycle
) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        restarted = anyio.Event()
        parent = system.spawn(Escalating, restarted, name="parent")
        parent.tell("boom")
        await restarted.wait()
        assert system.escalations == 1
    failed = [
        s
        for s in otel.spans("process Fails", path="/user/parent/child")
        if s.status.status_code is StatusCode.ERROR
    ]
    (span,) = failed
    escalation = next(e for e in span.events if e.name == "actor.escalation")
    assert escalation.attributes is not None
    assert escalation.attributes["actor.path"] == "/user/parent/child"
    assert escalation.attributes["actor.supervisor.path"] == "/user/parent"
    events = [(event, path) for event, path, _ in lifecycle.seen]
    assert ("escalation", "/user/parent") in events
    assert ("stop", "/user/parent/child") in events
    assert ("restart", "/user/parent") in events  # the guardian restarts it


async def test_a_stop_is_a_log_record_with_the_actor_path(
    otel: Otel, lifecycle: Lifecycle
) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Relay, name="brief")
        ref.stop()
        await ref.join()
        assert lifecycle.seen == [("stop", "/user/brief", None)]


class Watcher(Actor):
    """Watches ``target``; tells ``sink`` when it terminates."""

    def __init__(self, target: ActorRef[Any], sink: ActorRef[Any]) -> None:
        self.target = target
        self.sink = sink

    def on_start(self) -> None:
        self.context.watch(self.target)

    def receive(self, message: Any) -> None:
        if isinstance(message, Terminated):
            self.sink.tell("terminated")


async def test_signals_and_later_messages_do_not_inherit_the_spawners_context(
    otel: Otel,
) -> None:
    seen: list[Any] = []
    done = anyio.Event()
    async with ActorSystem(telemetry=otel.telemetry) as system:
        with otel.tracer.start_as_current_span("spawner"):
            sink = system.spawn(Sink, seen, 2, done, name="sink")
            target = system.spawn(Relay, name="target")
            watcher = system.spawn(Watcher, target, sink, name="watcher")
            await watcher.ask("started?")  # on_start (the watch) has run
        target.stop()  # the Terminated signal reaches the watcher
        sink.tell("untraced")
        await done.wait()
    spawner = otel.span("spawner").context.trace_id
    for span in otel.spans("process Sink", path="/user/sink"):
        assert span.parent is None, span.attributes
        assert span.context.trace_id != spawner


async def test_a_dead_letter_in_a_handler_is_an_event_on_its_span(
    otel: Otel,
) -> None:
    class Ignores(Actor):
        pass

    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Ignores, name="i")
        with pytest.raises(UnhandledMessage):
            await ref.ask("ignored")
    span = otel.span(f"process {Ignores.__qualname__}", path="/user/i")
    (event,) = span.events
    assert event.name == "actor.dead_letter"
    assert dict(event.attributes or {}) == {
        "actor.path": "/user/i",
        "actor.reason": "unhandled",
        "actor.message.type": "str",
    }


class Scheduler(Actor):
    """On ``"start"``, starts a timer; tells ``sink`` what the timer fires."""

    def __init__(self, sink: ActorRef[Any]) -> None:
        self.sink = sink

    def receive(self, message: Any) -> None:
        if message == "start":
            self.context.timers.start_single("key", "fired", 0.001)
        else:
            self.sink.tell(message)


async def test_a_timer_firing_does_not_inherit_the_context_that_started_it(
    otel: Otel,
) -> None:
    pytest.importorskip("actors._timers")
    seen: list[Any] = []
    done = anyio.Event()
    async with ActorSystem(telemetry=otel.telemetry) as system:
        with otel.tracer.start_as_current_span("starter"):
            sink = system.spawn(Sink, seen, 1, done, name="sink")
            scheduler = system.spawn(Scheduler, sink, name="scheduler")
            scheduler.tell("start")
        await done.wait()
    assert seen == ["fired"]
    (fired,) = otel.spans("process Sink", path="/user/sink")
    assert fired.parent is None
    assert fired.context.trace_id != otel.span("starter").context.trace_id


async def test_tells_and_asks_from_threads_keep_the_threads_context(
    otel: Otel,
) -> None:
    pytest.importorskip("actors._threads")
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Relay, name="r")

        def in_a_thread() -> None:
            with otel.tracer.start_as_current_span("thread tell"):
                system.from_thread.tell(ref, 1)
            with otel.tracer.start_as_current_span("thread ask"):
                assert system.from_thread.ask(ref, 2) == 2

        await anyio.to_thread.run_sync(in_a_thread)
    spans = by_id(otel.spans())
    told, asked = sorted(
        otel.spans("process Relay", path="/user/r"), key=lambda s: s.start_time or 0
    )
    assert spans[parent_id(told) or 0].name == "thread tell"
    ask = spans[parent_id(asked) or 0]
    assert ask.name == "ask Relay"
    assert spans[parent_id(ask) or 0].name == "thread ask"


async def test_an_ask_that_waits_for_room_keeps_its_client_span(otel: Otel) -> None:
    release = anyio.Event()
    entered = anyio.Event()

    class Gate(Actor):
        async def receive(self, message: Any) -> Any:
            if message == "hold":
                entered.set()
                await release.wait()
            return message

    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Gate, name="gate", capacity=1)
        ref.tell("hold")
        await entered.wait()
        ref.tell("fill")  # the mailbox is full now
        with pytest.raises(AskTimeout):
            await ref.ask("no room", timeout=0.01)
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                with otel.tracer.start_as_current_span("patient"):
                    assert await ref.ask("room", timeout=5) == "room"

            tg.start_soon(ask)
            release.set()
    timed_out, answered = sorted(
        otel.spans(f"ask {Gate.__qualname__}", path="/user/gate"),
        key=lambda s: s.start_time or 0,
    )
    assert timed_out.attributes is not None and answered.attributes is not None
    assert timed_out.attributes["actor.outcome"] == "timeout"
    assert answered.attributes["actor.outcome"] == "ok"
    handled = {
        (s.attributes or {}).get("actor.message.type"): s
        for s in otel.spans(f"process {Gate.__qualname__}", path="/user/gate")
        if s.parent is not None and s.parent.span_id == answered.context.span_id
    }
    assert list(handled) == ["str"]  # "room" was handled under the ask's span
