"""A parent process for the orphan test: ``python _parent.py URL SYSTEM``
starts a pool in 2 node processes, prints their pids, and waits to be
killed."""

from __future__ import annotations

import sys

import anyio

from actors import ActorSystem
from actors.remote import Remote

from ._workers import Echo


async def main(url: str, system: str) -> None:
    async with ActorSystem(remote=Remote(url, system=system, node="parent")) as actors:
        pool = actors.remote.spawn_pool(Echo, processes=2)
        await pool.wait_ready(timeout=30)
        print(*pool.pids, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
