"""ref.statistics(): a frozen snapshot of what waits for an actor (queued
messages and signals, capacity, waiting senders)."""

from __future__ import annotations

import dataclasses

import anyio
import pytest

from actors import ActorSystem, RefStatistics

from ._support import Recorder, hold, wait_all_blocked

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
