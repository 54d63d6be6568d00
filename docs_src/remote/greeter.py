import anyio
import msgspec

from actors import Actor, ActorSystem
from actors.remote import Remote, RemoteRef


class Greet(msgspec.Struct):
    name: str


class Greeter(Actor):
    def receive(self, message: Greet) -> str:
        return f"Hello, {message.name}"


async def main() -> None:
    # No URL: a private nats-server is started for the system's lifetime.
    web_remote = Remote(system="shop", node="web", types=[Greet])
    async with ActorSystem(remote=web_remote) as web:
        web.spawn(Greeter, name="greeter")
        url = web.remote.url  # other processes join here
        worker_remote = Remote(url, system="shop", node="worker", types=[Greet])
        async with ActorSystem(remote=worker_remote) as worker:
            greeter = await worker.remote.lookup("web", "/user/greeter")
            print(await greeter.ask(Greet("Ada")))
            assert isinstance(greeter, RemoteRef)  # another node's actor
            print(f"{greeter.path} lives on node {greeter.node.node}")


if __name__ == "__main__":
    anyio.run(main)
