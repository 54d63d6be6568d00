"""The receiving node of the slow-actor flood (``benchmarks.rows.remote_flood``
and the ``remote/flood/slow`` row), run as its own process so that its
memory is its own: ``python -m benchmarks.rows._flood_receiver URL SYSTEM
BACKEND``.

It joins ``SYSTEM`` at ``URL`` as node ``receiver`` and spawns ``slow`` (1 ms
of blocking work per message, as a handler that calls a C library or does
CPU work) and ``probe`` (answers ``"stats"`` with what ``slow`` has handled
and has queued, so the sender can look without queueing behind the
flood), prints ``ready`` and runs until its stdin closes.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio

from actors import Actor, ActorRef, ActorSystem
from actors.remote import Remote

#: Seconds of work per message.
WORK = 0.001


class Handled:
    """What ``slow`` has handled, shared with ``probe``."""

    def __init__(self) -> None:
        self.count = 0


class Slow(Actor):
    """Takes ``WORK`` seconds per message (blocking)."""

    def __init__(self, handled: Handled) -> None:
        self.handled = handled

    def receive(self, message: Any) -> None:
        time.sleep(WORK)
        self.handled.count += 1


class Probe(Actor):
    """Answers ``"stats"`` with ``(handled, queued)`` of ``slow``."""

    def __init__(self, handled: Handled, slow: ActorRef[Any]) -> None:
        self.handled = handled
        self.slow = slow

    def receive(self, message: Any) -> Any:
        return [self.handled.count, self.slow.statistics().queued_messages]


async def main(url: str, system: str) -> None:
    async with ActorSystem(
        remote=Remote(url, system=system, node="receiver", stop_timeout=0.5)
    ) as actors:
        handled = Handled()
        slow = actors.spawn(Slow, handled, name="slow")
        actors.spawn(Probe, handled, slow, name="probe")
        print("ready", flush=True)
        # Until the parent closes our stdin (it kills us after: leaving
        # with a backlog would take as long as the backlog).
        await anyio.to_thread.run_sync(sys.stdin.read)


if __name__ == "__main__":
    url, system, backend = sys.argv[1:4]
    options: dict[str, Any] = {}
    if backend == "uvloop":
        import uvloop

        backend, options = "asyncio", {"loop_factory": uvloop.new_event_loop}
    anyio.run(main, url, system, backend=backend, backend_options=options)
