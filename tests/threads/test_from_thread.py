"""``system.from_thread``: real threads (started with ``anyio.to_thread``) tell,
send, ask, spawn and stop actors on asyncio, uvloop and Trio; the blocking API
refuses the event loop's own thread; no call hangs once the system is gone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    AskTimeout,
    FromThread,
    MailboxFull,
    Request,
    SystemNotRunning,
)
from actors._deadlines import IDLE_KEPT

pytestmark = pytest.mark.anyio

THREADS = 8


@dataclass
class Double(Request[int]):
    n: int


class Echo(Actor):
    """Replies with the message; doubles a Double; raises for "fail"."""

    def receive(self, message: Any) -> Any:
        if isinstance(message, Double):
            return 2 * message.n
        if message == "fail":
            raise KeyError("fail")
        return message


class Log(Actor):
    """Appends every message to ``log`` and replies with how many it has."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: Any) -> int:
        self.log.append(message)
        return len(self.log)


class Blocker(Actor):
    """Parks in its handler until ``release`` is set; ``entered`` says it is."""

    def __init__(self, entered: anyio.Event, release: anyio.Event) -> None:
        self.entered = entered
        self.release = release

    async def receive(self, message: Any) -> Any:
        self.entered.set()
        await self.release.wait()
        return message


async def in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` for i in range(count), each in its own worker thread, at
    the same time; return the results in order."""
    results: list[Any] = [None] * count
    limiter = anyio.CapacityLimiter(count)

    async def run(index: int) -> None:
        results[index] = await anyio.to_thread.run_sync(work, index, limiter=limiter)

    async with anyio.create_task_group() as tg:
        for index in range(count):
            tg.start_soon(run, index)
    return results


def outcome(call: Callable[[], Any]) -> Any:
    """The call's return value, or the exception it raised."""
    try:
        return call()
    except Exception as exc:
        return exc


async def test_system_from_thread_is_one_from_thread_per_system() -> None:
    async with ActorSystem() as system:
        made = await in_threads(THREADS, lambda _: system.from_thread)
        assert all(entry is system.from_thread for entry in made)
        assert isinstance(system.from_thread, FromThread)


async def test_eight_threads_each_asking_a_thousand_times_get_every_reply() -> None:
    asks = 1_000

    def work(thread: int) -> int:
        ask = system.from_thread.ask
        replies = 0
        for i in range(asks):
            assert ask(ref, (thread, i)) == (thread, i)
            replies += 1
        return replies

    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        with anyio.fail_after(30):
            replies = await in_threads(THREADS, work)
    assert replies == [asks] * THREADS


async def test_an_ask_from_a_thread_is_typed_by_its_request() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        reply: int = await anyio.to_thread.run_sync(
            lambda: system.from_thread.ask(ref, Double(21))
        )
    assert reply == 42


async def test_tells_from_threads_keep_per_thread_order() -> None:
    tells = 500
    log: list[tuple[int, int]] = []

    def work(thread: int) -> None:
        tell = system.from_thread.tell
        for i in range(tells):
            tell(ref, (thread, i))

    async with ActorSystem() as system:
        ref = system.spawn(Log, log)
        await in_threads(THREADS, work)
        # Every tell returned once the loop had enqueued it: this ask comes last.
        assert await ref.ask("last") == THREADS * tells + 1
    log.pop()
    for thread in range(THREADS):
        assert [i for t, i in log if t == thread] == list(range(tells))


async def test_an_ask_from_a_thread_raises_the_handlers_exception() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        exc = await anyio.to_thread.run_sync(
            outcome, lambda: system.from_thread.ask(ref, "fail")
        )
    assert isinstance(exc, KeyError)
    assert exc.args == ("fail",)


async def test_an_ask_from_a_thread_without_a_reply_in_time_raises_ask_timeout() -> (
    None
):
    entered, release = anyio.Event(), anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Blocker, entered, release)
        ref.tell("park")
        await entered.wait()
        exc = await anyio.to_thread.run_sync(
            outcome, lambda: system.from_thread.ask(ref, "late", timeout=0.05)
        )
        assert isinstance(exc, AskTimeout)
        assert "0.05" in str(exc)
        release.set()


async def test_an_ask_times_out_in_the_thread_even_when_the_loop_is_blocked() -> None:
    log: list[Any] = []
    asking = threading.Event()

    def work() -> Any:
        asking.set()
        start = time.monotonic()
        exc = outcome(lambda: system.from_thread.ask(ref, "late", timeout=0.05))
        return exc, time.monotonic() - start

    async with ActorSystem() as system:
        ref = system.spawn(Log, log)
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def run() -> None:
                results.append(await anyio.to_thread.run_sync(work))

            tg.start_soon(run)
            while not asking.is_set():
                await anyio.lowlevel.checkpoint()
            time.sleep(0.5)  # the loop is blocked: it cannot take the ask
        ((exc, elapsed),) = results
        assert isinstance(exc, AskTimeout)
        assert elapsed < 0.4
        # The abandoned request is dropped, never delivered late.
        assert await ref.ask("after") == 1
    assert log == ["after"]


class Stalls(Actor):
    """Blocks the event loop in its handler until ``release`` is set (by the
    thread, once its ask gave up), then replies."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def receive(self, message: Any) -> Any:
        assert self.release.wait(30), "the thread's ask never gave up"
        return message


async def test_a_reply_after_the_threads_ask_timed_out_is_a_dead_letter() -> None:
    # The thread gives up after 0.1 s while the loop is still blocked in the
    # handler (which waits for the thread to have given up, so no load on the
    # machine can reorder them); the reply that comes then has nobody to go
    # to: a dead letter, as AskTimeout promises, not a silent drop.
    release = threading.Event()

    def ask_then_release() -> Any:
        try:
            return outcome(lambda: system.from_thread.ask(ref, "late", timeout=0.1))
        finally:
            release.set()

    async with ActorSystem() as system:
        ref = system.spawn(Stalls, release)
        async with system.dead_letters.stream() as letters:
            exc = await anyio.to_thread.run_sync(ask_then_release)
            assert isinstance(exc, AskTimeout)
            with anyio.fail_after(5):
                letter = await letters.receive()
        assert tuple(letter) == (ref, "late", "ask abandoned")
        assert system.dead_letters.count == 1


async def test_asks_from_a_thread_leave_no_armed_deadline_timers_behind() -> None:
    # Each from_thread.ask waits with its own remaining time, a new timeout
    # value every time: on asyncio each completed ask releases its deadline
    # list and timer (a few idle lists may stay, for reuse).
    def work() -> None:
        for i in range(100):
            assert system.from_thread.ask(ref, i, timeout=30.0) == i

    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        await anyio.to_thread.run_sync(work)
        deadlines = system._runtime.deadlines
        if deadlines is not None:  # asyncio and uvloop; Trio has no lists
            assert len(deadlines.queues) <= IDLE_KEPT
            assert all(q.timer is not None for q in deadlines.queues.values())


async def test_an_ask_from_a_thread_to_a_stopped_actor_raises_actor_stopped() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        ref.stop()
        await ref.join()
        exc = await anyio.to_thread.run_sync(
            outcome, lambda: system.from_thread.ask(ref, "hello")
        )
        assert type(exc) is ActorStopped


async def test_a_tell_from_a_thread_raises_mailbox_full_or_is_a_dead_letter() -> None:
    entered, release = anyio.Event(), anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Blocker, entered, release, capacity=1)
        ref.tell("park")
        await entered.wait()
        ref.tell("fills the mailbox")
        exc = await anyio.to_thread.run_sync(
            outcome, lambda: system.from_thread.tell(ref, "one too many")
        )
        assert isinstance(exc, MailboxFull)
        release.set()
        ref.stop()
        await ref.join()
        exc = await anyio.to_thread.run_sync(
            outcome, lambda: system.from_thread.tell(ref, "too late")
        )
        assert exc is None  # a dead letter, as ref.tell's
        assert system.dead_letters.recent[-1].message == "too late"


async def test_a_send_from_a_thread_waits_for_room() -> None:
    entered, release = anyio.Event(), anyio.Event()
    log: list[Any] = []
    async with ActorSystem() as system:
        blocker = system.spawn(Blocker, entered, release, capacity=1)
        blocker.tell("park")
        await entered.wait()
        blocker.tell("fills the mailbox")
        # No room: a bounded send gives up and enqueues nothing.
        exc = await anyio.to_thread.run_sync(
            outcome, lambda: system.from_thread.send(blocker, "x", timeout=0.05)
        )
        assert type(exc) is TimeoutError
        assert blocker._cell.mailbox.statistics().queued_messages == 1

        ref = system.spawn(Log, log, capacity=1)
        await anyio.to_thread.run_sync(
            lambda: [system.from_thread.send(ref, i) for i in range(100)]
        )
        assert await ref.ask("last") == 101
        release.set()
    assert log == [*range(100), "last"]


async def test_spawn_and_stop_from_a_thread() -> None:
    log: list[Any] = []

    def work() -> Any:
        from_thread = system.from_thread
        ref = from_thread.spawn(Log, log, name="from-a-thread")
        from_thread.tell(ref, "hello")
        count = from_thread.ask(ref, "again")
        from_thread.stop(ref)
        return ref, count

    async with ActorSystem() as system:
        ref, count = await anyio.to_thread.run_sync(work)
        assert ref.path == "/user/from-a-thread"
        assert count == 2
        await ref.join()
    assert log == ["hello", "again"]


async def test_a_blocking_call_from_the_event_loop_thread_raises() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Log, log)
        from_thread = system.from_thread
        calls: list[Callable[[], Any]] = [
            lambda: from_thread.tell(ref, "tell"),
            lambda: from_thread.send(ref, "send"),
            lambda: from_thread.ask(ref, "ask"),
            lambda: from_thread.spawn(Echo),
            lambda: from_thread.stop(ref),
        ]
        for call in calls:
            with pytest.raises(RuntimeError, match="event loop's own thread"):
                call()
        assert await ref.ask("alive") == 1
    assert log == ["alive"]


async def test_calls_after_the_system_exited_raise_system_not_running() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        from_thread = system.from_thread

    def work() -> list[Any]:
        return [
            outcome(lambda: from_thread.tell(ref, "tell")),
            outcome(lambda: from_thread.send(ref, "send")),
            outcome(lambda: from_thread.ask(ref, "ask")),
            outcome(lambda: from_thread.spawn(Echo)),
            outcome(lambda: from_thread.stop(ref)),
            outcome(lambda: system.from_thread.ask(ref, "ask")),
        ]

    with anyio.fail_after(5):
        raised = await anyio.to_thread.run_sync(work)
    assert [type(exc) for exc in raised] == [SystemNotRunning] * 6
    assert all(isinstance(exc, ActorStopped) for exc in raised)


async def test_calls_before_the_system_is_entered_raise_system_not_running() -> None:
    system = ActorSystem()
    exc = await anyio.to_thread.run_sync(
        outcome, lambda: system.from_thread.spawn(Echo)
    )
    assert type(exc) is SystemNotRunning


async def test_an_ask_in_flight_when_the_system_is_torn_down_raises() -> None:
    entered, release = anyio.Event(), anyio.Event()
    results: list[Any] = []

    async def ask_in_a_thread() -> None:
        results.append(
            await anyio.to_thread.run_sync(
                outcome, lambda: system.from_thread.ask(ref, "never", timeout=60)
            )
        )

    class Boom(Exception):
        pass

    with anyio.fail_after(10):
        async with anyio.create_task_group() as outer:
            with pytest.raises(Boom):
                async with ActorSystem(shutdown_timeout=0.01) as system:
                    ref = system.spawn(Blocker, entered, release)
                    outer.start_soon(ask_in_a_thread)
                    await entered.wait()  # the ask is being handled: it parks
                    raise Boom  # the actors are cancelled after 0.01 s
    (exc,) = results
    assert isinstance(exc, ActorStopped)


@pytest.mark.parametrize("round_", range(10))
async def test_calls_racing_the_system_exit_never_hang(round_: int) -> None:
    # However the call and the exit interleave, it returns or raises at once.
    go = threading.Event()

    def work() -> list[Any]:
        go.wait()
        return [outcome(partial(from_thread.ask, ref, i)) for i in range(20)]

    with anyio.fail_after(10):
        async with anyio.create_task_group() as outer, ActorSystem() as system:
            ref = system.spawn(Echo)
            from_thread = system.from_thread
            results: list[Any] = []

            async def run() -> None:
                results.append(await anyio.to_thread.run_sync(work))

            outer.start_soon(run)
            await anyio.lowlevel.checkpoint()
            go.set()
    (replies,) = results
    for i, reply in enumerate(replies):
        assert reply == i or isinstance(reply, ActorStopped)
