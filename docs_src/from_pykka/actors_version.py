# anyio-actors: actors are tasks on one event loop; ask() is awaited.
from dataclasses import dataclass

import anyio

from actors import Actor, ActorSystem, Request


@dataclass
class Add:
    n: int


@dataclass
class Get(Request[int]):
    pass


class Counter(Actor):
    def __init__(self, start: int = 0) -> None:
        self.total = start

    def receive(self, message: Add | Get) -> int | None:
        match message:
            case Add(n):
                self.total += n
            case Get():
                return self.total
        return None


async def main() -> None:
    async with ActorSystem() as system:  # stops every actor on exit
        counter = system.spawn(Counter, 10)
        counter.tell(Add(5))
        print("actors counted", await counter.ask(Get(), timeout=1.0))


if __name__ == "__main__":
    anyio.run(main)
