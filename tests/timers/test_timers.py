"""Keyed timers on every backend, with short real intervals: single and periodic
firings, replacement and cancellation (also of a firing already queued), timers
ending with the actor's stop and restart, firings as signals past a full
mailbox, one queued firing per key, and one timer task for many actors.

Nothing here sleeps to synchronise: the tests wait on events the actors set,
and on :class:`Alarm` timers to know that an earlier firing has been queued.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorSystem, MailboxFull, TimerScheduler

from ._support import Alarm, after, service, timer_tasks, until_no_timer_task

pytestmark = pytest.mark.anyio

TICK = 0.005  #: seconds: a short real interval; bounds below are generous


class Log(Actor):
    """Logs every message; sets ``events[message]`` when there is one."""

    def __init__(self, log: list[Any], events: dict[Any, anyio.Event]) -> None:
        self.log = log
        self.events = events

    def receive(self, message: Any) -> Any:
        self.log.append(message)
        event = self.events.get(message)
        if event is not None:
            event.set()
        return message


async def test_the_timers_of_an_actor_are_a_timer_scheduler() -> None:
    class Probe(Actor):
        def receive(self, message: Any) -> Any:
            return self.context.timers

    async with ActorSystem() as system:
        ref = system.spawn(Probe)
        timers = await ref.ask("timers")
        assert isinstance(timers, TimerScheduler)
        assert timers is await ref.ask("again")  # made once per actor


async def test_a_single_timer_fires_once() -> None:
    log: list[Any] = []
    later = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Log, log, {"later": later})
        timers = ref._cell.context.timers
        timers.start_single("once", "once", TICK)
        assert timers.is_active("once")
        # A timer three times as late proves the first had time to fire again.
        timers.start_single("later", "later", 3 * TICK)
        await later.wait()
        assert log == ["once", "later"]
        assert not timers.is_active("once")  # delivered: a single timer is done
        assert len(timers) == 0


class Ticker(Actor):
    """A periodic timer from on_start; sets ``done`` after ``n`` ticks."""

    def __init__(self, n: int, done: anyio.Event, ticks: list[int]) -> None:
        self.n = n
        self.done = done
        self.ticks = ticks

    def on_start(self) -> None:
        self.context.timers.start_periodic("tick", "tick", TICK)

    async def receive(self, message: Any) -> None:  # async receive on purpose
        self.ticks.append(1)
        if len(self.ticks) == self.n:
            self.done.set()


async def test_a_periodic_timer_fires_repeatedly_into_an_async_receive() -> None:
    done = anyio.Event()
    ticks: list[int] = []
    async with ActorSystem() as system:
        ref = system.spawn(Ticker, 5, done, ticks)
        with anyio.fail_after(5):
            await done.wait()
        assert ref._cell.context.timers.is_active("tick")


async def test_a_replaced_key_never_delivers_the_old_message_even_when_queued() -> None:
    log: list[Any] = []
    new = anyio.Event()

    class Replacer(Log):
        async def receive(self, message: Any) -> Any:
            if message == "block":
                self.context.timers.start_single("k", "old", TICK)
                await after(alarm, 2 * TICK)
                mailbox = self.context._cell.mailbox
                assert mailbox.statistics().queued_signals == 1  # "old" is queued
                self.context.timers.start_single("k", "new", TICK)
                return None
            return super().receive(message)

    async with ActorSystem() as system:
        alarm = system.spawn(Alarm)
        ref = system.spawn(Replacer, log, {"new": new})
        ref.tell("block")
        with anyio.fail_after(5):
            await new.wait()
        assert log == ["new"]


async def test_a_cancelled_timer_never_delivers_even_when_queued() -> None:
    log: list[Any] = []

    class Canceller(Log):
        async def receive(self, message: Any) -> Any:
            if message == "block":
                timers = self.context.timers
                timers.start_single("single", "old single", TICK)
                timers.start_periodic("periodic", "old periodic", TICK)
                await after(alarm, 2 * TICK)
                assert self.context._cell.mailbox.statistics().queued_signals == 2
                timers.cancel("single")
                timers.cancel("periodic")
                timers.cancel("never started")  # no error
                assert not timers.is_active("single")
                assert not timers.is_active("periodic")
                return None
            return super().receive(message)

    async with ActorSystem() as system:
        alarm = system.spawn(Alarm)
        ref = system.spawn(Canceller, log, {})
        ref.tell("block")
        # The ask queues behind both stale firings: when it is answered, they
        # have reached the actor and been dropped.
        assert await ref.ask("after") == "after"
        await after(alarm, 3 * TICK)  # and no periodic firing comes later
        assert await ref.ask("end") == "end"
        assert log == ["after", "end"]
        assert service(system).live == 0


async def test_timers_end_when_the_actor_stops() -> None:
    done = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Ticker, 2, done, [])
        await done.wait()
        assert service(system).live == 1
        ref.stop()
        await ref.join()
        assert service(system).live == 0
        assert not ref._cell.context.timers.is_active("tick")
        await until_no_timer_task()  # nothing left to fire: the task ended
    assert system.dead_letters.count == 0  # no firing hit the closed mailbox


async def test_timers_end_on_restart_even_with_a_firing_queued() -> None:
    log: list[Any] = []
    probe = anyio.Event()

    class Restarting(Actor):
        incarnations: ClassVar[int] = 0

        def on_start(self) -> None:
            Restarting.incarnations += 1
            self.incarnation = Restarting.incarnations
            timers = self.context.timers
            if self.incarnation == 1:
                timers.start_periodic("tick", "tick", TICK)
            else:
                assert not timers.is_active("tick")
                timers.start_single("probe", "probe", 4 * TICK)

        async def receive(self, message: Any) -> None:
            log.append((self.incarnation, message))
            if message == "boom":
                await after(alarm, 2 * TICK)  # a tick is queued now
                assert self.context._cell.mailbox.statistics().queued_signals >= 1
                raise RuntimeError("boom")
            if message == "probe":
                probe.set()

    async with ActorSystem() as system:
        alarm = system.spawn(Alarm)
        ref = system.spawn(Restarting)
        ref.tell("boom")
        with anyio.fail_after(5):
            await probe.wait()
    assert system.restarts == 1
    assert (1, "boom") in log
    assert [entry for entry in log if entry[0] == 2] == [(2, "probe")]


async def test_a_full_mailbox_does_not_lose_a_firing() -> None:
    log: list[Any] = []
    fired = anyio.Event()
    entered = anyio.Event()
    filled = anyio.Event()
    started = anyio.Event()
    release = anyio.Event()

    class Full(Log):
        async def receive(self, message: Any) -> Any:
            if message == "block":
                entered.set()
                # The timer starts once "filler" is queued: its firing comes
                # after it, however slow the machine.
                await filled.wait()
                self.context.timers.start_single("k", "fired", TICK)
                started.set()
                await release.wait()
                return None
            return super().receive(message)

    async with ActorSystem() as system:
        alarm = system.spawn(Alarm)
        ref = system.spawn(Full, log, {"fired": fired}, capacity=1)
        ref.tell("block")
        await entered.wait()
        ref.tell("filler")
        filled.set()
        await started.wait()
        with pytest.raises(MailboxFull):
            ref.tell("one too many")
        await after(alarm, 2 * TICK)
        stats = ref._cell.mailbox.statistics()
        assert (stats.queued_messages, stats.queued_signals) == (1, 1)
        release.set()
        with anyio.fail_after(5):
            await fired.wait()
        assert log == ["filler", "fired"]


async def test_at_most_one_firing_per_key_waits_under_a_slow_actor() -> None:
    queued: list[int] = []
    done = anyio.Event()

    class Slow(Actor):
        def on_start(self) -> None:
            self.context.timers.start_periodic("tick", "tick", TICK)

        async def receive(self, message: Any) -> None:
            # Busy for ten intervals: nine or ten firings fall due meanwhile.
            await after(alarm, 10 * TICK)
            queued.append(self.context._cell.mailbox.statistics().queued_signals)
            if len(queued) == 3:
                self.context.timers.cancel("tick")
                done.set()

    async with ActorSystem() as system:
        alarm = system.spawn(Alarm)
        system.spawn(Slow)
        with anyio.fail_after(5):
            await done.wait()
    assert queued == [1, 1, 1]


async def test_many_actors_share_one_timer_task() -> None:
    actors = 200
    done = anyio.Event()
    counts: dict[int, int] = {}
    tasks_seen: set[int] = set()

    class Many(Actor):
        def __init__(self, index: int) -> None:
            self.index = index

        def on_start(self) -> None:
            # Staggered phases, so the task wakes often, not once per round.
            first = TICK * (1 + self.index / actors)
            timers = self.context.timers
            timers.start_periodic("tick", "tick", 2 * TICK, initial_delay=first)

        def receive(self, message: Any) -> None:
            tasks_seen.add(timer_tasks())
            counts[self.index] = counts.get(self.index, 0) + 1
            if counts[self.index] == 3:
                self.context.timers.cancel("tick")
                if len(counts) == actors and all(n >= 3 for n in counts.values()):
                    done.set()

    async with ActorSystem() as system:
        for index in range(actors):
            system.spawn(Many, index)
        with anyio.fail_after(10):
            await done.wait()
        assert service(system).tasks_started == 1
        assert service(system).live == 0
    assert sorted(counts.values()) == [3] * actors
    assert tasks_seen == {1}  # at every one of the 600 firings


async def test_the_timer_task_ends_when_idle_and_starts_again_on_demand() -> None:
    log: list[Any] = []
    first, second = anyio.Event(), anyio.Event()
    async with ActorSystem() as system:
        assert timer_tasks() == 0  # no timer, no task
        ref = system.spawn(Log, log, {"first": first, "second": second})
        timers = ref._cell.context.timers
        timers.start_single("k", "first", TICK)
        await first.wait()
        await until_no_timer_task()
        timers.start_single("k", "second", TICK)
        await second.wait()
        assert service(system).tasks_started == 2
    assert log == ["first", "second"]


async def test_an_earlier_timer_wakes_the_sleeping_timer_task() -> None:
    log: list[Any] = []
    soon = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Log, log, {"soon": soon})
        timers = ref._cell.context.timers
        timers.start_single("late", "late", 3600)
        while service(system)._sleep_until == math.inf:
            await anyio.lowlevel.checkpoint()  # until the task sleeps for an hour
        timers.start_single("soon", "soon", TICK)
        with anyio.fail_after(5):
            await soon.wait()
        timers.cancel("late")  # and the exit does not wait an hour
    assert log == ["soon"]


async def test_a_stopping_actor_starts_no_timer() -> None:
    active: list[bool] = []

    class StartsInOnStop(Actor):
        def receive(self, message: Any) -> None:
            return None

        def on_stop(self) -> None:
            self.context.timers.start_single("k", "never", TICK)
            active.append(self.context.timers.is_active("k"))

    async with ActorSystem() as system:
        ref = system.spawn(StartsInOnStop)
        await ref.ask("started?")  # on_stop runs only after a start
        ref.stop()
        await ref.join()
        assert active == [False]
        assert system._runtime.timer_service is None  # no timer ever started


@pytest.mark.parametrize(
    ("seconds", "error"),
    [
        (-1.0, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        ("1", TypeError),
        (True, TypeError),
    ],
)
async def test_durations_must_be_positive_finite_seconds(
    seconds: Any, error: type[Exception]
) -> None:
    class Validating(Actor):
        def receive(self, message: Any) -> Any:
            timers = self.context.timers
            calls = [
                lambda: timers.start_single("k", "m", seconds),
                lambda: timers.start_periodic("k", "m", seconds),
                lambda: timers.start_periodic("k", "m", 1, initial_delay=seconds),
            ]
            raised = []
            for call in calls:
                try:
                    call()
                except Exception as exc:
                    raised.append(exc)
            return raised, timers.is_active("k")

    async with ActorSystem() as system:
        raised, active = await system.spawn(Validating).ask("try")
    assert [type(exc) for exc in raised] == [error] * 3
    assert "seconds" in str(raised[0])
    assert not active  # a rejected start changes nothing


async def test_an_interval_of_zero_is_rejected_but_a_zero_delay_is_not() -> None:
    class Validating(Actor):
        def receive(self, message: Any) -> Any:
            timers = self.context.timers
            try:
                timers.start_periodic("k", "m", 0)
            except ValueError as exc:
                return str(exc)
            return None

    async with ActorSystem() as system:
        error = await system.spawn(Validating).ask("try")
    assert error is not None and error.startswith("interval must be > 0")


async def test_a_single_timer_with_zero_delay_fires_as_soon_as_possible() -> None:
    fired = anyio.Event()

    class Prompt(Actor):
        def on_start(self) -> None:
            self.context.timers.start_single("now", "tick", 0)
            self.context.timers.start_periodic("soon", "tock", 60, initial_delay=0)

        def receive(self, message: Any) -> None:
            self.seen = getattr(self, "seen", set()) | {message}
            if self.seen == {"tick", "tock"}:
                fired.set()

    with anyio.fail_after(10):
        async with ActorSystem() as system:
            system.spawn(Prompt)
            await fired.wait()


async def test_an_unhashable_key_is_rejected() -> None:
    class Unhashable(Actor):
        def receive(self, message: Any) -> Any:
            try:
                self.context.timers.start_single(["k"], "m", 1)
            except TypeError as exc:
                return exc
            return None

    async with ActorSystem() as system:
        assert isinstance(await system.spawn(Unhashable).ask("try"), TypeError)
        # Refused before anything is made: no timer service, no timer.
        made = system._runtime.timer_service
        assert made is None or made.live == 0
