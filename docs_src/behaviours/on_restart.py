"""``on_restart(exc, message)``: the new instance learns which message made
the old one fail."""

from typing import Any

import anyio

from actors import Actor, ActorSystem


class Parser(Actor):
    def __init__(self, poison: list[Any]) -> None:
        self.poison = poison

    def receive(self, message: Any) -> Any:
        return int(message)  # a ValueError fails the actor: it is restarted

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        self.poison.append((message, type(exc).__name__))


async def main() -> None:
    poison: list[Any] = []
    async with ActorSystem() as system:
        parser = system.spawn(Parser, poison)
        parser.tell("twelve")
        assert await parser.ask("12") == 12
    assert poison == [("twelve", "ValueError")]


if __name__ == "__main__":
    anyio.run(main)
