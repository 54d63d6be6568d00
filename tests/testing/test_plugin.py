"""The pytest plugin: its fixtures, the no_dead_letters marker, settle, and
the time factor."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem
from actors.testing import (
    DeadLetterLog,
    TestProbe,
    dilated,
    set_time_factor,
    settle,
    time_factor,
)

pytestmark = pytest.mark.anyio


class Mute(Actor):
    """Handles nothing: every message is a dead letter ("unhandled")."""


async def test_dead_letters_records_every_letter_with_its_reason(
    actor_system: ActorSystem, dead_letters: DeadLetterLog
) -> None:
    mute = actor_system.spawn(Mute, name="mute")
    dead_letters.assert_none()
    mute.tell("hello")
    await settle(actor_system)
    assert [(d.message, d.reason) for d in dead_letters] == [("hello", "unhandled")]
    with pytest.raises(AssertionError) as failure:
        dead_letters.assert_none()
    assert str(failure.value) == (
        "1 dead letter(s):\n    'hello' to /user/mute: unhandled"
    )
    assert dead_letters.with_reason("unhandled")[0].recipient == mute
    dead_letters.clear()
    dead_letters.assert_none()


@pytest.mark.no_dead_letters
async def test_a_test_without_dead_letters_passes_under_the_marker(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    probe.ref.tell(1)
    await probe.expect_message(1)


def test_the_marker_fails_a_test_whose_system_counted_a_dead_letter(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest
        from actors import Actor

        class Mute(Actor):
            pass

        @pytest.mark.anyio
        @pytest.mark.no_dead_letters
        async def test_it(actor_system, settle):
            actor_system.spawn(Mute, name="mute").tell("lost")
            await settle()
        """
    )
    result = pytester.runpytest_subprocess("-p", "anyio")
    # Each run of the test (one per backend anyio's plugin picks) passes, and
    # its system's exit errors with the letter.
    outcomes = result.parseoutcomes()
    assert outcomes["errors"] == outcomes["passed"] >= 1
    result.stdout.fnmatch_lines(
        ["*1 dead letter(s):", "*'lost' to /user/mute: unhandled"]
    )


def test_the_time_factor_option_scales_default_timeouts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest
        from actors.testing import time_factor

        @pytest.mark.anyio
        async def test_it(probe):
            assert time_factor() == 0.01
            with pytest.raises(AssertionError, match="none came within 0.03 s"):
                await probe.expect_message()
        """
    )
    result = pytester.runpytest_subprocess("-p", "anyio", "--actors-timefactor=0.01")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] >= 1 and "failed" not in outcomes


def test_the_time_factor_comes_from_the_environment_unless_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACTORS_TEST_TIMEFACTOR", "2.5")
    assert time_factor() == 2.5
    assert dilated(3.0) == 7.5
    set_time_factor(4)
    try:
        assert time_factor() == 4.0
    finally:
        set_time_factor(None)
    monkeypatch.setenv("ACTORS_TEST_TIMEFACTOR", "slow")
    with pytest.raises(ValueError, match="ACTORS_TEST_TIMEFACTOR must be a number"):
        time_factor()
    monkeypatch.setenv("ACTORS_TEST_TIMEFACTOR", "0")
    with pytest.raises(ValueError, match="must be > 0"):
        time_factor()
    with pytest.raises(TypeError, match="factor must be a number"):
        set_time_factor("2")  # type: ignore[arg-type]


class Relay(Actor):
    """Passes each number on to ``next`` (minus one) until it reaches 0."""

    def __init__(self, log: list[int], next: ActorRef[int] | None = None) -> None:
        self.log = log
        self.next = next

    def receive(self, message: int) -> None:
        self.log.append(message)
        if self.next is not None and message > 0:
            self.next.tell(message - 1)


async def test_settle_returns_once_every_actor_is_idle(
    actor_system: ActorSystem, settle: Any
) -> None:
    log: list[int] = []
    last = actor_system.spawn(Relay, log)
    first = actor_system.spawn(Relay, log, actor_system.spawn(Relay, log, last))
    for _ in range(20):
        first.tell(5)
    await settle()
    assert len(log) == 60


class Stuck(Actor):
    def __init__(self, release: anyio.Event) -> None:
        self.release = release

    async def receive(self, message: Any) -> None:
        await self.release.wait()


async def test_settle_names_the_actors_still_busy(actor_system: ActorSystem) -> None:
    release = anyio.Event()
    stuck = actor_system.spawn(Stuck, release, name="stuck")
    stuck.tell(1)
    stuck.tell(2)
    with pytest.raises(AssertionError) as failure:
        await settle(actor_system, timeout=0.02)
    # (its batch holds message 2: taken from the mailbox, not handled yet)
    assert "busy: /user/stuck (in a handler, 0 queued)" in str(failure.value)
    release.set()
    await settle(actor_system)


def test_all_backends_lists_every_installed_event_loop() -> None:
    from actors.testing.plugin import all_backends

    params = all_backends()
    assert [p.id for p in params] == ["asyncio", "uvloop", "trio"]
    assert params[0].values == (("asyncio", {}),)
