"""A session that ends itself after a while without messages."""

from typing import Any

import anyio

from actors import Actor, ActorSystem, ReceiveTimeout, StopReason


class Session(Actor):
    def __init__(self, idle: float) -> None:
        self.requests = 0
        # The context is there from __init__ on.
        self.context.set_receive_timeout(idle)

    def receive(self, message: Any) -> Any:
        if isinstance(message, ReceiveTimeout):
            self.context.stop()  # nobody came for `idle` seconds
            return None
        self.requests += 1  # every message resets the timeout
        return self.requests


async def main() -> None:
    async with ActorSystem() as system:
        session = system.spawn(Session, 0.05)
        assert await session.ask("hello") == 1
        assert await session.ask("again") == 2
        with anyio.fail_after(5):
            assert await session.join() is StopReason.NORMAL


if __name__ == "__main__":
    anyio.run(main)
