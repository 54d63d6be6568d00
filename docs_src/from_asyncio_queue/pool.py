# After: a pool of actors; runs on asyncio, uvloop and Trio.
import hashlib

import anyio

from actors import Actor, ActorSystem


class Hasher(Actor):
    def __init__(self, results: list[str], done: anyio.Event, jobs: int) -> None:
        self.results, self.done, self.jobs = results, done, jobs

    def receive(self, data: bytes) -> None:
        self.results.append(hashlib.sha256(data).hexdigest()[:8])
        if len(self.results) == self.jobs:
            self.done.set()


async def main() -> None:
    results: list[str] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        pool = system.spawn_pool(
            Hasher, 4, results, done, 100, routing="shared_queue", capacity=100
        )
        for i in range(100):
            await pool.send(f"job {i}".encode())  # waits while the queue is full
        await done.wait()
    # Leaving the block stopped the workers: no sentinels, no stray tasks.
    print(f"{len(results)} jobs done")


if __name__ == "__main__":
    anyio.run(main)
