from dataclasses import dataclass

import anyio

from actors import Actor, ActorRef, ActorSystem, Directive, OneForOne, Request


@dataclass
class Add:
    n: int


@dataclass
class Fail:
    error: Exception


@dataclass
class Total(Request[int]):
    pass


@dataclass
class Child(Request[ActorRef[Add | Fail | Total]]):
    pass


class Counter(Actor):
    def __init__(self) -> None:
        self.total = 0

    def on_start(self) -> None:  # also runs after each restart
        print(f"{self.context.path} starts at 0")

    def receive(self, message: Add | Fail | Total) -> int | None:
        match message:
            case Add(n):
                self.total += n
            case Fail(error):
                raise error
            case Total():
                return self.total
        return None


class Supervisor(Actor):
    supervisor_strategy = OneForOne(
        max_restarts=3,
        within=5.0,  # seconds
        decider={ValueError: Directive.RESUME, Exception: Directive.RESTART},
    )

    def on_start(self) -> None:
        self.counter = self.context.spawn(Counter, name="counter")

    def receive(self, message: Child) -> ActorRef[Add | Fail | Total]:
        return self.counter


async def main() -> None:
    async with ActorSystem() as system:
        supervisor = system.spawn(Supervisor, name="supervisor")
        counter = await supervisor.ask(Child())
        counter.tell(Add(3))
        counter.tell(Fail(ValueError("bad input")))  # resumed: state kept
        print("after ValueError:", await counter.ask(Total()))
        counter.tell(Fail(RuntimeError("corrupt")))  # restarted: fresh state
        print("after RuntimeError:", await counter.ask(Total()))
        print(f"failures={system.failures} restarts={system.restarts}")


if __name__ == "__main__":
    anyio.run(main)
