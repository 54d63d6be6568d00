import hashlib
import os

import anyio

from actors import Actor, ActorSystem
from actors.remote import Remote


class Hasher(Actor):
    """CPU-bound work, in a node process of its own."""

    def receive(self, seed: int) -> tuple[str, int]:
        digest = str(seed).encode()
        for _ in range(2_000):
            digest = hashlib.sha256(digest).digest()
        return digest.hex()[:8], os.getpid()


async def main() -> None:
    async with ActorSystem(remote=Remote(system="hash")) as system:
        # Two node processes on this machine, stopped with the pool (or the
        # system, or when this process dies in any way).
        pool = system.remote.spawn_pool(Hasher, processes=2, workers=1)
        await pool.wait_ready(timeout=30)
        results = {}

        async def one(seed: int) -> None:
            results[seed] = await pool.ask(seed, timeout=30)

        async with anyio.create_task_group() as tg:
            for seed in range(40):
                tg.start_soon(one, seed)
        print("first digest:", results[0][0])
        pids = {pid for _, pid in results.values()}
        assert os.getpid() not in pids
        print("jobs:", len(results), "processes used:", len(pids))
        pool.stop()
        await pool.join()


if __name__ == "__main__":
    anyio.run(main)
