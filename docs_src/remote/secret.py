import secrets

import anyio

from actors import Actor, ActorSystem
from actors.remote import Remote


class Echo(Actor):
    def receive(self, message: str) -> str:
        return message


async def main() -> None:
    # One key for the whole cluster (in production: read from a file only the
    # nodes' user can read). Every frame is sealed with an HMAC-SHA256 of it.
    key = secrets.token_bytes(32)
    async with ActorSystem(remote=Remote(system="shop", node="web", secret=key)) as web:
        web.spawn(Echo, name="echo")
        url = web.remote.url
        # Rotation's first step: accept a new key too, still seal with the old.
        new_key = secrets.token_bytes(32)
        worker_remote = Remote(url, system="shop", node="worker", secret=[key, new_key])
        async with ActorSystem(remote=worker_remote) as worker:
            echo = await worker.remote.lookup("web", "/user/echo")
            print(await echo.ask("sealed and checked"))
            print(web.remote.bad_input)  # nothing dropped


if __name__ == "__main__":
    anyio.run(main)
