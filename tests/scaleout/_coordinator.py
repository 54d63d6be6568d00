"""A coordinator process for the coordinator-loss test:
``python -m tests.scaleout._coordinator URL SYSTEM NODE...`` starts a pool
over those nodes, prints ``ready`` once every node has a member, and waits
to be killed."""

from __future__ import annotations

import sys

import anyio

from actors import ActorSystem
from actors.remote import Remote

from ._workers import Echo


async def main(url: str, system: str, *nodes: str) -> None:
    async with ActorSystem(remote=Remote(url, system=system, node="coord")) as actors:
        pool = actors.remote.spawn_pool(Echo, nodes=list(nodes), workers=2)
        await pool.wait_ready(timeout=30)
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
