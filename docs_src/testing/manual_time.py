from typing import Any

import anyio

from actors import Actor, ActorRef, ActorSystem
from actors.testing import ManualClock, TestProbe


class Session(Actor):
    """Expires after 30 idle seconds: each message restarts the countdown."""

    def __init__(self, owner: ActorRef[str]) -> None:
        self.owner = owner

    def on_start(self) -> None:
        self.context.timers.start_single("idle", "expire", 30.0)

    def receive(self, message: Any) -> None:
        if message == "expire":
            self.owner.tell("expired")
            self.context.stop()
        else:
            self.context.timers.start_single("idle", "expire", 30.0)


async def main() -> None:
    clock = ManualClock()
    async with ActorSystem(clock=clock) as system:
        owner = TestProbe[str](system)
        session = system.spawn(Session, owner.ref)

        await clock.advance(29.0)
        await owner.expect_no_message(0)  # 0: what is queued once all is idle
        session.tell("still here")  # restarts the countdown at 29 s

        await clock.advance(29.0)
        await owner.expect_no_message(0)
        await clock.advance(1.0)  # 30 s after the last message
        print(await owner.expect_message("expired"), "at", clock.now(), "s")


if __name__ == "__main__":
    anyio.run(main)
