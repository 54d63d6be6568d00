"""Ask deadlines on asyncio release their loop timers when the asks complete:
asks with ever-new timeout values (as ``system.from_thread.ask`` makes) leave at
most ``IDLE_KEPT`` idle deadline lists and armed timers behind, not one per
value until its deadline; asks alternating between a few timeouts reuse theirs.
Counted, never timed."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem
from actors._deadlines import IDLE_KEPT, Deadlines

from ._support import on_asyncio

pytestmark = pytest.mark.anyio

ASKS = 200


class Echo(Actor):
    """Replies after one yield: the asker has parked by then (an ask finds a
    reply made at once during its own yield, linking no deadline at all)."""

    async def receive(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        return message


class PromptEcho(Actor):
    def receive(self, message: Any) -> Any:
        return message


def deadlines_of(system: ActorSystem) -> Deadlines:
    if not on_asyncio():
        pytest.skip("loop timers are asyncio's (Trio: test_ask_deadline_task.py)")
    deadlines = system._runtime.deadlines
    assert isinstance(deadlines, Deadlines)
    return deadlines


def armed_timers(deadlines: Deadlines) -> int:
    """The deadline lists' timers that are still armed; on plain asyncio also
    checked against the loop's own heap of scheduled timers."""
    armed = sum(
        1
        for queue in deadlines.queues.values()
        if queue.timer is not None and not queue.timer.cancelled()
    )
    scheduled = getattr(deadlines.loop, "_scheduled", None)
    if scheduled is not None:  # asyncio's loop (uvloop keeps timers in libuv)
        ours = sum(
            1
            for handle in scheduled
            if not handle.cancelled()
            and getattr(handle._callback, "__self__", None) in deadlines.queues.values()
        )
        assert ours == armed
    return armed


async def test_asks_with_distinct_timeouts_leave_a_few_idle_timers_at_most() -> None:
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Echo)
        for i in range(ASKS):
            assert await ref.ask(i, timeout=10.0 + i / 1000) == i
            assert len(deadlines.queues) <= IDLE_KEPT
            assert armed_timers(deadlines) <= IDLE_KEPT


async def test_concurrent_asks_with_distinct_timeouts_release_their_timers() -> None:
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Echo)
        async with anyio.create_task_group() as tg:
            for i in range(ASKS):
                tg.start_soon(ref.ask, i, 10.0 + i / 1000)
        assert len(deadlines.queues) <= IDLE_KEPT
        assert armed_timers(deadlines) <= IDLE_KEPT


async def test_sequential_asks_with_one_timeout_reuse_one_list_and_timer() -> None:
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Echo)
        assert await ref.ask("first", timeout=10.0) == "first"
        (queue,) = deadlines.queues.values()
        timer = queue.timer
        for i in range(ASKS):
            assert await ref.ask(i, timeout=10.0) == i
        # The same list and the same armed timer: nothing made or cancelled.
        assert list(deadlines.queues.values()) == [queue]
        assert queue.timer is timer and timer is not None and not timer.cancelled()


async def test_asks_alternating_between_a_few_timeouts_reuse_their_lists() -> None:
    timeouts = [5.0 + i for i in range(IDLE_KEPT)]
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Echo)
        for timeout in timeouts:
            assert await ref.ask("warm", timeout=timeout) == "warm"
        lists = dict(deadlines.queues)
        timers = {key: queue.timer for key, queue in lists.items()}
        assert sorted(lists) == timeouts
        for i in range(ASKS):
            assert await ref.ask(i, timeout=timeouts[i % IDLE_KEPT]) == i
        assert deadlines.queues == lists
        assert {key: queue.timer for key, queue in lists.items()} == timers


async def test_cancelled_asks_with_distinct_timeouts_release_their_timers() -> None:
    entered, release = anyio.Event(), anyio.Event()

    class Parks(Actor):
        async def receive(self, message: Any) -> Any:
            if message == "hold":
                entered.set()
                await release.wait()
            return message

    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Parks)
        ref.tell("hold")
        await entered.wait()
        for i in range(ASKS):
            with anyio.CancelScope() as scope:
                scope.cancel()
                await ref.ask(i, timeout=10.0 + i / 1000)
        assert len(deadlines.queues) <= IDLE_KEPT
        assert armed_timers(deadlines) <= IDLE_KEPT
        release.set()


async def test_an_idle_list_is_dropped_when_its_timer_fires() -> None:
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Echo)
        assert await ref.ask("x", timeout=0.2) == "x"
        assert len(deadlines.queues) == 1
        fired = asyncio.Event()
        (queue,) = deadlines.queues.values()
        assert queue.timer is not None
        loop = asyncio.get_running_loop()
        # Due with the list's timer; the call_soon runs after both have run.
        loop.call_at(queue.timer.when(), loop.call_soon, fired.set)
        await fired.wait()
        assert deadlines.queues == {}
        assert not deadlines.idle


async def test_asks_answered_during_the_askers_yield_arm_no_timer() -> None:
    # A ready actor answers while the asker yields once before parking: the
    # ask returns without linking a deadline, so no list and no timer exist.
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(PromptEcho)
        assert await ref.ask("warm") == "warm"  # the actor has started
        deadlines.queues.clear()  # whatever the first ask needed
        for i in range(ASKS):
            assert await ref.ask(i, timeout=10.0 + i / 1000) == i
        assert deadlines.queues == {}
        assert armed_timers(deadlines) == 0


async def test_leaving_the_system_cancels_the_idle_lists_timers() -> None:
    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Echo)
        for timeout in (10.0, 20.0):
            assert await ref.ask("x", timeout=timeout) == "x"
        assert armed_timers(deadlines) == 2  # idle, kept for reuse
    assert armed_timers(deadlines) == 0
    assert deadlines.queues == {}


async def test_asks_parking_after_the_deadlines_closed_time_out_on_their_own() -> None:
    entered, release = anyio.Event(), anyio.Event()

    class Parks(Actor):
        async def receive(self, message: Any) -> Any:
            if message == "hold":
                entered.set()
                await release.wait()
            await anyio.lowlevel.checkpoint()
            return message

    async with ActorSystem() as system:
        deadlines = deadlines_of(system)
        ref = system.spawn(Parks)
        deadlines.close()  # as when the system begins to exit
        assert await ref.ask("answered", timeout=10.0) == "answered"
        ref.tell("hold")
        await entered.wait()
        with pytest.raises(TimeoutError):
            await ref.ask("late", timeout=0.01)
        assert deadlines.queues == {}
        assert armed_timers(deadlines) == 0
        release.set()
