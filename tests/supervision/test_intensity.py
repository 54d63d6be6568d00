"""Restart intensity: at most ``max_restarts`` within ``within`` seconds, over a
sliding window; one more and the supervisor gives up and escalates."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem, Directive, OneForOne, StopReason
from actors._strategies import RestartIntensity

from ._support import Boom, Journal, Supervisor, Worker, trio_mock_clock, worker

pytestmark = pytest.mark.anyio


def spawned(journal: Journal, who: str, child: str) -> Any:
    """The ref of ``child`` that ``who`` spawned last."""
    return [e[3] for e in journal.entries if e[:3] == (who, "spawned", child)][-1]


def starts(journal: Journal, who: str) -> int:
    return journal.count(who, "on_start") + journal.count(who, "on_restart")


async def test_a_restart_storm_with_max_restarts_3_ends_after_exactly_4_starts() -> (
    None
):
    journal = Journal()
    storm = {"w": worker(journal, "w", on_start=1, on_restart=1000)}
    strategy = OneForOne(max_restarts=3, within=60.0)
    sup_spec = (Supervisor, (journal, "sup", storm, strategy), "transient")
    async with ActorSystem() as system:
        # top stops what fails under it, and watches sup: "the parent is told".
        system.spawn(
            Supervisor,
            journal,
            "top",
            {"sup": sup_spec},
            OneForOne(decider=lambda exc: Directive.STOP),
            True,
            name="top",
        )
        await journal.wait_count("top", "terminated")
        sup = spawned(journal, "top", "sup")
        w = spawned(journal, "sup", "w")
        (_, name, reason) = journal.of("top")[-1]
        assert name == "sup" and isinstance(reason, Boom)
        assert await sup.join() is reason  # sup failed with w's exception
        assert await w.join() is reason  # w ended with its last failure
        assert starts(journal, "w") == 4
        assert journal.count("sup", "on_start") == 1
        assert (system.failures, system.restarts, system.escalations) == (5, 3, 1)


def test_the_window_slides_so_restarts_spaced_wider_than_within_never_add_up() -> None:
    strategy = OneForOne(max_restarts=3, within=10.0)
    intensity = RestartIntensity()
    for n in range(1000):
        assert intensity.allow(strategy, n * 10.5)
        assert intensity.recent() == 1


def test_the_window_counts_only_the_restarts_inside_it() -> None:
    strategy = OneForOne(max_restarts=3, within=10.0)
    intensity = RestartIntensity()
    assert intensity.allow(strategy, 0.0)
    assert intensity.allow(strategy, 4.0)
    assert intensity.allow(strategy, 9.0)
    assert not intensity.allow(strategy, 9.5)  # a 4th within 10 s
    assert intensity.allow(strategy, 10.0)  # the one at 0.0 left the window
    assert not intensity.allow(strategy, 13.9)  # 4.0, 9.0 and 10.0 are inside
    assert intensity.allow(strategy, 14.0)
    assert intensity.recent() == 3


def test_max_restarts_0_allows_no_restart_at_all() -> None:
    intensity = RestartIntensity()
    assert not intensity.allow(OneForOne(max_restarts=0), 0.0)
    assert not intensity.allow(OneForOne(max_restarts=0), 1e9)


class FakeClock:
    """Stands in for ``anyio.current_time`` where the supervisor reads the time:
    the test moves it explicitly, so the window is driven deterministically."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_failures_spaced_wider_than_within_keep_the_child_alive_indefinitely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(anyio, "current_time", clock)
    journal = Journal()
    async with ActorSystem(strategy=OneForOne(max_restarts=3, within=10.0)) as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            OneForOne(max_restarts=3, within=10.0),
            name="sup",
        )
        w = (await sup.ask("children"))["w"]
        for n in range(1, 101):
            clock.now += 10.001
            w.tell("fail")
            await journal.wait_count("w", "on_restart", count=n)
        assert await w.ask("get") == 0 and w.is_alive and sup.is_alive
        assert (system.restarts, system.escalations) == (100, 0)


async def test_the_fourth_failure_within_the_window_escalates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(anyio, "current_time", clock)
    journal = Journal()
    async with ActorSystem() as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            OneForOne(max_restarts=3, within=10.0),
            name="sup",
        )
        w = (await sup.ask("children"))["w"]
        for n in range(1, 4):
            clock.now += 3.0  # 3 s apart: all inside one 10 s window
            w.tell("fail")
            await journal.wait_count("w", "on_restart", count=n)
        clock.now += 3.0
        w.tell("fail")
        assert isinstance(await w.join(), Boom)
        await journal.wait_count(
            "sup", "on_start", count=2
        )  # the guardian restarted sup
        assert (system.restarts, system.escalations) == (4, 1)


@pytest.mark.parametrize("anyio_backend", [trio_mock_clock()])
async def test_on_a_mock_clock_failures_spaced_wider_than_within_never_add_up() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            OneForOne(max_restarts=3, within=5.0),
            name="sup",
        )
        w = (await sup.ask("children"))["w"]
        start = anyio.current_time()
        for n in range(1, 201):
            await anyio.sleep(5.5)
            w.tell("fail")
            await journal.wait_count("w", "on_restart", count=n)
        assert anyio.current_time() - start >= 1000  # simulated, not waited
        assert w.is_alive and (system.restarts, system.escalations) == (200, 0)


@pytest.mark.parametrize("anyio_backend", [trio_mock_clock()])
async def test_on_a_mock_clock_failures_closer_than_within_add_up() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            OneForOne(max_restarts=3, within=5.0),
            name="sup",
        )
        w = (await sup.ask("children"))["w"]
        for n in range(1, 4):
            await anyio.sleep(1.6)  # 3 restarts in 4.8 s
            w.tell("fail")
            await journal.wait_count("w", "on_restart", count=n)
        await anyio.sleep(0.1)
        w.tell("fail")
        assert isinstance(await w.join(), Boom)
        assert system.escalations == 1


async def test_a_normal_stop_is_not_a_restart_and_does_not_count() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        w = system.spawn(Worker, journal, "w", name="w")
        w.tell("stop")
        assert await w.join() is StopReason.NORMAL
        assert system.restarts == 0


# Erlang: a restarted supervisor is a new process with no restart history.
async def test_a_restarted_supervisor_starts_with_a_fresh_restart_history() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            OneForOne(max_restarts=1, within=1e6),
            name="sup",
        )
        (await sup.ask("children"))["w"].tell("fail")  # restart 1 of 1
        await journal.wait_count("w", "on_restart")
        (await sup.ask("children"))["w"].tell("fail")  # too many: escalates
        await journal.wait_count("sup", "on_start", count=2)
        w = (await sup.ask("children"))["w"]
        w.tell("fail")  # the new sup's first: a restart, not an escalation
        await journal.wait_count("w", "on_restart", count=2)
        assert await w.ask("get") == 0
        assert (system.restarts, system.escalations) == (3, 1)
