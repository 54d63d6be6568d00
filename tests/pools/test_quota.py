"""The pool's quota: ``tell`` raises MailboxFull when there is no room and
enqueues nothing; ``send`` waits for room (backpressure), first come first
served. The shared queue carries the pool's capacity; in round-robin each
worker's mailbox has it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem, MailboxFull

from ._support import (
    ROUTINGS,
    Journal,
    Worker,
    hold_every_worker,
    release,
    wait_all_blocked,
)

pytestmark = pytest.mark.anyio


async def test_tell_raises_mailbox_full_when_the_shared_queue_is_full() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue", capacity=3)
        holds = await hold_every_worker(pool)
        for n in range(3):
            pool.tell(n)
        with pytest.raises(MailboxFull):
            pool.tell("refused")
        assert pool._shared is not None
        assert len(pool._shared.state.buffer) == 3  # nothing was enqueued
        release(holds)
        await wait_all_blocked()
        pool.tell(3)  # room again
        await wait_all_blocked()
    assert sorted(m for m in journal.messages() if m != "hold") == [0, 1, 2, 3]


async def test_items_handed_to_idle_workers_do_not_count_against_the_quota() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(
            Worker, 2, journal, routing="shared_queue", capacity=2, drain=3
        )
        await wait_all_blocked()
        for n in range(2):  # one handed to each idle worker
            pool.tell(n)
        pool.tell(2)
        pool.tell(3)  # the queue's 2
        with pytest.raises(MailboxFull):
            pool.tell(4)
        await wait_all_blocked()
    assert sorted(journal.messages()) == list(range(4))


async def test_tell_raises_mailbox_full_when_every_round_robin_worker_is_full() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="round_robin", capacity=2)
        holds = await hold_every_worker(pool)
        for n in range(4):
            pool.tell(n)
        with pytest.raises(MailboxFull):
            pool.tell("refused")
        release(holds)
        await wait_all_blocked()
    assert sorted(m for m in journal.messages() if m != "hold") == [0, 1, 2, 3]


@ROUTINGS
async def test_send_waits_for_room_and_then_delivers(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing, capacity=1)
        holds = await hold_every_worker(pool)
        pool.tell(0)
        if routing == "round_robin":
            pool.tell(1)  # each worker's mailbox holds one; the queue holds one
        with pytest.raises(MailboxFull):
            pool.tell("refused")
        sent: list[int] = []

        async def send(n: int) -> None:
            await pool.send(n)
            sent.append(n)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send, 2)
            await wait_all_blocked()
            assert sent == []  # backpressure: the sender waits
            release(holds)
        assert sent == [2]
        await wait_all_blocked()
    handled = sorted(m for m in journal.messages() if m != "hold")
    assert handled == ([0, 1, 2] if routing == "round_robin" else [0, 2])


async def test_waiting_senders_of_a_shared_queue_are_served_in_order() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(
            Worker, 1, journal, routing="shared_queue", capacity=1, drain=1
        )
        holds = await hold_every_worker(pool)
        pool.tell(0)
        async with anyio.create_task_group() as tg:
            for n in range(1, 6):
                tg.start_soon(pool.send, n)
                await wait_all_blocked()  # each parks behind the previous one
            assert pool._shared is not None
            assert len(pool._shared.state.senders) == 5
            with pytest.raises(MailboxFull):
                pool.tell("barging")  # nobody passes a waiting sender
            release(holds)
        await wait_all_blocked()
    assert journal.messages() == ["hold", 0, 1, 2, 3, 4, 5]


async def test_a_flood_of_senders_through_a_small_shared_queue_loses_nothing() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(
            Worker, 4, journal, routing="shared_queue", capacity=8, drain=4
        )

        async def produce(first: int) -> None:
            for n in range(first, first + 250):
                await pool.send(n)

        async with anyio.create_task_group() as tg:
            for p in range(4):
                tg.start_soon(produce, p * 250)
        await wait_all_blocked()
        assert pool._shared is not None
        assert pool._shared.state.peak <= 8
    assert sorted(journal.messages()) == list(range(1000))


async def test_a_broadcast_is_not_counted_against_the_shared_queues_quota() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing="shared_queue", capacity=1)
        holds = await hold_every_worker(pool)
        pool.tell(0)  # the queue is full
        pool.broadcast("all")  # still goes to every worker's own lane
        release(holds)
        await wait_all_blocked()
    assert sorted(map(str, journal.messages())) == ["0", "all", "all", "hold", "hold"]
