"""Ordering and fairness: FIFO per sender; drain-many takes up to ``drain`` items
per wake and yields to the event loop after each batch, so a busy actor never
starves the others. No clocks: the proofs are interleavings."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorRef, ActorSystem

from ._support import Recorder

pytestmark = pytest.mark.anyio


def per_sender(log: list[Any], sender: object) -> list[int]:
    return [n for s, n in log if s == sender]


async def test_messages_from_each_sender_arrive_in_send_order() -> None:
    # Four tasks, each mixing tell, send and ask, interleaved by checkpoints.
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log)

        async def sender(s: int) -> None:
            for n in range(60):
                match n % 3:
                    case 0:
                        ref.tell((s, n))
                    case 1:
                        await ref.send((s, n))
                    case _:
                        assert await ref.ask((s, n)) == (s, n)
                if n % 4 == s:
                    await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            for s in range(4):
                tg.start_soon(sender, s)
        for s in range(4):
            assert per_sender(log, s) == list(range(60))
        senders = [s for s, _ in log]
        assert len(list(itertools.groupby(senders))) > 4  # they interleaved


async def test_each_senders_order_holds_under_backpressure() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, log, capacity=3, drain=2)

        async def sender(s: int) -> None:
            for n in range(100):
                await ref.send((s, n))

        async with anyio.create_task_group() as tg:
            for s in range(5):
                tg.start_soon(sender, s)
        await ref.ask((-1, 0))
        for s in range(5):
            assert per_sender(log, s) == list(range(100))


class Forwarder(Actor):
    """Tells ``target`` the numbers 0..n-1 tagged with its own name."""

    def __init__(self, target: ActorRef[Any]) -> None:
        self.target = target

    def receive(self, message: Any) -> Any:
        for n in range(message):
            self.target.tell((self.context.name, n))
        return None


async def test_messages_from_each_sending_actor_arrive_in_send_order() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        sink = system.spawn(Recorder, log)
        senders = [system.spawn(Forwarder, sink, name=f"f{i}") for i in range(3)]
        for ref in senders:
            ref.tell(50)
        for ref in senders:
            await ref.ask(0)  # each has done its telling
        await sink.ask(("barrier", 0))
        for ref in senders:
            assert per_sender(log, ref.name) == list(range(50))


class Logs(Actor):
    """Appends its name to a shared log for each message."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        self.log.append(self.context.name)
        return None


@pytest.mark.parametrize("drain", [1, 4, 16])
async def test_two_flooded_actors_take_turns_batch_by_batch(drain: int) -> None:
    # Both mailboxes hold 96 messages before either actor runs. Without the
    # yield after each batch, one would handle all of its backlog first.
    log: list[str] = []
    n = 96
    async with ActorSystem(drain=drain) as system:
        a = system.spawn(Logs, log, name="a")
        b = system.spawn(Logs, log, name="b")
        for _ in range(n):
            a.tell("work")
            b.tell("work")
        await a.ask("barrier")
        await b.ask("barrier")
    assert log.count("a") == log.count("b") == n + 1
    # At every point, neither is more than one batch ahead of the other.
    lead = 0
    for name in log[: 2 * n]:
        lead += 1 if name == "a" else -1
        assert abs(lead) <= drain


@pytest.mark.parametrize("drain", [1, 8, 64])
async def test_a_busy_actor_yields_to_the_event_loop_after_each_batch(
    drain: int,
) -> None:
    # A plain task ticks on every scheduling round it gets; the actor logs the
    # tick each message was handled at. A batch is handled without yielding, so
    # it shares one tick; then the actor yields and the ticker runs.
    ticks = 0
    done = anyio.Event()
    seen: list[int] = []

    class Ticked(Actor):
        def receive(self, message: Any) -> Any:
            seen.append(ticks)
            return None

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await anyio.lowlevel.checkpoint()

    n = 256
    async with ActorSystem() as system, anyio.create_task_group() as tg:
        ref = system.spawn(Ticked, drain=drain)
        for _ in range(n):
            ref.tell("work")
        tg.start_soon(ticker)
        await ref.ask("barrier")
        done.set()
    runs = [len(list(group)) for _, group in itertools.groupby(seen[:n])]
    assert sum(runs) == n
    # Trio may run a task at the end of one round and at the start of the
    # next, so two batches can fall between two ticks; never more.
    assert max(runs) <= 2 * drain
    # ... and it really takes whole batches at once: not one message per wake.
    assert max(runs) >= min(drain, n)
