"""Pools in a traced system: the context travels through the pool's routing,
asks to a pool get a client span, and what a stop leaves queued is settled."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorStopped, ActorSystem

from ._support import Otel, attrs, by_id, parent_id

pytestmark = pytest.mark.anyio

ROUTINGS = pytest.mark.parametrize("routing", ["round_robin", "shared_queue"])


class Tally:
    """Counts messages across a pool's workers; ``done`` at ``expected``."""

    def __init__(self, expected: int) -> None:
        self.count = 0
        self.expected = expected
        self.done = anyio.Event()


class Double(Actor):
    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def receive(self, message: Any) -> Any:
        self.tally.count += 1
        if self.tally.count == self.tally.expected:
            self.tally.done.set()
        return message * 2


@ROUTINGS
async def test_messages_to_a_pool_keep_their_senders_context(
    otel: Otel, routing: Any
) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        tally = Tally(6 + 1 + 3)
        pool = system.spawn_pool(Double, 3, tally, routing=routing, name="crew")
        for i in range(6):
            with otel.tracer.start_as_current_span(f"tell-{i}"):
                pool.tell(i)
        with otel.tracer.start_as_current_span("asker"):
            assert await pool.ask(21) == 42
        with otel.tracer.start_as_current_span("broadcaster"):
            pool.broadcast(0)
        await tally.done.wait()
    spans = by_id(otel.spans())
    handled = otel.spans("process Double")
    assert all(
        str((s.attributes or {})["messaging.destination.name"]).startswith(
            "/user/crew/"
        )
        for s in handled
    )
    parents = sorted(
        spans[parent_id(s) or 0].name for s in handled if parent_id(s) in spans
    )
    assert parents == sorted(
        [f"tell-{i}" for i in range(6)] + ["ask Double"] + ["broadcaster"] * 3
    )
    ask = otel.span("ask Double", path="/user/crew")
    assert spans[parent_id(ask) or 0].name == "asker"
    crew = attrs(actor_class="Double", actor_pool="crew")
    assert otel.values("actors.messages.sent") == {crew: 6 + 1 + 3}
    assert otel.values("actors.messages.handled") == {
        crew | attrs(actor_outcome="ok"): 6 + 1 + 3
    }


async def _until(condition: Callable[[], bool]) -> None:
    """Step the scheduler (checkpoints, never sleeps) until ``condition``."""
    for _ in range(1000):
        if condition():
            return
        await anyio.lowlevel.checkpoint()
    raise AssertionError("the condition never became true")


class Parked(Actor):
    async def receive(self, message: Any) -> Any:
        if isinstance(message, tuple):
            entered, release = message
            entered.set()
            await release.wait()
        return message


async def test_a_stopped_shared_queue_pool_fails_its_queued_asks(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        pool = system.spawn_pool(Parked, 1, routing="shared_queue", drain=1)
        entered, release = anyio.Event(), anyio.Event()
        pool.tell((entered, release))
        await entered.wait()
        failures: list[BaseException] = []

        async def ask() -> None:
            try:
                await pool.ask("queued")
            except ActorStopped as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            shared = pool._shared
            assert shared is not None
            await _until(lambda: bool(shared.state.buffer))  # the ask is queued
            pool.stop()
            release.set()
    assert len(failures) == 1
    assert system.dead_letters.recent[-1].message == "queued"


async def test_a_stopped_actor_fails_the_asks_still_in_its_mailbox(
    otel: Otel,
) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Parked)
        entered, release = anyio.Event(), anyio.Event()
        ref.tell((entered, release))
        await entered.wait()
        ref.tell("told")
        failures: list[BaseException] = []

        async def ask() -> None:
            try:
                await ref.ask("asked")
            except ActorStopped as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await _until(lambda: len(ref._cell.mailbox) == 2)  # the ask is queued
            ref.stop()
            release.set()
    assert len(failures) == 1
    assert [d.message for d in system.dead_letters.recent] == ["told", "asked"]
    ask_span = otel.span("ask Parked", path=ref.path)
    assert ask_span.attributes is not None
    assert ask_span.attributes["actor.outcome"] == "error"
