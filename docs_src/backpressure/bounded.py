import anyio

from actors import Actor, ActorSystem, MailboxFull


class Sink(Actor):
    def __init__(self, expected: int, done: anyio.Event) -> None:
        self.expected = expected
        self.done = done
        self.handled = 0

    async def receive(self, message: int) -> None:
        await anyio.sleep(0)  # stands for real work
        self.handled += 1
        if self.handled == self.expected:
            self.done.set()


async def main() -> None:
    done = anyio.Event()
    async with ActorSystem() as system:
        sink = system.spawn(Sink, 20, done, name="sink", capacity=4)
        for i in range(4):
            sink.tell(i)  # fills the mailbox: the sink has not run yet
        try:
            sink.tell(4)
        except MailboxFull:
            print("a tell to a full mailbox raises MailboxFull")
        for i in range(4, 20):
            await sink.send(i)  # waits for room: backpressure
        print("send put the other 16 in, waiting for room when it had to")
        await done.wait()
        print("the sink handled all 20")


if __name__ == "__main__":
    anyio.run(main)
