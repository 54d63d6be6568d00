"""ref.statistics(): a frozen snapshot of what waits for an actor (queued
messages and signals, capacity, waiting senders)."""

from __future__ import annotations

import dataclasses

import anyio
import pytest

from actors import ActorSystem, RefStatistics

from ._support import Hold, Recorder, hold, wait_all_blocked

pytestmark = pytest.mark.anyio


async def test_statistics_count_queued_messages_signals_and_waiting_senders() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [], capacity=2)
        assert ref.statistics() == RefStatistics(0, 0, 2, 0)
        release = await hold(ref)
        ref.tell(1)
        ref.tell(2)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ref.send, 3)  # waits for room
            await wait_all_blocked()
            stats = ref.statistics()
            assert stats.queued_messages == 2
            assert stats.waiting_senders == 1
            assert stats.capacity == 2
            release.set()
        await ref.ask("sync")
        assert ref.statistics() == RefStatistics(0, 0, 2, 0)


async def test_statistics_are_frozen_and_a_stopped_actors_are_empty() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Recorder, [])
        stats = ref.statistics()
        with pytest.raises(dataclasses.FrozenInstanceError):
            stats.queued_messages = 3  # type: ignore[misc]
        assert stats.capacity is None
        ref.stop()
        await ref.join()
        assert ref.statistics().queued_messages == 0


async def test_messages_the_actor_took_in_its_batch_count_until_handled() -> None:
    # The message loop takes what is queued in batches: those after the
    # message being handled are still queued for whoever watches the
    # backlog (a hand-off waiting for it to drain, an adaptive sender).
    async with ActorSystem() as system:
        log: list[object] = []
        ref = system.spawn(Recorder, log)
        await ref.ask("started")
        held = Hold()
        ref.tell(held)  # the loop takes all four at once, handles held first
        for n in range(3):
            ref.tell(n)
        await held.entered.wait()
        assert ref.statistics().queued_messages == 3
        ref.tell(3)  # one more, in the mailbox
        assert ref.statistics().queued_messages == 4
        held.release.set()
        assert await ref.ask("sync") == "sync"
        assert ref.statistics().queued_messages == 0
        assert log == ["started", "hold", 0, 1, 2, 3, "sync"]
