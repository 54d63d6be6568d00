"""The default guardian counts its restart intensity per top-level actor (as
Akka classic's guardian), so unrelated top-level actors that fail now and
then never add up to a shutdown (issue 22: eight of them failing once each
shut the system down, the guardian's 3 restarts in 5 s being shared). A
strategy given to the guardian keeps OTP's shared intensity."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, OneForOne, StopReason

pytestmark = pytest.mark.anyio


class Failure(Exception):
    pass


class Flaky(Actor):
    """Fails on "fail" (and counts its starts); answers anything else."""

    def __init__(self, starts: list[str]) -> None:
        self.starts = starts

    def on_start(self) -> None:
        self.starts.append(self.context.name)

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise Failure(self.context.name)
        return message


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    import logging

    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


async def fail(ref: Any) -> None:
    with pytest.raises(Failure):
        await ref.ask("fail")


async def test_unrelated_top_level_actors_failing_do_not_add_up_to_a_shutdown() -> None:
    starts: list[str] = []
    async with ActorSystem() as system:
        refs = [system.spawn(Flaky, starts, name=f"a{n}") for n in range(8)]
        for _ in range(3):  # each within its own 3 restarts in 5 s
            for ref in refs:
                await fail(ref)
        for ref in refs:
            assert await ref.ask("still here") == "still here"
        assert system.running and system.restarts == 24
        assert system.escalations == 0
    assert sorted(starts) == sorted(f"a{n}" for n in range(8) for _ in range(4))


async def test_one_top_level_actor_over_its_own_intensity_shuts_the_system_down() -> (
    None
):
    starts: list[str] = []
    with pytest.raises(Failure) as info:
        async with ActorSystem() as system:
            bystander = system.spawn(Flaky, starts, name="bystander")
            flaky = system.spawn(Flaky, starts, name="flaky")
            await fail(bystander)
            for _ in range(3):
                await fail(flaky)  # restarted: 3 restarts within 5 s
            with pytest.raises(Failure):
                await flaky.ask("fail")  # the fourth: over its intensity
            await system.wait_exited()
    assert str(info.value) == "flaky"
    assert await bystander.join() is StopReason.PARENT


async def test_a_strategy_given_to_the_guardian_keeps_the_shared_intensity() -> None:
    # OTP: a supervisor's intensity is its restarts, whichever child failed.
    starts: list[str] = []
    strategy = OneForOne(max_restarts=3, within=5.0)  # the default's values
    with pytest.raises(Failure) as info:
        async with ActorSystem(strategy=strategy) as system:
            refs = [system.spawn(Flaky, starts, name=f"a{n}") for n in range(4)]
            for ref in refs:
                await fail(ref)  # the fourth restart of the guardian's: over
            await system.wait_exited()
    assert str(info.value) == "a3"
    assert system.escalations == 1


async def test_a_top_level_actor_keeps_its_restart_history_across_restarts() -> None:
    # Per child, not per incarnation: a crash loop is still caught.
    starts: list[str] = []
    with anyio.fail_after(10), pytest.raises(Failure):
        async with ActorSystem() as system:
            flaky = system.spawn(Flaky, starts, name="flaky")
            while True:
                await fail(flaky)
    assert starts == ["flaky"] * 4
