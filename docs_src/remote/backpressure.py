import anyio

from actors import Actor, ActorSystem, MailboxFull
from actors.remote import Remote


class Slow(Actor):
    """Holds its first message until the gate opens."""

    def __init__(self, gate: anyio.Event) -> None:
        self.gate = gate
        self.taken: list[int] = []

    async def receive(self, message: int | str) -> list[int] | None:
        if message == "taken":
            return self.taken
        await self.gate.wait()
        assert isinstance(message, int)
        self.taken.append(message)
        return None


async def main() -> None:
    gate = anyio.Event()
    async with ActorSystem(remote=Remote(system="shop", node="b", share=8)) as b:
        slow = b.spawn(Slow, gate, name="slow")
        url = b.remote.url
        async with ActorSystem(
            remote=Remote(url, system="shop", node="a", share=8)
        ) as a:
            ref = await a.remote.lookup("b", "/user/slow")
            for n in range(8):  # the share: 8 tells outstanding to /user/slow
                ref.tell(n)
            try:
                ref.tell(8)
            except MailboxFull:
                print("8 tells outstanding; the 9th: MailboxFull")
            async with anyio.create_task_group() as tg:
                tg.start_soon(ref.send, 8)  # waits for a credit
                peer = a.remote.statistics().peers
                while not peer or not peer[b.remote.node].credit_waiting:
                    await anyio.lowlevel.checkpoint()
                    peer = a.remote.statistics().peers
                print("a send waits for a credit")
                gate.set()  # the actor takes them: credits come back
            while len(taken := await slow.ask("taken")) < 9:
                await anyio.lowlevel.checkpoint()
            print(f"taken in order: {taken}")


if __name__ == "__main__":
    anyio.run(main)
