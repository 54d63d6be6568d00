from dataclasses import dataclass

import anyio

from actors import Actor, ActorSystem, Request


@dataclass
class Add:
    n: int


@dataclass
class Get(Request[int]):  # an ask whose reply is an int
    pass


class Counter(Actor):
    def __init__(self, start: int = 0) -> None:
        self.total = start

    def receive(self, message: Add | Get) -> int | None:  # may be `async def`
        match message:
            case Add(n):
                self.total += n
            case Get():
                return self.total  # the reply to an ask
        return None


async def main() -> None:
    async with ActorSystem() as system:
        counter = system.spawn(Counter, 10, name="counter")
        counter.tell(Add(5))  # never waits
        counter.tell(Add(27))
        total = await counter.ask(Get(), timeout=1.0)  # waits for the reply
        print(f"{counter.path} counted {total}")
    print("the system stopped every actor on leaving `async with`")


if __name__ == "__main__":
    anyio.run(main)  # or anyio.run(main, backend="trio")
