import anyio

from actors import Actor, ActorSystem


class Greeter(Actor):
    def __init__(self, expected: int, done: anyio.Event) -> None:
        self.expected = expected
        self.done = done
        self.greeted = 0

    def on_start(self) -> None:
        print(f"{self.context.path} started")

    def receive(self, message: str) -> None:
        print(f"Hello, {message}!")
        self.greeted += 1
        if self.greeted == self.expected:
            self.done.set()

    def on_stop(self) -> None:
        print(f"{self.context.path} stopped after {self.greeted} greetings")


async def main() -> None:
    names = ["Ada", "Grace", "Barbara"]
    done = anyio.Event()
    async with ActorSystem() as system:
        greeter = system.spawn(Greeter, len(names), done, name="greeter")
        for name in names:
            greeter.tell(name)  # queued in order; tell never waits
        await done.wait()  # every greeting handled
    # Leaving the block stopped the greeter and ran its on_stop.


if __name__ == "__main__":
    anyio.run(main)
