import sys

import anyio
import msgspec

from actors import Actor, ActorSystem
from actors.node import host
from actors.remote import Remote, RemoteRef


class Greet(msgspec.Struct):
    name: str


class Greeter(Actor):
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    def receive(self, message: Greet) -> str:
        return f"{self.greeting}, {message.name}"


async def main() -> None:
    # Two nodes of one system; "worker" would usually be a process of its
    # own: python -m actors.node --connect URL --name worker --module app.mod
    async with ActorSystem(remote=Remote(system="shop", node="web")) as web:
        worker_remote = Remote(web.remote.url, system="shop", node="worker")
        async with ActorSystem(remote=worker_remote) as worker:
            host(worker, [sys.modules[__name__]])  # it hosts this module's actors

            greeter = await web.remote.spawn("worker", Greeter, "Hello", name="greeter")
            assert isinstance(greeter, RemoteRef)  # on another node
            print(greeter.path, "on", greeter.node.node)
            print(await greeter.ask(Greet("Ada")))


if __name__ == "__main__":
    anyio.run(main)
