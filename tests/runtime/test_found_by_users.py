"""Problems found by trying anyio-actors as a new user and as an attacker,
kept as regression tests of the contract each one broke."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import pytest
import uvloop

from actors import (
    Actor,
    ActorSystem,
    StopReason,
    SystemNotRunning,
    Terminated,
)
from actors.testing import wait_all_blocked

pytestmark = pytest.mark.anyio


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


async def test_a_spawn_without_a_name_never_fails_for_a_name_taken_by_hand() -> None:
    async with ActorSystem() as system:
        system.spawn(Echo, name="echo-1")
        ref = system.spawn(Echo)  # default name: must pick a free one
        assert await ref.ask("hi", timeout=2.0) == "hi"


async def test_a_pool_without_a_name_never_fails_for_a_name_taken_by_hand() -> None:
    async with ActorSystem() as system:
        system.spawn(Echo, name="pool-echo-1")
        pool = system.spawn_pool(Echo, 2)
        assert await pool.ask("hi", timeout=2.0) == "hi"


class SpawnsInOnStop(Actor):
    def on_stop(self) -> None:
        self.context.spawn(Echo, name="late")

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise ValueError("restart me")
        return [child.name for child in self.context.children]


async def test_a_restart_leaves_no_child_of_the_old_instance() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(SpawnsInOnStop)
        ref.tell("fail")
        # README: "children are stopped" on a restart; the new instance has
        # spawned none.
        assert await ref.ask("children", timeout=2.0) == []


def _call_in_thread(fn: Any) -> BaseException | None:
    caught: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(5.0)
    return caught[0] if caught else None


async def test_thread_entry_refuses_a_non_ref_with_a_type_error_naming_ref() -> None:
    async with ActorSystem() as system:
        from_thread = system.from_thread
        for call in (
            lambda: from_thread.tell("not a ref", 1),
            lambda: from_thread.ask("not a ref", 1),
            lambda: from_thread.send("not a ref", 1),
            lambda: from_thread.stop("not a ref"),
        ):
            exc = await anyio.to_thread.run_sync(_call_in_thread, call)
            assert isinstance(exc, TypeError), exc
            assert "ref" in str(exc)


class TimerKey(Actor):
    def receive(self, message: Any) -> Any:
        try:
            self.context.timers.start_single(["unhashable"], "tick", delay=1.0)
        except TypeError as exc:
            return str(exc)
        return "accepted"


async def test_an_unhashable_timer_key_is_refused_naming_the_key() -> None:
    async with ActorSystem() as system:
        error = await system.spawn(TimerKey).ask("go", timeout=2.0)
        assert "key" in error


async def test_a_broadcast_signal_is_refused_without_naming_internal_api() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Echo, 2)
        target = system.spawn(Echo)
        with pytest.raises(TypeError) as info:
            pool.broadcast(Terminated(target, StopReason.NORMAL))
        assert "send_signal" not in str(info.value)


@pytest.mark.parametrize("name", [".", "..", " ", "a\nb"])
async def test_a_malformed_actor_name_is_refused(name: str) -> None:
    async with ActorSystem() as system:
        with pytest.raises(ValueError, match="name"):
            system.spawn(Echo, name=name)


class Blocked(Actor):
    def __init__(self, entered: anyio.Event, release: anyio.Event) -> None:
        self.entered = entered
        self.release = release

    async def receive(self, message: Any) -> Any:
        if message == "block":
            self.entered.set()
            await self.release.wait()
        return message


async def test_a_thread_ask_pending_at_exit_raises_system_not_running() -> None:
    release, handling = anyio.Event(), anyio.Event()
    entered = threading.Event()
    outcome: list[BaseException | None] = []

    def ask_from_thread(system: ActorSystem, ref: Any) -> None:
        entered.set()
        outcome.append(
            _call_in_thread(lambda: system.from_thread.ask(ref, "x", timeout=30.0))
        )

    async with ActorSystem(shutdown_timeout=0.1) as system:
        ref = system.spawn(Blocked, handling, release, capacity=1)
        ref.tell("block")
        await handling.wait()
        ref.tell("fill")  # the thread's ask waits for room
        thread = threading.Thread(target=ask_from_thread, args=(system, ref))
        thread.start()
        await anyio.to_thread.run_sync(entered.wait)
        # Let the ask reach the loop and park on the full mailbox.
        with anyio.move_on_after(0.2):
            await anyio.sleep_forever()
    await anyio.to_thread.run_sync(thread.join, 5.0)
    assert isinstance(outcome[0], SystemNotRunning), outcome


class Gated(Actor):
    """Holds its handler on ("hold", i) until gates[i][1] is set."""

    def __init__(self, gates: dict[int, tuple[anyio.Event, anyio.Event]]) -> None:
        self.gates = gates

    async def receive(self, message: Any) -> Any:
        kind, index = message
        if kind == "hold":
            entered, release = self.gates[index]
            entered.set()
            await release.wait()
        return message


# A round-robin pool's send waits for the worker whose turn it is (each worker
# has its own mailbox and quota: see PoolRef.send); a shared-queue pool's send
# goes to whichever worker makes room first.
async def test_a_shared_queue_send_goes_to_the_first_worker_with_room() -> None:
    gates = {i: (anyio.Event(), anyio.Event()) for i in range(2)}
    sent = anyio.Event()
    async with ActorSystem(shutdown_timeout=0.5) as system:
        pool = system.spawn_pool(Gated, 2, gates, capacity=1, routing="shared_queue")
        for index, worker in enumerate(pool.workers):
            worker.tell(("hold", index))
            await gates[index][0].wait()
        pool.tell(("queued", None))  # the pool's queue is full

        async def sender() -> None:
            await pool.send(("x", None))
            sent.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            await wait_all_blocked()
            gates[1][1].set()  # worker-1 makes room; worker-0 stays stuck
            with anyio.move_on_after(2.0):
                await sent.wait()
            sent_in_time = sent.is_set()
            gates[0][1].set()
        assert sent_in_time


ASYNCIO_LOOPS = [
    pytest.param(("asyncio", {}), id="asyncio"),
    pytest.param(("asyncio", {"loop_factory": uvloop.new_event_loop}), id="uvloop"),
]


class CancelsTheSender(Actor):
    """On "queued" (taking it moved the waiting sender's message in), cancels
    the sender's task natively before it resumes."""

    def __init__(self, handled: list[Any], sender: list[asyncio.Task[Any]]) -> None:
        self.handled = handled
        self.sender = sender

    async def receive(self, message: Any) -> Any:
        if message == "hold":
            await self.sender[1]  # type: ignore[misc]
        if message == "queued":
            self.sender[0].cancel()
        self.handled.append(message)
        return message


# Documented (ActorRef.send, README): on asyncio, a native Task.cancel() that
# lands after the message moved in leaves it enqueued (it is handled once) and
# still raises CancelledError; the sender must not resend it.
@pytest.mark.parametrize("anyio_backend", ASYNCIO_LOOPS)
async def test_a_natively_cancelled_send_whose_message_moved_in_is_handled_once() -> (
    None
):
    handled: list[Any] = []
    release = asyncio.get_running_loop().create_future()
    sender: list[Any] = [None, release]
    async with ActorSystem() as system:
        ref = system.spawn(CancelsTheSender, handled, sender, capacity=1)
        ref.tell("hold")
        await wait_all_blocked()
        ref.tell("queued")  # the mailbox is full
        task = asyncio.get_running_loop().create_task(ref.send("moved in"))
        sender[0] = task
        await wait_all_blocked()
        release.set_result(None)
        await asyncio.wait([task])
        assert await ref.ask("sync", timeout=2.0) == "sync"
    assert task.cancelled()
    assert handled.count("moved in") == 1


class HandlesNothing(Actor):
    """Keeps Actor's default receive: every message is "unhandled"."""


async def test_an_unhandled_ask_is_not_answered() -> None:
    letters: list[Any] = []
    async with ActorSystem() as system:
        system.dead_letters.subscribe(letters.append)
        ref = system.spawn(HandlesNothing)
        with pytest.raises(Exception):  # noqa: B017 - any error, not None
            await ref.ask("question", timeout=0.5)
    assert [letter.reason for letter in letters] == ["unhandled"]


HUGE = 10**400  # an int no float can hold


async def test_an_ask_timeout_too_large_for_a_float_is_refused_naming_timeout() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        with pytest.raises((ValueError, TypeError), match="timeout"):
            await ref.ask("x", timeout=HUGE)


def test_a_shutdown_timeout_too_large_for_a_float_is_refused_at_construction() -> None:
    with pytest.raises((ValueError, TypeError), match="shutdown_timeout"):
        ActorSystem(shutdown_timeout=HUGE)


class StartsAHugeTimer(Actor):
    def receive(self, message: Any) -> Any:
        try:
            self.context.timers.start_single("k", "tick", delay=HUGE)
        except (ValueError, TypeError) as exc:
            return str(exc)
        except Exception as exc:
            return repr(exc)
        return "accepted"


async def test_a_timer_delay_too_large_for_a_float_is_refused_naming_delay() -> None:
    async with ActorSystem() as system:
        error = await system.spawn(StartsAHugeTimer).ask("go", timeout=2.0)
        assert "delay" in error
