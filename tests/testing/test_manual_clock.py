"""Manual time: a system on a ManualClock fires its timers, expires its asks
and waits out its restart backoff only when the test advances the clock, in
deadline order, on every backend."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorSystem,
    AskTimeout,
    Backoff,
    OneForOne,
    ReceiveTimeout,
)
from actors.testing import ManualClock, TestProbe

pytestmark = pytest.mark.anyio


class Ticker(Actor):
    """Reports each timer message to the probe, with the clock's time."""

    def __init__(self, probe: TestProbe[Any], clock: ManualClock) -> None:
        self.probe = probe
        self.clock = clock

    def receive(self, message: Any) -> Any:
        if message == "start":
            self.context.timers.start_periodic("tick", "tick", 1.0)
            self.context.timers.start_single("once", "once", 2.5)
            return "started"
        self.probe.ref.tell((message, self.clock.now()))
        return None


async def test_timers_fire_only_when_the_clock_advances_each_at_its_time(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    assert actor_system.clock is manual_time
    ticker = actor_system.spawn(Ticker, probe, manual_time)
    assert await ticker.ask("start") == "started"
    await probe.expect_no_message(0)
    await manual_time.advance(0.999)
    await probe.expect_no_message(0)
    await manual_time.advance(2.001)  # to 3.0: ticks at 1, 2, 3, "once" at 2.5
    assert await probe.receive_messages(4) == [
        ("tick", 1.0),
        ("tick", 2.0),
        ("once", 2.5),
        ("tick", 3.0),
    ]
    await probe.expect_no_message(0)
    assert manual_time.now() == 3.0


async def test_an_ask_times_out_when_the_clock_passes_its_deadline(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    outcome: list[BaseException] = []

    async def ask() -> None:
        try:
            await probe.ref.ask("q", timeout=5.0)
        except AskTimeout as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        await probe.expect_message("q")
        await manual_time.advance(4.9)
        assert outcome == []
        await manual_time.advance(0.1)
        assert len(outcome) == 1
    assert manual_time.pending == 0  # the expired list released its call


class Flaky(Actor):
    """Fails on "boom"; reports each start to the probe with the time."""

    def __init__(self, probe: TestProbe[Any], clock: ManualClock) -> None:
        self.probe = probe
        self.clock = clock

    def on_start(self) -> None:
        self.probe.ref.tell(("started", self.clock.now()))

    def receive(self, message: Any) -> Any:
        raise RuntimeError(message)


class Parent(Actor):
    supervisor_strategy = OneForOne(
        max_restarts=100,
        within=1000.0,
        backoff=Backoff(min_delay=1.0, max_delay=4.0, random_factor=0.0),
    )

    def __init__(self, probe: TestProbe[Any], clock: ManualClock) -> None:
        self.args = (probe, clock)

    def receive(self, message: Any) -> Any:
        if message == "spawn":
            return self.context.spawn(Flaky, *self.args, name="flaky")
        return None


async def test_restart_backoff_waits_on_the_manual_clock(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    parent = actor_system.spawn(Parent, probe, manual_time)
    child = await parent.ask("spawn")
    await probe.expect_message(("started", 0.0))
    child.tell("boom")
    await manual_time.advance(0)
    await probe.expect_no_message(0)  # waiting out its 1 s backoff
    await manual_time.advance(1.0)
    await probe.expect_message(("started", 1.0))
    child.tell("boom")
    await manual_time.advance(1.5)
    await probe.expect_no_message(0)  # the second backoff is 2 s
    await manual_time.advance(0.5)
    await probe.expect_message(("started", 3.0))


async def test_sleeps_and_scopes_on_a_manual_clock_end_in_deadline_order() -> None:
    clock = ManualClock(start=10.0)
    order: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        order.append((name, clock.now()))

    async def scoped() -> None:
        with clock.move_on_after(1.5) as scope:
            await anyio.sleep_forever()
        order.append(("scope", clock.now()))
        assert scope.cancelled_caught

    async with anyio.create_task_group() as tg:
        tg.start_soon(sleeper, "b", 2.0)
        tg.start_soon(sleeper, "a", 1.0)
        tg.start_soon(scoped)
        await clock.advance(5)
    assert order == [("a", 11.0), ("scope", 11.5), ("b", 12.0)]
    assert clock.now() == 15.0
    assert clock.pending == 0
    assert clock.next_deadline == math.inf


async def test_a_cancelled_call_never_runs() -> None:
    clock = ManualClock()
    ran: list[int] = []
    clock.call_at(1.0, lambda: ran.append(1)).cancel()
    clock.call_at(2.0, lambda: ran.append(2))
    assert clock.pending == 1
    await clock.advance(3)
    assert ran == [2]


async def test_advance_checks_its_argument() -> None:
    clock = ManualClock()
    with pytest.raises(ValueError, match="seconds must be >= 0"):
        await clock.advance(-1)
    with pytest.raises(TypeError, match="seconds must be a number"):
        await clock.advance("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="start must be finite"):
        ManualClock(math.inf)


def test_the_system_checks_its_clock_argument() -> None:
    with pytest.raises(TypeError, match=r"clock must be an actors\.testing\.Clock"):
        ActorSystem(clock=object())  # type: ignore[arg-type]


async def test_a_system_without_a_clock_uses_the_event_loop_s() -> None:
    async with ActorSystem() as system:
        assert system.clock is None
        deadlines = type(system._runtime.deadlines).__name__
        assert deadlines in ("Deadlines", "TrioDeadlines")


class Fragile(Actor):
    """Fails on "boom"; reports each (re)start to the probe."""

    def __init__(self, probe: TestProbe[Any]) -> None:
        self.probe = probe

    def on_start(self) -> None:
        self.probe.ref.tell("started")

    def receive(self, message: Any) -> Any:
        raise RuntimeError(message)


class Strict(Actor):
    """At most one restart within 10 s of its clock."""

    supervisor_strategy = OneForOne(max_restarts=1, within=10.0)

    def __init__(self, probe: TestProbe[Any]) -> None:
        self.probe = probe

    def receive(self, message: Any) -> Any:
        return self.context.spawn(Fragile, self.probe, name="fragile")


async def test_restart_intensity_counts_restarts_within_its_window_on_the_clock(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    parent = actor_system.spawn(Strict, probe, restart="temporary")
    probe.watch(parent)
    child = await parent.ask("spawn")
    await probe.expect_message("started")
    child.tell("boom")
    await probe.expect_message("started")  # restarted at 0 s
    await manual_time.advance(10.5)  # that restart has left the window
    child.tell("boom")
    await probe.expect_message("started")  # restarted at 10.5 s
    await manual_time.advance(9.0)  # still within 10 s of the last one
    child.tell("boom")
    terminated = await probe.expect_terminated(parent)
    assert isinstance(terminated.reason, RuntimeError)


def trio_mock_clock() -> Any:
    import trio.testing

    return pytest.param(
        ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}),
        id="trio-mockclock",
    )


@pytest.mark.parametrize("anyio_backend", [trio_mock_clock()])
async def test_on_trio_s_mock_clock_probe_timeouts_and_timers_run_in_virtual_time(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    # No ManualClock: Trio's MockClock is the event loop's clock, so the
    # system's timers and the probe's timeouts both run on it, and the clock
    # jumps ahead whenever every task is blocked.
    import trio

    class Later(Actor):
        def on_start(self) -> None:
            self.context.timers.start_single("k", "fired", 3600.0)

        def receive(self, message: Any) -> None:
            probe.ref.tell((message, trio.current_time() - start))

    start = trio.current_time()
    actor_system.spawn(Later)
    await probe.expect_no_message(3599.0)
    assert await probe.expect_message(timeout=2.0) == ("fired", 3600.0)


class Idle(Actor):
    """Tells the probe when no message came for 5 s of the clock."""

    def __init__(self, probe: TestProbe[Any], clock: ManualClock) -> None:
        self.probe = probe
        self.clock = clock
        self.context.set_receive_timeout(5.0)

    def receive(self, message: Any) -> None:
        if isinstance(message, ReceiveTimeout):
            self.probe.ref.tell(("idle at", self.clock.now()))


async def test_a_receive_timeout_fires_on_the_manual_clock(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[Any]
) -> None:
    idle = actor_system.spawn(Idle, probe, manual_time)
    await manual_time.advance(4.0)
    idle.tell("busy")  # resets it: next at 9.0
    await manual_time.advance(4.5)
    await probe.expect_no_message(0)
    await manual_time.advance(0.5)
    assert await probe.expect_message() == ("idle at", 9.0)
