"""The node processes of the backpressure test (``test_backpressure_processes``),
started as ``python -m`` this module. Each reports its resident set (KiB)
when it is ready, and the most it had (sampled every 50 messages, and at
the end) when it is done.

``producer URL CLUSTER BACKEND COUNT WINDOW``: a producer controller
``/user/producer`` (no durable queue) that sends ``COUNT`` 1 KiB ``Chunk``
messages as fast as its demand lets it; prints ``ready <rss>``, then
``blocked <accepted> <unconfirmed>`` the first time it has no demand left
(the consumer holds its first message: it may not send more), and ``done
<most unconfirmed> <rss>`` once every message is confirmed (the most held
unconfirmed, read after each ``send``).

``consumer URL CLUSTER BACKEND COUNT WINDOW``: a slow consumer (it yields
a few times per message) behind a consumer controller of ``WINDOW``
registered to the producer; it holds the first message until the test
writes ``go`` on its stdin, printing ``holding`` then; prints ``ready
<rss>`` first and ``done <handled in order> <most queued> <rss>`` after the
last message (``most queued``: the most messages in its own and its
controller's mailboxes at any message handled), and stays up (its last
confirmation is on its way) until the test kills it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

from actors import Actor, ActorRef, ActorSystem
from actors.delivery import ConsumerController, Delivery, ProducerController
from actors.remote import Remote

from ._kill_campaign import Commands, run_child

PAYLOAD = "x" * 1024


class Chunk(msgspec.Struct, frozen=True):
    n: int
    data: str


def rss() -> int:
    """This process's resident set now, KiB (``VmRSS``, Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


class Peak:
    """The most resident set seen, sampled every ``every`` messages."""

    def __init__(self, every: int = 50) -> None:
        self.every = every
        self.most = rss()
        self.count = 0

    def sample(self) -> None:
        self.count += 1
        if self.count % self.every == 0:
            self.most = max(self.most, rss())


def node(url: str, cluster: str, name: str) -> Remote:
    return Remote(url, system=cluster, node=name, types=[(Chunk, "Chunk")])


async def producer(url: str, cluster: str, count: int, window: int) -> None:
    async with ActorSystem(remote=node(url, cluster, "producer")) as system:
        sender: ProducerController[Chunk] = await ProducerController.start(
            system, "chunks", name="producer"
        )
        peak = Peak()
        print("ready", peak.most, flush=True)
        most = 0
        blocked = False
        for n in range(count):
            await sender.send(Chunk(n, PAYLOAD))
            stats = sender.statistics()
            most = max(most, stats.unconfirmed)
            peak.sample()
            if not blocked and stats.demand == 0:
                blocked = True
                print("blocked", stats.accepted, stats.unconfirmed, flush=True)
        await sender.wait_confirmed()
        print("done", most, max(peak.most, rss()), flush=True)


class Slow(Actor[Delivery[Chunk]]):
    """Holds the first chunk until ``go``; yields a few times per chunk."""

    def __init__(self, gate: anyio.Event, watched: Watched) -> None:
        self.gate = gate
        self.watched = watched

    async def receive(self, delivery: Delivery[Chunk]) -> None:
        if not self.gate.is_set():
            print("holding", flush=True)
            await self.gate.wait()
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        self.watched.note(delivery.message.n)


class Watched:
    """The most messages queued in the consumer's and its controller's
    mailboxes at any message handled, and whether each came once, in order
    (a count, not a list: the process's memory is what is measured)."""

    def __init__(self) -> None:
        self.refs: list[ActorRef[Any]] = []
        self.most = 0
        self.peak = Peak()
        self.handled = 0
        self.in_order = True

    def note(self, n: int) -> None:
        self.in_order = self.in_order and n == self.handled
        self.handled += 1
        queued = sum(ref.statistics().queued_messages for ref in self.refs)
        self.most = max(self.most, queued)
        self.peak.sample()


async def consumer(url: str, cluster: str, count: int, window: int) -> None:
    async with ActorSystem(remote=node(url, cluster, "consumer")) as system:
        gate = anyio.Event()
        watched = Watched()
        slow = system.spawn(Slow, gate, watched)
        controller = ConsumerController.spawn(system, slow, window=window)
        watched.refs = [slow, controller.ref]
        controller.register_to(await system.remote.lookup("producer", "/user/producer"))
        print("ready", watched.peak.most, flush=True)
        words = await Commands().next()
        assert words == ["go"], words
        gate.set()
        await controller.wait_confirmed("chunks", count)
        in_order = watched.in_order and watched.handled == count
        most_rss = max(watched.peak.most, rss())
        print("done", int(in_order), watched.most, most_rss, flush=True)
        # Alive until the test ends it: its last confirmation is on its way.
        await anyio.sleep_forever()


if __name__ == "__main__":
    role, url, cluster, backend, count, window = sys.argv[1:7]
    main = producer if role == "producer" else consumer
    run_child(main, url, cluster, int(count), int(window), backend=backend)
