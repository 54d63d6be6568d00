"""An actor ends the program: system.stop() from its handler, and the
async with block exits normally."""

from typing import Any

import anyio

from actors import Actor, ActorSystem


class Session(Actor):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        if message == "quit":
            self.context.system.stop()  # returns at once
        else:
            self.log.append(message)

    def on_stop(self) -> None:
        self.log.append("session closed")


async def main() -> None:
    log: list[str] = []
    async with ActorSystem() as system:
        session = system.spawn(Session, log)
        session.tell("hello")
        session.tell("quit")
        await system.wait_exited()  # returns once every actor has stopped
        log.append("after wait_exited")
    assert log == ["hello", "session closed", "after wait_exited"]

    # A body doing something else is cancelled instead; the exit is normal.
    async with ActorSystem() as system:
        system.spawn(Session, log).tell("quit")
        await anyio.sleep_forever()
    assert not system.running


if __name__ == "__main__":
    anyio.run(main)
