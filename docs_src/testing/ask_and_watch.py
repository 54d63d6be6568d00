from dataclasses import dataclass
from typing import Any

import anyio

from actors import Actor, ActorRef, ActorSystem
from actors.testing import TestProbe


@dataclass(frozen=True)
class Lookup:
    key: str


class Cache(Actor):
    """Asks its backend on a miss, and stops when told "stop"."""

    def __init__(self, backend: ActorRef[Lookup]) -> None:
        self.backend = backend
        self.values: dict[str, Any] = {}

    async def receive(self, message: Any) -> Any:
        if message == "stop":
            self.context.stop()
            return None
        if message.key not in self.values:
            self.values[message.key] = await self.backend.ask(message)
        return self.values[message.key]


async def main() -> None:
    async with ActorSystem() as system:
        backend = TestProbe[Lookup](system, name="backend")
        cache = system.spawn(Cache, backend.ref, name="cache")

        async with anyio.create_task_group() as tg:
            answers: list[int] = []

            async def ask(key: str) -> None:
                answers.append(await cache.ask(Lookup(key)))

            tg.start_soon(ask, "x")
            # The cache asked the backend: the probe takes the ask...
            print(await backend.expect_message(Lookup("x")))
            backend.reply(42)  # ...and answers it when the test says.
        print(answers)

        # Served from the cache: the backend is not asked again.
        print(await cache.ask(Lookup("x")))
        await backend.expect_no_message(0)

        # A probe watches like any actor.
        backend.watch(cache)
        cache.tell("stop")
        terminated = await backend.expect_terminated(cache)
        print(terminated.reason)


if __name__ == "__main__":
    anyio.run(main)
