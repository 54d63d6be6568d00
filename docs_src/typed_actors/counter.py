"""A typed counter: the ref spawn returns knows the messages it takes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import anyio

from actors import Actor, ActorRef, ActorSystem, Request


@dataclass
class Increment:
    by: int = 1


@dataclass
class Get(Request[int]):  # asked, it is answered with an int
    pass


CounterMsg = Increment | Get


class Counter(Actor[CounterMsg]):
    def __init__(self, start: int, *, step: int = 1) -> None:
        self.value = start
        self.step = step

    def receive(self, message: CounterMsg) -> int | None:
        match message:
            case Increment(by=by):
                self.value += by * self.step
                return None
            case Get():
                return self.value


async def main() -> None:
    async with ActorSystem() as system:
        # spawn checks 10 against Counter's constructor.
        counter: ActorRef[CounterMsg] = system.spawn(Counter, 10, name="counter")
        counter.tell(Increment(5))
        total: int = await counter.ask(Get())  # typed by Get's Request[int]
        assert total == 15

        # Keyword arguments of the factory: a partial (mypy checks them too).
        by_threes = system.spawn(partial(Counter, 0, step=3))
        by_threes.tell(Increment(2))
        assert await by_threes.ask(Get()) == 6


if __name__ == "__main__":
    anyio.run(main)
