# The kit's fixtures from a base install (no extras): asyncio only.
import pytest

from actors import Actor, ActorRef, ActorSystem
from actors.testing import TestProbe


class Echo(Actor):
    def receive(self, message: object) -> object:
        return message


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_actor_system_and_probe(
    actor_system: ActorSystem, probe: TestProbe[object]
) -> None:
    echo: ActorRef[object] = actor_system.spawn(Echo)
    assert await echo.ask("hi", timeout=5) == "hi"
    probe.watch(echo)
    echo.stop()
    await probe.expect_terminated(echo)
