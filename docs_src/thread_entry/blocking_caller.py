from dataclasses import dataclass

import anyio
import anyio.to_thread

from actors import Actor, ActorRef, ActorSystem, Request


@dataclass
class Add:
    n: int


@dataclass
class Get(Request[int]):
    pass


class Counter(Actor):
    def __init__(self) -> None:
        self.total = 0

    def receive(self, message: Add | Get) -> int | None:
        match message:
            case Add(n):
                self.total += n
            case Get():
                return self.total
        return None


def blocking_code(system: ActorSystem, counter: ActorRef[Add | Get]) -> int:
    """Runs in a worker thread, as a web framework's handler or a GUI
    callback would: no await here."""
    for n in range(1, 11):
        system.from_thread.tell(counter, Add(n))
    # The calls of one thread take effect in order: this sees all ten adds.
    total: int = system.from_thread.ask(counter, Get(), timeout=1.0)
    return total


async def main() -> None:
    async with ActorSystem() as system:
        counter = system.spawn(Counter, name="counter")
        total = await anyio.to_thread.run_sync(blocking_code, system, counter)
        print("the thread counted", total)
        try:
            system.from_thread.ask(counter, Get())
        except RuntimeError:
            print("from the event loop's own thread: RuntimeError, not a deadlock")


if __name__ == "__main__":
    anyio.run(main)
