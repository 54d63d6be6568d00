"""Counters addressed by key: started by their first message, passivated
when idle, started again by the next one.

The system runs on a manual clock so the example can let a minute pass at
once; a real program lets time pass on its own.
"""

from typing import Any

import anyio

from actors import Actor, ActorSystem
from actors.sharding import Entity, Sharding
from actors.testing import ManualClock


class Counter(Actor[Any]):
    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0

    def on_start(self) -> None:
        print(f"counter {self.key} starts")

    def on_stop(self) -> None:
        print(f"counter {self.key} stops at {self.count}")

    def receive(self, message: Any) -> int:
        if message == "add":
            self.count += 1
        return self.count


COUNTER = Entity("counter", Counter, passivate_after=30.0)


async def main() -> None:
    clock = ManualClock()
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [COUNTER]) as sharding,
    ):
        apples = sharding.entity_ref(COUNTER, "apples")  # nothing runs yet
        apples.tell("add")
        apples.tell("add")
        print("apples:", await apples.ask("get"))
        await clock.advance(60)  # idle for a minute: passivated
        print("passivations:", sharding.statistics().passivations)
        print("members:", [m.status for m in system.cluster.members])
        print("apples:", await apples.ask("get"))  # a fresh counter
    print("left")


if __name__ == "__main__":
    anyio.run(main)
