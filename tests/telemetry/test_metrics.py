"""Metrics: every instrument's value after a known workload."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem

from ._support import Otel, attrs

pytestmark = pytest.mark.anyio


class Worker(Actor):
    """Handles anything; ``"boom"`` fails, ``"drop"`` is unhandled, a
    ``(entered, release)`` pair parks it until released."""

    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        if message == "drop":
            return super().receive(message)  # a dead letter: "unhandled"
        return message


class Parking(Actor):
    async def receive(self, message: Any) -> None:
        entered, release = message
        entered.set()
        await release.wait()


WORKER = attrs(actor_class="Worker")
PARKING = attrs(actor_class="Parking")


async def test_every_metric_after_a_known_workload(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        worker = system.spawn(Worker, name="worker")
        for i in range(5):
            worker.tell(i)  # 5 handled
        worker.tell("drop")  # handled, and a dead letter ("unhandled")
        worker.tell("boom")  # a failure, a restart, a dead letter
        await worker.send(5)
        assert await worker.ask(6) == 6
        assert await worker.ask(7) == 7

        parking = system.spawn(Parking, name="parking")
        entered, release = anyio.Event(), anyio.Event()
        parking.tell((entered, release))
        await entered.wait()
        for i in range(3):
            parking.tell(i)  # queued behind the parked message
        # The gauge, read while 3 messages wait.
        assert otel.values("actors.mailbox.depth") == {PARKING: 3, WORKER: 0}
        parking.stop()  # the 3 queued ones become dead letters
        release.set()
        await parking.join()

    values = otel.values
    assert values("actors.messages.sent") == {WORKER: 10, PARKING: 4}
    assert values("actors.messages.handled") == {
        WORKER | attrs(actor_outcome="ok"): 9,
        WORKER | attrs(actor_outcome="error"): 1,
        PARKING | attrs(actor_outcome="ok"): 1,
    }
    assert values("actors.messages.dead_lettered") == {
        WORKER | attrs(actor_reason="unhandled"): 1,
        WORKER | attrs(actor_reason="handler failed"): 1,
        PARKING | attrs(actor_reason="actor stopped"): 3,
    }
    assert values("actors.failures") == {WORKER | attrs(error_type="ValueError"): 1}
    assert values("actors.restarts") == {WORKER: 1}
    # Histograms: one sample per handled message (failed ones included).
    assert values("actors.message.handling.duration") == {WORKER: 10, PARKING: 1}
    assert values("actors.mailbox.wait") == {WORKER: 10, PARKING: 1}
    # Every actor has stopped: no mailbox left to observe.
    assert values("actors.mailbox.depth") == {}


async def test_durations_are_in_seconds(otel: Otel) -> None:
    class Sleeper(Actor):
        async def receive(self, message: float) -> None:
            await anyio.sleep(message)

    async with ActorSystem(telemetry=otel.telemetry) as system:
        ref = system.spawn(Sleeper)
        ref.tell(0.05)  # handled for >= 0.05 s...
        await ref.ask(0)  # ...while this one waits in the mailbox
    points = otel.metrics()
    (duration,) = points["actors.message.handling.duration"]
    (wait,) = points["actors.mailbox.wait"]
    assert duration.count == 2 and 0.05 <= duration.sum < 5
    assert wait.count == 2 and 0.045 <= wait.max < 5
    assert duration.explicit_bounds[0] == 0.000001  # buckets made for seconds


async def test_pool_workers_carry_the_pool_name_and_their_class(otel: Otel) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        pool = system.spawn_pool(Worker, 2, name="crew")
        for i in range(4):
            pool.tell(i)
        for i in range(2):
            assert await pool.ask(i) == i
    crew = attrs(actor_class="Worker", actor_pool="crew")
    assert otel.values("actors.messages.handled") == {
        crew | attrs(actor_outcome="ok"): 6
    }
    assert otel.values("actors.messages.sent") == {crew: 6}


async def test_dynamically_named_actors_share_their_class_attributes(
    otel: Otel,
) -> None:
    async with ActorSystem(telemetry=otel.telemetry) as system:
        refs = [system.spawn(Worker, name=f"user-{i}") for i in range(20)]
        for ref in refs:
            await ref.ask("hi")
    assert otel.values("actors.messages.handled") == {
        WORKER | attrs(actor_outcome="ok"): 20
    }
