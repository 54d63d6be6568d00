import anyio

from actors import Actor, ActorSystem, DeadLetter


class Worker(Actor):
    def __init__(self, started: anyio.Event, go: anyio.Event) -> None:
        self.started = started
        self.go = go

    async def receive(self, message: str) -> None:
        self.started.set()
        await self.go.wait()
        print(f"handled {message}")


async def main() -> None:
    started, go = anyio.Event(), anyio.Event()
    letters: list[DeadLetter] = []
    async with ActorSystem() as system:
        with system.dead_letters.subscribe(letters.append):
            worker = system.spawn(Worker, started, go, name="worker")
            for job in ("a", "b", "c"):
                worker.tell(job)
            await started.wait()  # "a" is being handled; "b" and "c" queued
            worker.stop()  # stops after the current message
            go.set()
            await worker.join()
            worker.tell("d")  # to a stopped actor: a dead letter too
    for letter in letters:
        print(f"dead letter: {letter.message!r} to {letter.recipient.path}"
              f" ({letter.reason})")
    print("counted:", system.dead_letters.count)


if __name__ == "__main__":
    anyio.run(main)
