"""Ping pong: N pairs of actors bounce a message R times; prints the rate.

    python examples/ping_pong.py --pairs 4 --rounds 100000 --backend uvloop

Each pair is a ``Pinger`` and a ``Ponger``. The pinger tells the ponger a ball,
the ponger tells it back, ``rounds`` times; every hop is a ``tell`` through a
mailbox and a wakeup of the receiving actor, so this measures the runtime's
per-message latency path.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any

import anyio

from actors import Actor, ActorRef, ActorSystem


@dataclass(slots=True)
class Ball:
    """The message bounced between a pair; ``left`` hops remain."""

    left: int
    sender: ActorRef[Any]


class Ponger(Actor):
    """Sends every ball straight back."""

    def receive(self, message: Any) -> None:
        if isinstance(message, Ball):
            message.sender.tell(Ball(message.left, self.context.self_ref))


class Pinger(Actor):
    """Serves the ball, counts the round trips, and sets ``done`` at the end."""

    def __init__(self, partner: ActorRef[Any], rounds: int, done: anyio.Event) -> None:
        self.partner = partner
        self.rounds = rounds
        self.done = done

    def on_start(self) -> None:
        self.partner.tell(Ball(self.rounds, self.context.self_ref))

    def receive(self, message: Any) -> None:
        if isinstance(message, Ball):
            left = message.left - 1
            if left == 0:
                self.done.set()
            else:
                self.partner.tell(Ball(left, self.context.self_ref))


async def ping_pong(pairs: int, rounds: int) -> float:
    """Run ``pairs`` pairs for ``rounds`` round trips each.

    Returns:
        Elapsed wall-clock seconds for all round trips.

    Raises:
        ValueError: ``pairs`` or ``rounds`` is smaller than 1.
    """
    if pairs < 1 or rounds < 1:
        raise ValueError("pairs and rounds must be at least 1")
    async with ActorSystem() as system:
        events = [anyio.Event() for _ in range(pairs)]
        pongers = [system.spawn(Ponger, name=f"ponger-{i}") for i in range(pairs)]
        start = time.perf_counter()
        for i in range(pairs):
            system.spawn(Pinger, pongers[i], rounds, events[i], name=f"pinger-{i}")
        for event in events:
            await event.wait()
        elapsed = time.perf_counter() - start
    return elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4, help="pairs (default 4)")
    parser.add_argument(
        "--rounds", type=int, default=100_000, help="round trips per pair"
    )
    parser.add_argument(
        "--backend", choices=["asyncio", "uvloop", "trio"], default="asyncio"
    )
    args = parser.parse_args(argv)
    if args.pairs < 1 or args.rounds < 1:
        parser.error("--pairs and --rounds must be at least 1")
    backend, options = _backend(args.backend)
    elapsed = anyio.run(
        ping_pong, args.pairs, args.rounds, backend=backend, backend_options=options
    )
    trips = args.pairs * args.rounds
    print(
        f"{args.pairs} pairs x {args.rounds} round trips on {args.backend}: "
        f"{elapsed:.3f} s, {trips / elapsed:,.0f} round trips/s, "
        f"{elapsed / args.rounds * 1e6:.2f} us per round trip (per pair)"
    )


def _backend(name: str) -> tuple[str, dict[str, Any]]:
    if name == "uvloop":
        try:
            import uvloop
        except ModuleNotFoundError:
            sys.exit('--backend uvloop: pip install "anyio-actors[uvloop]"')
        return "asyncio", {"loop_factory": uvloop.new_event_loop}
    return name, {}


if __name__ == "__main__":
    main(sys.argv[1:])
