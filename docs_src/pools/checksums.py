import hashlib
from dataclasses import dataclass

import anyio

from actors import Actor, ActorSystem, Request


@dataclass
class Digest(Request[str]):
    data: bytes


class Hasher(Actor):
    def __init__(self) -> None:
        self.jobs = 0

    def receive(self, message: Digest) -> str:
        self.jobs += 1
        return hashlib.sha256(message.data).hexdigest()[:12]


async def main() -> None:
    blobs = [f"file {i}".encode() * 1000 for i in range(8)]
    async with ActorSystem() as system:
        pool = system.spawn_pool(Hasher, 4, routing="shared_queue", name="hashers")
        digests: dict[int, str] = {}

        async def one(i: int) -> None:
            digests[i] = await pool.ask(Digest(blobs[i]))

        async with anyio.create_task_group() as tg:
            for i in range(len(blobs)):
                tg.start_soon(one, i)
        for i in sorted(digests):
            assert digests[i] == hashlib.sha256(blobs[i]).hexdigest()[:12]
            print(i, digests[i])
        print(f"{len(pool.workers)} workers behind {pool.path}")


if __name__ == "__main__":
    anyio.run(main)
