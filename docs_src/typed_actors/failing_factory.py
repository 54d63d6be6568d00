"""A factory that fails at once raises from spawn: nothing to restart."""

from __future__ import annotations

import anyio

from actors import Actor, ActorSystem


class Connection(Actor[str]):
    def __init__(self, url: str) -> None:
        if not url.startswith("tcp://"):
            raise ValueError(f"not a tcp:// url: {url!r}")
        self.url = url

    def receive(self, message: str) -> str:
        return f"{self.url} got {message}"


async def main() -> None:
    async with ActorSystem() as system:  # the default strategy restarts
        try:
            system.spawn(Connection, "udp://example", name="conn")
        except ValueError as exc:
            print("spawn refused:", exc)  # at once, in the spawner
        # Nothing was started, so nothing was restarted; the name is free.
        assert system.failures == 0 and system.restarts == 0
        conn = system.spawn(Connection, "tcp://example", name="conn")
        assert await conn.ask("ping") == "tcp://example got ping"


if __name__ == "__main__":
    anyio.run(main)
