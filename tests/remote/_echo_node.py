"""A node in a process of its own, for the tests across processes.

``python _echo_node.py URL SYSTEM NODE BACKEND`` enters an actor system that
joins the NATS server at ``URL`` as node ``NODE`` of ``SYSTEM``, hosts an echo
actor at ``/user/echo``, prints ``ready <incarnation>`` and serves until its
standard input is closed (then it leaves its system and prints ``left``).
``BACKEND`` is ``asyncio``, ``uvloop`` or ``trio``.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from actors import Actor, ActorSystem
from actors.remote import Remote


class Echo(Actor):
    """Replies with what it gets."""

    def receive(self, message: Any) -> Any:
        return message


async def serve(url: str, system: str, node: str) -> None:
    async with ActorSystem(remote=Remote(url, system=system, node=node)) as actors:
        actors.spawn(Echo, name="echo")
        print("ready", actors.remote.node.incarnation, flush=True)
        # Serve until the parent closes our stdin (or kills us).
        await anyio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
    print("left", flush=True)


def main(argv: list[str]) -> None:
    url, system, node, backend = argv
    options: dict[str, Any] = {}
    if backend == "uvloop":
        import uvloop

        backend, options = "asyncio", {"loop_factory": uvloop.new_event_loop}
    anyio.run(serve, url, system, node, backend=backend, backend_options=options)


if __name__ == "__main__":
    main(sys.argv[1:])
