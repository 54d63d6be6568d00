"""The receive timeout (Akka's setReceiveTimeout, the gen_server timeout): a
ReceiveTimeout after that many seconds without a message; reset by messages,
not by runtime signals; armed again after it fires; cancelled by None; gone
after a restart.

Time is real here (short timeouts): the assertions are lower bounds ("never
before the idle time"), which hold on any machine; waits are on events."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, ReceiveTimeout

pytestmark = pytest.mark.anyio

T = 0.05  #: seconds: the receive timeout of most tests
#: Seconds: uvloop's clock counts milliseconds, so two readings T apart may
#: differ by a hair less than T.
TICK = 0.001


class Idle(Actor):
    """Sets a receive timeout in on_start; logs (what, when) of each message
    and each ReceiveTimeout; ``wanted`` ReceiveTimeouts set ``done``."""

    def __init__(self, log: list[Any], done: anyio.Event, wanted: int = 1) -> None:
        self.log = log
        self.done = done
        self.wanted = wanted

    def on_start(self) -> None:
        self.context.set_receive_timeout(T)

    def receive(self, message: Any) -> Any:
        self.log.append((message, anyio.current_time()))
        if isinstance(message, ReceiveTimeout):
            self.wanted -= 1
            if not self.wanted:
                self.done.set()
        return message


async def test_a_receive_timeout_comes_after_the_idle_time() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        started = anyio.current_time()
        system.spawn(Idle, log, done)
        await done.wait()
    [(message, when)] = log
    assert message == ReceiveTimeout()
    assert when - started >= T - TICK


class UntilLast(Idle):
    """Done at the first ReceiveTimeout after the message "last"."""

    def receive(self, message: Any) -> Any:
        self.log.append((message, anyio.current_time()))
        if isinstance(message, ReceiveTimeout) and self.log[-2][0] == "last":
            self.done.set()
        return message


async def test_every_message_resets_the_receive_timeout() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(UntilLast, log, done)
        for n in range(5):
            await ref.ask(n)
            await anyio.sleep(T / 5)  # the sender's pace, not a synchronisation
        await ref.ask("last")
        await done.wait()
    # However slow the machine (a timeout may then come between messages),
    # none ever came sooner than T after the message before it.
    for (before, handled), (message, when) in pairwise(log):
        if isinstance(message, ReceiveTimeout) and not isinstance(
            before, ReceiveTimeout
        ):
            assert when - handled >= T - TICK, log
    assert [m for m, _ in log if not isinstance(m, ReceiveTimeout)] == [
        0,
        1,
        2,
        3,
        4,
        "last",
    ]
    assert log[-1][0] == ReceiveTimeout()


async def test_the_receive_timeout_is_armed_again_after_it_fires() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(Idle, log, done, 3)
        await done.wait()
    times = [when for _, when in log]
    assert len(times) == 3
    # Each is armed when the one before fires, a hair before it is logged.
    assert all(
        later - earlier >= T - 2 * TICK for earlier, later in pairwise(times)
    )


class Cancels(Actor):
    """Sets a receive timeout then cancels it; a timer at 4 T says when to
    look."""

    def __init__(self, log: list[Any], done: anyio.Event) -> None:
        self.log = log
        self.done = done

    def on_start(self) -> None:
        self.context.set_receive_timeout(T)
        self.context.timers.start_single("look", "look", 4 * T)

    def receive(self, message: Any) -> Any:
        self.log.append(message)
        if message == "cancel":
            self.context.set_receive_timeout(None)
            return self.context.receive_timeout
        if message == "look":
            self.done.set()
        return None


async def test_none_cancels_the_receive_timeout() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Cancels, log, done)
        assert await ref.ask("cancel") is None
        await done.wait()
    assert log == ["cancel", "look"]


class Ticks(Idle):
    """A periodic timer firing five times per receive timeout: timer
    messages do not reset it."""

    def on_start(self) -> None:
        super().on_start()
        self.context.timers.start_periodic("tick", "tick", T / 5)

    def receive(self, message: Any) -> Any:
        if message == "tick":
            self.log.append(("tick", anyio.current_time()))
            return None
        return super().receive(message)


async def test_timer_messages_do_not_reset_the_receive_timeout() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(Ticks, log, done)
        await done.wait()
    messages = [m for m, _ in log]
    assert messages.count(ReceiveTimeout()) == 1
    assert set(messages) == {"tick", ReceiveTimeout()}
    fired = log[messages.index(ReceiveTimeout())][1]
    # Ticks came within the idle time, and it fired all the same.
    assert [m for m, when in log if fired - T < when < fired]


class Fragile(Actor):
    """Its first incarnation sets a receive timeout and fails on "boom"; the
    next one has a timer at 4 T to say when to look."""

    def __init__(self, log: list[Any], done: anyio.Event) -> None:
        self.log = log
        self.done = done

    def on_start(self) -> None:
        self.context.set_receive_timeout(T)

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        self.log.append(("timeout after restart", self.context.receive_timeout))
        self.context.timers.start_single("look", "look", 4 * T)

    def receive(self, message: Any) -> Any:
        self.log.append(message)
        if message == "boom":
            raise ValueError("boom")
        if message == "look":
            self.done.set()


async def test_a_restart_starts_without_a_receive_timeout() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Fragile, log, done)
        ref.tell("boom")
        await done.wait()
    assert log == ["boom", ("timeout after restart", None), "look"]


class Behaves(Actor):
    def __init__(self, done: anyio.Event) -> None:
        self.done = done
        self.context.set_receive_timeout(T)  # from __init__ too
        self.become(self.waiting)

    def receive(self, message: Any) -> Any:
        raise AssertionError("the behaviour gets it")

    def waiting(self, message: Any) -> Any:
        if isinstance(message, ReceiveTimeout):
            self.done.set()


async def test_the_receive_timeout_goes_to_the_current_behaviour() -> None:
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(Behaves, done)
        await done.wait()
        assert system.failures == 0


class ClearsTimers(Idle):
    def on_start(self) -> None:
        super().on_start()
        self.context.timers.start_single("x", "x", 60)
        self.context.timers.cancel_all()  # the receive timeout is not theirs


async def test_cancelling_all_timers_leaves_the_receive_timeout_alone() -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(ClearsTimers, log, done)
        await done.wait()
    assert [m for m, _ in log] == [ReceiveTimeout()]


class Setter(Actor):
    def receive(self, message: Any) -> Any:
        self.context.set_receive_timeout(message)
        return self.context.receive_timeout


async def test_set_receive_timeout_checks_its_argument() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Setter)
        assert await ref.ask(60) == 60.0
        with pytest.raises(TypeError, match="timeout"):
            await ref.ask("soon")
        with pytest.raises(ValueError, match="timeout must be > 0"):
            await ref.ask(0)
        with pytest.raises(ValueError, match="finite"):
            await ref.ask(float("inf"))
        assert await ref.ask(None) is None


async def test_an_async_handler_resets_it_when_it_ends() -> None:
    # The idle time counts from the end of the handler: a long handler is
    # not idleness.
    log: list[Any] = []
    done = anyio.Event()

    class Slow(Idle):
        async def receive(self, message: Any) -> Any:
            if message == "slow":
                await anyio.sleep(2 * T)  # the work itself, longer than T
                self.log.append(("slow done", anyio.current_time()))
                return None
            return super().receive(message)

    async with ActorSystem() as system:
        ref = system.spawn(Slow, log, done)
        await ref.ask("slow")
        await done.wait()
    (_, finished), (timeout, fired) = log
    assert timeout == ReceiveTimeout()
    assert fired - finished >= T - TICK


def test_receive_timeouts_are_all_equal() -> None:
    assert ReceiveTimeout() == ReceiveTimeout()
    assert hash(ReceiveTimeout()) == hash(ReceiveTimeout())
    assert repr(ReceiveTimeout()) == "ReceiveTimeout()"


class StashesTimeouts(Actor):
    """Stashes its first ReceiveTimeout (and cancels the timeout); "open"
    unstashes it."""

    def __init__(self, log: list[Any], stashed: anyio.Event) -> None:
        self.log = log
        self.stashed = stashed
        self.context.set_receive_timeout(T)

    def receive(self, message: Any) -> Any:
        if isinstance(message, ReceiveTimeout):
            self.context.set_receive_timeout(None)
            self.stash()
            self.stashed.set()
        elif message == "open":
            self.become(self.opened)
            self.unstash_all()

    def opened(self, message: Any) -> Any:
        self.log.append(message)


async def test_a_stashed_receive_timeout_comes_back_as_a_receive_timeout() -> None:
    log: list[Any] = []
    stashed = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(StashesTimeouts, log, stashed)
        await stashed.wait()
        ref.tell("open")
        await ref.ask("sync")
    assert log == [ReceiveTimeout(), "sync"]
