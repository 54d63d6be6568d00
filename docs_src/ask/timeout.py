import anyio

from actors import Actor, ActorSystem, AskTimeout


class Slow(Actor):
    """Replies once `go` is set."""

    def __init__(self, go: anyio.Event) -> None:
        self.go = go

    async def receive(self, message: str) -> str:
        await self.go.wait()
        return f"{message} (late)"


async def main() -> None:
    go = anyio.Event()
    async with ActorSystem() as system:
        slow = system.spawn(Slow, go, name="slow")
        try:
            await slow.ask("first", timeout=0.05)  # seconds
        except AskTimeout:
            print("no reply within 0.05 s")
        go.set()
        # Messages are handled in order: once this reply is here, the first
        # one was made too, and nobody took it.
        print(await slow.ask("second", timeout=1.0))
        letter = system.dead_letters.recent[-1]
        print(f"dead letter: {letter.message!r} ({letter.reason})")


if __name__ == "__main__":
    anyio.run(main)
