# backends: asyncio
# The tests below use the plugin's fixtures; main() runs pytest on this file
# (as `pytest docs_src/testing/pytest_fixtures.py` would).
import sys
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem
from actors.testing import DeadLetterLog, ManualClock, TestProbe


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every test runs on asyncio and on Trio (anyio's plugin reads this)."""
    return str(request.param)


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


class Mute(Actor):
    """Handles nothing: every message it gets is unhandled."""


class Ticker(Actor):
    def __init__(self, probe: TestProbe[str]) -> None:
        self.probe = probe

    def on_start(self) -> None:
        self.context.timers.start_periodic("tick", "tick", 1.0)

    def receive(self, message: str) -> None:
        self.probe.ref.tell(message)


@pytest.mark.anyio
async def test_echo_answers(actor_system: ActorSystem) -> None:
    echo = actor_system.spawn(Echo)
    assert await echo.ask("hi") == "hi"


@pytest.mark.anyio
@pytest.mark.no_dead_letters  # fails the test if any message is lost
async def test_ticks_once_a_second(
    actor_system: ActorSystem, manual_time: ManualClock, probe: TestProbe[str]
) -> None:
    # With manual_time, actor_system runs on that clock.
    actor_system.spawn(Ticker, probe)
    await manual_time.advance(3.0)
    assert await probe.receive_messages(3) == ["tick"] * 3
    await probe.expect_no_message(0)


@pytest.mark.anyio
async def test_unhandled_messages_are_dead_letters(
    actor_system: ActorSystem, dead_letters: DeadLetterLog, settle: Any
) -> None:
    actor_system.spawn(Mute, name="mute").tell("hello?")
    await settle()  # every actor idle
    assert [(d.message, d.reason) for d in dead_letters] == [("hello?", "unhandled")]


async def main() -> None:
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-o", "addopts="]
    command += ["-p", "no:cacheprovider"]  # leave no cache beside the file
    result = await anyio.run_process(command, check=False)
    output = result.stdout.decode()
    assert result.returncode == 0, output
    assert "6 passed" in output, output


if __name__ == "__main__":
    anyio.run(main)
