"""A turnstile as a state machine: ``become`` switches the handler."""

from typing import Any

import anyio

from actors import Actor, ActorSystem


class Turnstile(Actor):
    def __init__(self) -> None:
        self.passed = 0

    def receive(self, message: Any) -> Any:  # the initial behaviour: locked
        if message == "coin":
            self.become(self.unlocked)
            return "unlocked"
        return "locked"

    def unlocked(self, message: Any) -> Any:
        if message == "push":
            self.passed += 1
            self.unbecome()  # back to receive
            return "locked"
        return "unlocked"


async def main() -> None:
    async with ActorSystem() as system:
        turnstile = system.spawn(Turnstile)
        assert await turnstile.ask("push") == "locked"
        assert await turnstile.ask("coin") == "unlocked"
        assert await turnstile.ask("coin") == "unlocked"
        assert await turnstile.ask("push") == "locked"
        assert await turnstile.ask("push") == "locked"


if __name__ == "__main__":
    anyio.run(main)
