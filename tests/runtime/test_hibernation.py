"""Hibernation: an actor that has had mail gives up its task once idle.

A run that handled mail parks on its mailbox with its task; the system's
idle tick (every ``hibernate_after`` seconds, on the system's clock) ends
the run of an actor parked since the tick before, so it holds no task, and
the next item, stop or command starts a new run of the same incarnation.
These tests run the tick on a ``ManualClock`` (or Trio's ``MockClock``):
time passes only when the test says so, nothing sleeps.
"""

from __future__ import annotations

import contextvars
import math
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, OneForOne, ReceiveTimeout
from actors._hibernation import HIBERNATION_TASK_NAME, Hibernation
from actors.testing import ManualClock, wait_all_blocked

from ._support import Watcher

pytestmark = pytest.mark.anyio

AFTER = 1.0  #: the systems' hibernate_after, seconds on their ManualClock
WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


def _actor_tasks() -> int:
    """Running tasks, the Trio tick task left out."""
    return sum(t.name != HIBERNATION_TASK_NAME for t in anyio.get_running_tasks())


def _hibernation(system: ActorSystem) -> Hibernation:
    hibernation = system._runtime.hibernation
    assert hibernation is not None
    return hibernation


class Counting(Actor):
    """Counts its messages and starts; answers an ask with what it knows."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log
        self.count = 0

    def on_start(self) -> None:
        self.log.append("start")
        WHO.set(self.context.self_ref.path)

    def receive(self, message: Any) -> Any:
        self.count += 1
        self.log.append(message)
        if message == "boom":
            raise RuntimeError("boom")
        return (self.count, WHO.get())

    def on_stop(self) -> None:
        self.log.append("stop")


async def _idle_through(clock: ManualClock, ticks: int = 2) -> None:
    for _ in range(ticks):
        await clock.advance(AFTER)


async def test_an_actor_that_had_mail_gives_up_its_task_after_two_idle_ticks() -> None:
    clock = ManualClock()
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        await wait_all_blocked()
        before = _actor_tasks()
        refs = [system.spawn(Counting, []) for _ in range(5)]
        for ref in refs:
            ref.tell("hello")
        await wait_all_blocked()
        assert _actor_tasks() == before + 5  # each parks with its task
        await clock.advance(AFTER)  # the first tick finds them parked
        assert _actor_tasks() == before + 5  # idle for less than a tick yet
        await clock.advance(AFTER)  # still in the same park: idle all along
        assert _actor_tasks() == before
        assert _hibernation(system).tasked == {}
        assert clock.pending == 0  # no actor holds a task: no tick either


async def test_an_actor_with_mail_between_every_two_ticks_keeps_its_task() -> None:
    clock = ManualClock()
    log: list[Any] = []
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        await wait_all_blocked()
        before = _actor_tasks()
        ref = system.spawn(Counting, log)
        for i in range(6):
            ref.tell(i)
            await clock.advance(AFTER)
            assert _actor_tasks() == before + 1
        assert system._runtime.hibernation is not None
        assert list(_hibernation(system).tasked) == [ref._cell]
    assert log == ["start", *range(6), "stop"]


async def test_a_hibernated_actor_goes_on_with_its_instance_and_context() -> None:
    clock = ManualClock()
    log: list[Any] = []
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        ref = system.spawn(Counting, log)
        assert await ref.ask("a") == (1, ref.path)
        for round_ in range(3):
            await _idle_through(clock)
            assert ref._cell not in _hibernation(system).tasked  # no task
            # The same instance (its count goes on), in the context variables
            # its on_start set, never restarted.
            assert await ref.ask("b") == (round_ + 2, ref.path)
    assert log == ["start", "a", "b", "b", "b", "stop"]


async def test_mail_told_to_a_hibernated_actor_is_handled_in_order() -> None:
    clock = ManualClock()
    log: list[Any] = []
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        ref = system.spawn(Counting, log)
        ref.tell(0)
        await _idle_through(clock)
        for i in range(1, 100):
            ref.tell(i)
        assert (await ref.ask("last"))[0] == 101
    assert log == ["start", *range(100), "last", "stop"]


async def test_mail_between_the_tick_and_the_resumption_keeps_the_task() -> None:
    # The tick interrupts the wait; a tell before the task resumes is found
    # by it: the run goes on (no second run, nothing lost).
    clock = ManualClock()
    log: list[Any] = []
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        await wait_all_blocked()
        before = _actor_tasks()
        ref = system.spawn(Counting, log)
        ref.tell(1)
        await wait_all_blocked()
        hibernation = _hibernation(system)
        assert hibernation.tick() == 0  # its park is noted
        assert hibernation.tick() == 1  # the same park: interrupted
        ref.tell(2)  # before it resumes
        await wait_all_blocked()
        assert _actor_tasks() == before + 1
        assert ref._cell in hibernation.tasked
        assert (await ref.ask(3))[0] == 3
    assert log == ["start", 1, 2, 3, "stop"]


async def test_a_hibernated_actor_stops_with_its_hooks_and_tells_its_watcher() -> None:
    clock = ManualClock()
    log: list[Any] = []
    seen: list[Any] = []
    done = anyio.Event()
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        ref = system.spawn(Counting, log)
        watcher = system.spawn(Watcher, ref, seen, done)
        ref.tell("x")
        watcher.tell("warm")  # both have had mail: both hibernate
        await _idle_through(clock)
        assert _hibernation(system).tasked == {}
        ref.stop()
        with anyio.fail_after(10):
            await ref.join()
            await done.wait()
    assert log == ["start", "x", "stop"]
    assert seen == [ref]


async def test_a_hibernated_actor_is_restarted_by_its_supervisor() -> None:
    clock = ManualClock()
    log: list[Any] = []
    async with ActorSystem(
        clock=clock, hibernate_after=AFTER, strategy=OneForOne(), log_failures=False
    ) as system:
        ref = system.spawn(Counting, log)
        ref.tell("x")
        await _idle_through(clock)
        ref.tell("boom")
        # A fresh instance (its count starts again), the same ref.
        assert (await ref.ask("after"))[0] == 1
        await _idle_through(clock)  # the new incarnation hibernates too
        assert _hibernation(system).tasked == {}
        assert (await ref.ask("again"))[0] == 2
    assert log == ["start", "x", "boom", "stop", "start", "after", "again", "stop"]


async def test_timers_and_the_receive_timeout_reach_a_hibernated_actor() -> None:
    clock = ManualClock()
    got: list[tuple[float, Any]] = []

    class Sleepy(Actor):
        def on_start(self) -> None:
            self.context.timers.start_periodic("tick", "tick", 5.0)
            self.context.set_receive_timeout(7.0)

        def receive(self, message: Any) -> None:
            got.append((clock.now(), message))

    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        ref = system.spawn(Sleepy)
        ref.tell("hi")
        await wait_all_blocked()
        # Hibernated within 2 s of each delivery; each firing wakes it.
        await clock.advance(16)
        ref.stop()
        await ref.join()
    assert got == [
        (0.0, "hi"),
        (5.0, "tick"),
        (7.0, ReceiveTimeout()),
        (10.0, "tick"),
        (14.0, ReceiveTimeout()),
        (15.0, "tick"),
    ]


async def test_stashed_messages_survive_hibernation() -> None:
    clock = ManualClock()
    got: list[Any] = []

    class Gate(Actor):
        def receive(self, message: Any) -> None:
            if message == "open":
                self.unstash_all()
                self.become(self.opened)
            else:
                self.stash()

        def opened(self, message: Any) -> None:
            got.append(message)

    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        ref = system.spawn(Gate)
        for i in range(3):
            ref.tell(i)
        await _idle_through(clock)
        assert _hibernation(system).tasked == {}
        ref.tell("open")
        ref.tell(3)
        await wait_all_blocked()
    assert got == [0, 1, 2, 3]


async def test_a_thread_reaches_a_hibernated_actor() -> None:
    clock = ManualClock()
    async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
        ref = system.spawn(Counting, [])
        ref.tell("x")
        await _idle_through(clock)
        with anyio.fail_after(10):
            reply = await anyio.to_thread.run_sync(
                lambda: system.from_thread.ask(ref, "from a thread")
            )
    assert reply == (2, ref.path)


async def test_without_hibernate_after_an_actor_keeps_its_task() -> None:
    clock = ManualClock()
    async with ActorSystem(clock=clock, hibernate_after=None) as system:
        await wait_all_blocked()
        before = _actor_tasks()
        ref = system.spawn(Counting, [])
        ref.tell("x")
        await clock.advance(3600)
        assert _actor_tasks() == before + 1
        assert system._runtime.hibernation is None


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan])
def test_hibernate_after_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ValueError, match="hibernate_after"):
        ActorSystem(hibernate_after=bad)


def test_hibernate_after_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="hibernate_after"):
        ActorSystem(hibernate_after="1")  # type: ignore[arg-type]


async def test_a_cancelled_system_ends_its_hibernated_actors() -> None:
    clock = ManualClock()
    log: list[Any] = []
    with anyio.CancelScope() as scope:
        async with ActorSystem(clock=clock, hibernate_after=AFTER) as system:
            refs = [system.spawn(Counting, log) for _ in range(3)]
            for ref in refs:
                ref.tell("x")
            await _idle_through(clock)
            scope.cancel()
            await anyio.sleep_forever()
    assert not any(ref.is_alive for ref in refs)
