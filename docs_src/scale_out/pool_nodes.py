import sys
from collections import Counter

import anyio

from actors import Actor, ActorSystem
from actors.node import host
from actors.remote import Remote


class Square(Actor):
    """A worker; on the node named "slow" each job takes 5x longer."""

    async def receive(self, n: int) -> tuple[int, str]:
        node = self.context.system.remote.node.node
        await anyio.sleep(0.005 if node == "slow" else 0.001)
        return n * n, node


async def main() -> None:
    async with ActorSystem(remote=Remote(system="calc", node="main")) as main_:
        url = main_.remote.url
        async with (
            ActorSystem(remote=Remote(url, system="calc", node="fast")) as fast,
            ActorSystem(remote=Remote(url, system="calc", node="slow")) as slow,
        ):
            for node in (fast, slow):
                host(node, [sys.modules[__name__]])

            pool = main_.remote.spawn_pool(
                Square, nodes=["fast", "slow"], workers=1, prefetch=1
            )
            await pool.wait_ready()
            results: list[tuple[int, str]] = []

            async def ask(n: int) -> None:
                results.append(await pool.ask(n))

            async with anyio.create_task_group() as tg:
                for n in range(60):
                    tg.start_soon(ask, n)
            print("sum of squares:", sum(square for square, _ in results))
            by_node = Counter(node for _, node in results)
            # Idle workers pull: the fast node takes most of the jobs (about
            # five times as many, less the messaging's share of each job).
            print("the fast node took more jobs:", by_node["fast"] > by_node["slow"])


if __name__ == "__main__":
    anyio.run(main)
