"""Backoff between restarts: the delays follow min(max, min * 2**n) stretched by
the random factor; a stop during the wait wins. Timed on Trio's MockClock (no
wall-clock time passes); the stop-wins guarantee also on every backend."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from actors import (
    ActorSystem,
    Backoff,
    OneForAll,
    OneForOne,
    StopReason,
)

from ._support import TIMEOUT, Journal, Supervisor, Worker, trio_mock_clock

pytestmark = pytest.mark.anyio

mock_clock_only = pytest.mark.parametrize("anyio_backend", [trio_mock_clock()])


class Timed(Worker):
    """A Worker that journals the (mock) time of each start."""

    def on_start(self) -> None:
        self.journal.add(self.who, "started at", anyio.current_time())
        super().on_start()

    def on_restart(self, exc: BaseException | None) -> None:
        self.journal.add(self.who, "started at", anyio.current_time())
        super().on_restart(exc)


def start_times(journal: Journal, who: str) -> list[float]:
    return [e[2] for e in journal.entries if e[:2] == (who, "started at")]


def gaps(times: list[float]) -> list[float]:
    return [round(b - a, 6) for a, b in itertools.pairwise(times)]


def tree(journal: Journal, strategy: Any, **faults: int) -> tuple[Any, ...]:
    spec = (Timed, (journal, "w", dict(faults)), "transient")
    return (Supervisor, journal, "sup", {"w": spec}, strategy)


LOOSE = {"max_restarts": 1000, "within": 1e6}


@mock_clock_only
async def test_backoff_delays_follow_the_configured_curve() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=1.0, max_delay=8.0))  # type: ignore[arg-type]
    async with ActorSystem() as system:
        # Every start fails: each failure is followed by the next delay.
        system.spawn(*tree(journal, strategy, on_start=1, on_restart=7), name="sup")
        await journal.wait_for(
            lambda _: len(start_times(journal, "w")) == 9, timeout=1e4
        )
        assert gaps(start_times(journal, "w")) == [1, 2, 4, 8, 8, 8, 8, 8]


@mock_clock_only
async def test_backoff_with_a_random_factor_stretches_each_delay_within_its_bound() -> (
    None
):
    journal = Journal()
    backoff = Backoff(min_delay=1.0, max_delay=8.0, random_factor=0.5)
    strategy = OneForOne(**LOOSE, backoff=backoff)  # type: ignore[arg-type]
    async with ActorSystem() as system:
        system.spawn(*tree(journal, strategy, on_start=1, on_restart=5), name="sup")
        await journal.wait_for(
            lambda _: len(start_times(journal, "w")) == 7, timeout=1e4
        )
        for gap, base in zip(
            gaps(start_times(journal, "w")), [1, 2, 4, 8, 8, 8], strict=True
        ):
            assert base <= gap <= base * 1.5


def test_backoff_delay_is_min_of_max_and_doubling_times_the_random_stretch() -> None:
    backoff = Backoff(min_delay=0.5, max_delay=10.0, random_factor=0.2)
    assert [backoff.delay(n, rng=lambda: 0.0) for n in range(7)] == [
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        10.0,
        10.0,
    ]
    assert backoff.delay(2, rng=lambda: 1.0) == pytest.approx(2.4)
    assert backoff.delay(10_000, rng=lambda: 0.5) == pytest.approx(11.0)  # no overflow


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_delay": 0.0, "max_delay": 1.0},
        {"min_delay": 2.0, "max_delay": 1.0},
        {"min_delay": 1.0, "max_delay": 2.0, "random_factor": 1.5},
        {"min_delay": 1.0, "max_delay": 2.0, "random_factor": -0.1},
    ],
)
def test_backoff_rejects_values_out_of_range(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Backoff(**kwargs)


@mock_clock_only
async def test_backoff_starts_over_after_a_quiet_period() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=1.0, max_delay=4.0))  # type: ignore[arg-type]
    async with ActorSystem() as system:
        sup = system.spawn(*tree(journal, strategy), name="sup")
        w = (await sup.ask("children"))["w"]
        for _ in range(3):  # back to back: 1, 2, 4
            w.tell("fail")
            await journal.wait_count(
                "w",
                "on_restart",
                count=journal.count("w", "on_restart") + 1,
            )
        await anyio.sleep(100)  # quiet for longer than twice max_delay
        w.tell("fail")
        await journal.wait_count("w", "on_restart", count=4)
        times = start_times(journal, "w")
        assert gaps(times[:4]) == [1, 2, 4]
        assert times[4] - times[3] == pytest.approx(101)  # 100 quiet + 1: reset


@mock_clock_only
async def test_one_for_all_backoff_waits_between_stopping_and_restarting() -> None:
    journal = Journal()
    strategy = OneForAll(**LOOSE, backoff=Backoff(min_delay=3.0, max_delay=3.0))  # type: ignore[arg-type]
    specs = {n: (Timed, (journal, n, {}), "transient") for n in "ab"}
    async with ActorSystem() as system:
        sup = system.spawn(Supervisor, journal, "sup", specs, strategy, name="sup")
        refs = await sup.ask("children")
        t0 = anyio.current_time()
        refs["b"].tell("fail")
        await journal.wait_count("b", "on_restart")
        assert [h for h in journal.hooks() if h[0] != "sup"][-4:] == [
            ("b", "on_stop"),
            ("a", "on_stop"),
            ("a", "on_restart"),
            ("b", "on_restart"),
        ]
        assert start_times(journal, "a")[-1] - t0 == pytest.approx(3.0)
        assert start_times(journal, "b")[-1] - t0 == pytest.approx(3.0)


@mock_clock_only
async def test_messages_told_during_backoff_are_handled_after_it_in_order() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=10.0, max_delay=10.0))  # type: ignore[arg-type]
    async with ActorSystem() as system:
        sup = system.spawn(*tree(journal, strategy), name="sup")
        w = (await sup.ask("children"))["w"]
        w.tell("fail")
        await journal.wait_count("w", "on_stop")
        for i in range(5):
            await anyio.sleep(1)
            w.tell(i)
        assert journal.count("w", "on_restart") == 0  # still backing off
        assert await w.ask("get", timeout=60) == 5
        assert [e[2] for e in journal.entries if e[1] == "receive"] == [
            "fail",
            0,
            1,
            2,
            3,
            4,
            "get",
        ]


@mock_clock_only
async def test_a_stop_during_backoff_wins_on_a_mock_clock() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=10.0, max_delay=10.0))  # type: ignore[arg-type]
    async with ActorSystem() as system:
        sup = system.spawn(*tree(journal, strategy), name="sup")
        w = (await sup.ask("children"))["w"]
        w.tell("fail")
        await journal.wait_count("w", "on_stop")
        t0 = anyio.current_time()
        await anyio.sleep(5)
        w.stop()
        assert await w.join() is StopReason.NORMAL
        assert anyio.current_time() - t0 == pytest.approx(5)  # it did not wait on
        assert journal.count("w", "on_restart") == 0


async def test_a_stop_during_backoff_wins() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=1e5, max_delay=1e5))  # type: ignore[arg-type]
    async with ActorSystem() as system:
        sup = system.spawn(*tree(journal, strategy), name="sup")
        w = (await sup.ask("children"))["w"]
        w.tell("fail")
        # on_stop ran: the old incarnation is over, the backoff (1e5 s) begins.
        await journal.wait_count("w", "on_stop")
        w.stop()
        with anyio.fail_after(TIMEOUT):
            assert await w.join() is StopReason.NORMAL
        assert journal.count("w", "on_restart") == 0
        assert system.restarts == 1  # decided, never carried out


async def test_a_supervisors_stop_during_its_one_for_all_backoff_wins() -> None:
    journal = Journal()
    strategy = OneForAll(**LOOSE, backoff=Backoff(min_delay=1e5, max_delay=1e5))  # type: ignore[arg-type]
    specs = {n: (Worker, (journal, n, {}), "transient") for n in "ab"}
    async with ActorSystem() as system:
        sup = system.spawn(Supervisor, journal, "sup", specs, strategy, name="sup")
        refs = await sup.ask("children")
        refs["a"].tell("fail")
        await journal.wait_count("a", "on_stop")  # both suspended: backoff begins
        sup.stop()
        with anyio.fail_after(TIMEOUT):
            assert await sup.join() is StopReason.NORMAL
            assert await refs["a"].join() is StopReason.PARENT
            assert await refs["b"].join() is StopReason.PARENT
        assert journal.count("a", "on_restart") + journal.count("b", "on_restart") == 0


async def test_the_system_shutting_down_during_a_backoff_does_not_wait_for_it() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=1e5, max_delay=1e5))  # type: ignore[arg-type]
    with anyio.fail_after(TIMEOUT):
        async with ActorSystem() as system:
            sup = system.spawn(*tree(journal, strategy), name="sup")
            w = (await sup.ask("children"))["w"]
            w.tell("fail")
            await journal.wait_count("w", "on_stop")
    assert await w.join() is StopReason.SYSTEM


class TimedParent(Timed):
    """A Timed worker with a child ``kid`` and a single timer (5 s)."""

    def on_start(self) -> None:
        super().on_start()
        self.kid = self.context.spawn(Worker, self.journal, "kid", name="kid")
        self.context.timers.start_single("tick", "tick", 5.0)

    def receive(self, message: Any) -> Any:
        if message == "kid":
            return self.kid
        return super().receive(message)


@mock_clock_only
async def test_the_children_and_timers_end_when_the_backoff_begins_not_after() -> None:
    journal = Journal()
    strategy = OneForOne(**LOOSE, backoff=Backoff(min_delay=30.0, max_delay=30.0))  # type: ignore[arg-type]
    spec = (TimedParent, (journal, "w", {}), "transient")
    async with ActorSystem() as system:
        sup = system.spawn(Supervisor, journal, "sup", {"w": spec}, strategy)
        w = (await sup.ask("children"))["w"]
        kid = await w.ask("kid")
        t0 = anyio.current_time()
        w.tell("fail")
        assert await kid.join() is StopReason.PARENT
        assert anyio.current_time() == t0  # at once, not after the 30 s
        assert await w.ask("get", timeout=60) == 0
        assert anyio.current_time() - t0 == pytest.approx(30)
        await anyio.sleep(10)  # the old incarnation's timer (due at 5 s) is gone
        assert journal.count("w", "receive", "tick") == 0
