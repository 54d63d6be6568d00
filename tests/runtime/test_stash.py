"""The stash (Akka's Stash): messages set aside come back in front of the
mailbox, in order, before newer ones; asks keep their reply slot; bounded;
put back on restart, dead letters on stop; outside the mailbox's quota."""

from __future__ import annotations

import contextlib
import random
from typing import Any, ClassVar

import anyio
import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    Directive,
    MailboxFull,
    OneForOne,
    StashOverflow,
    StopReason,
    Terminated,
)

from ._support import Hold

pytestmark = pytest.mark.anyio


class Gate(Actor):
    """Closed: stashes everything but "open". Open: handles and logs; "close"
    closes it again. A Hold parks it (whatever the state)."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            message.entered.set()
            await message.release.wait()
            return None
        if message == "open":
            self.become(self.opened)
            self.unstash_all()
            return "opened"
        self.stash()
        return None  # not a reply: an asked message is answered later

    def opened(self, message: Any) -> Any:
        if message == "close":
            self.unbecome()
            return "closed"
        self.log.append(message)
        return f"handled {message}"


async def test_unstash_all_puts_them_back_in_order_before_newer_ones() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        gate = system.spawn(Gate, log)
        for n in range(5):
            gate.tell(n)
        gate.tell("open")
        gate.tell("after")
        assert await gate.ask("last") == "handled last"
    assert log == [0, 1, 2, 3, 4, "after", "last"]


async def test_unstashed_messages_come_before_the_rest_of_the_same_batch() -> None:
    log: list[Any] = []
    async with ActorSystem(drain=64) as system:
        gate = system.spawn(Gate, log)
        gate.tell("early")
        hold = Hold()
        gate.tell(hold)
        await hold.entered.wait()
        for message in ("a", "b", "open", "c", "d"):
            gate.tell(message)  # one batch when released
        hold.release.set()
        await gate.ask("last")
    assert log == ["early", "a", "b", "c", "d", "last"]


async def test_unstashing_at_the_end_of_a_batch_does_not_wait_for_a_message() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        gate = system.spawn(Gate, log)
        gate.tell(1)
        gate.tell(2)
        # Its reply comes before the unstashed ones are handled; they must be
        # handled without any further message arriving.
        assert await gate.ask("open") == "opened"
        with anyio.fail_after(5):
            while len(log) < 2:
                await anyio.lowlevel.checkpoint()
    assert log == [1, 2]


async def test_a_stashed_ask_is_answered_by_the_handler_that_handles_it() -> None:
    async with ActorSystem() as system:
        gate = system.spawn(Gate, [])
        async with anyio.create_task_group() as tg:
            replies: list[Any] = []

            async def ask(message: Any) -> None:
                replies.append(await gate.ask(message))

            tg.start_soon(ask, "q")
            await anyio.wait_all_tasks_blocked()
            assert replies == []  # stashed: no reply yet
            assert await gate.ask("open") == "opened"
        assert replies == ["handled q"]


class OneByOne(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        if message == "next":
            return self.unstash()
        if message == "two":
            return [self.unstash(), self.unstash()]
        self.log.append(message)
        if isinstance(message, int):
            self.stash()
        return None


async def test_unstash_puts_back_the_oldest_one_at_a_time_in_order() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(OneByOne, log)
        for n in (1, 2, 3):
            ref.tell(n)
        assert await ref.ask("next") is True  # 1 again, stashed again
        assert await ref.ask("two") == [True, True]  # 2 then 3, in order
        await ref.ask("sync")
        assert log == [1, 2, 3, 1, 2, 3, "sync"]
        assert await ref.ask("two") == [True, True]
        assert await ref.ask("next") is True
        await ref.ask("sync")
        assert log[7:] == [1, 2, 3, "sync"]


class Small(Gate):
    stash_capacity: ClassVar[int] = 2

    async def receive(self, message: Any) -> Any:
        try:
            return await super().receive(message)
        except StashOverflow as exc:
            self.log.append(str(exc))
            return "overflow"


async def test_stashing_beyond_the_capacity_raises_stash_overflow() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Small, log)
        ref.tell(1)
        ref.tell(2)
        assert await ref.ask(3) == "overflow"
        assert "cannot stash more than 2" in log[0]
        assert await ref.ask("open") == "opened"
        await ref.ask("sync")
    assert log[1:] == [1, 2, "sync"]


class Overflowing(Actor):
    stash_capacity: ClassVar[int] = 1

    def receive(self, message: Any) -> Any:
        self.stash()


async def test_an_unhandled_stash_overflow_is_a_supervised_failure() -> None:
    strategy = OneForOne(decider={StashOverflow: Directive.RESUME})
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(Overflowing)
        ref.tell(1)
        with pytest.raises(StashOverflow):
            await ref.ask(2)  # overflows: a failure, resumed
        assert system.failures == 1
        ref.stop()
        await ref.join()
        reasons = [(d.message, d.reason) for d in system.dead_letters.recent]
        assert reasons == [(2, "handler failed"), (1, "actor stopped")]


async def test_stashed_messages_become_dead_letters_on_stop_and_asks_fail() -> None:
    async with ActorSystem() as system:
        gate = system.spawn(Gate, [])
        gate.tell("told")
        async with anyio.create_task_group() as tg:
            errors: list[BaseException] = []

            async def ask() -> None:
                try:
                    await gate.ask("asked")
                except ActorStopped as exc:
                    errors.append(exc)

            tg.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            gate.stop()
        assert await gate.join() is StopReason.NORMAL
        assert len(errors) == 1
        assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
            ("told", "actor stopped"),
            ("asked", "actor stopped"),
        ]


class Stuck(Gate):
    async def receive(self, message: Any) -> Any:
        if message == "stuck":
            await anyio.sleep_forever()
        return await super().receive(message)


async def test_stashed_messages_are_settled_when_a_teardown_cancels_the_actor() -> None:
    # The shutdown timeout runs out while a handler is stuck: the actor's
    # task is cancelled, and what it had stashed is settled all the same.
    errors: list[BaseException] = []

    async def ask(ref: Any) -> None:
        try:
            await ref.ask("asked", timeout=30)
        except ActorStopped as exc:
            errors.append(exc)

    async with (
        anyio.create_task_group() as askers,
        ActorSystem(shutdown_timeout=0.05) as system,
    ):
        gate = system.spawn(Stuck, [])
        gate.tell("told")
        askers.start_soon(ask, gate)
        await anyio.wait_all_tasks_blocked()  # both stashed
        gate.tell("stuck")
        await anyio.wait_all_tasks_blocked()
        letters = system.dead_letters
    assert len(errors) == 1
    assert sorted((d.message, d.reason) for d in letters.recent) == [
        ("asked", "actor stopped"),
        ("stuck", "actor stopped"),
        ("told", "actor stopped"),
    ]


class RestartsWithStash(Gate):
    restarted: ClassVar[list[Any]] = []

    async def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return await super().receive(message)

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        self.become(self.opened)  # the new instance handles what comes


async def test_stashed_messages_are_handled_first_after_a_restart() -> None:
    log: list[Any] = []
    async with ActorSystem(drain=64) as system:
        ref = system.spawn(RestartsWithStash, log)
        hold = Hold()
        ref.tell(hold)
        await hold.entered.wait()
        for message in (1, 2, "boom", "after"):
            ref.tell(message)
        hold.release.set()
        assert await ref.ask("last") == "handled last"
        assert system.restarts == 1
    assert log == [1, 2, "after", "last"]


class Bounded(Gate):
    pass


async def test_a_stashed_message_does_not_count_against_the_mailbox_capacity() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Bounded, log, capacity=1)
        for n in range(5):
            await ref.send(n)  # each one is stashed, which frees its unit
        await anyio.wait_all_tasks_blocked()  # the last one is stashed too
        ref.tell("x")  # five are stashed, and the one unit is free
        with pytest.raises(MailboxFull):
            ref.tell("y")  # now it is not: "x" is queued
        await ref.send("open")
        assert await ref.ask("z") == "handled z"
    assert log == [0, 1, 2, 3, 4, "x", "z"]


class StashesTimer(Actor):
    def __init__(self, log: list[Any], stashed: anyio.Event) -> None:
        self.log = log
        self.stashed = stashed

    def on_start(self) -> None:
        self.context.timers.start_single("t", "tick", 0)

    def receive(self, message: Any) -> Any:
        if message == "tick":
            self.stash()
            self.stashed.set()
        elif message == "open":
            self.become(self.opened)
            self.unstash_all()

    def opened(self, message: Any) -> Any:
        self.log.append(message)


async def test_a_stashed_timer_message_is_delivered_once_after_unstash() -> None:
    log: list[Any] = []
    stashed = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(StashesTimer, log, stashed)
        await stashed.wait()
        ref.tell("open")
        await ref.ask("sync")
        await ref.ask("sync")
    assert log == ["tick", "sync", "sync"]


# A stashed timer message is a message like any other once stashed: at a stop
# it is a dead letter, as every stashed message (it was dropped silently).
async def test_a_stashed_timer_message_is_a_dead_letter_when_the_actor_stops() -> None:
    stashed = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(StashesTimer, [], stashed)
        await stashed.wait()
        ref.stop()
        await ref.join()
        assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
            ("tick", "actor stopped")
        ]


class StashesThenFails(Gate):
    async def receive(self, message: Any) -> Any:
        if message == "stash-and-fail":
            self.stash()
            raise ValueError("after stashing")
        return await super().receive(message)


async def test_a_message_stashed_by_a_handler_that_then_fails_stays_stashed() -> None:
    log: list[Any] = []
    strategy = OneForOne(decider={ValueError: Directive.RESUME})
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(StashesThenFails, log)
        async with anyio.create_task_group() as tg:
            replies: list[Any] = []

            async def ask() -> None:
                replies.append(await ref.ask("stash-and-fail"))

            tg.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            assert system.failures == 1
            assert await ref.ask("open") == "opened"
        assert replies == ["handled stash-and-fail"]
        assert system.dead_letters.count == 0


class StashesInStart(Actor):
    def __init__(self, errors: list[BaseException]) -> None:
        self.errors = errors

    def receive(self, message: Any) -> Any:
        return message

    def on_start(self) -> None:
        try:
            self.stash()
        except RuntimeError as exc:
            self.errors.append(exc)


async def test_stash_outside_a_handler_raises_a_runtime_error() -> None:
    errors: list[BaseException] = []
    async with ActorSystem() as system:
        await system.spawn(StashesInStart, errors).ask("sync", timeout=5)
    assert "call it from this actor's handler" in str(errors[0])
    with pytest.raises(RuntimeError, match="outside the runtime"):
        Gate([]).stash()


def test_a_bad_stash_capacity_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(ValueError, match=r"Bad\.stash_capacity must be at least 1"):

        class Bad(Actor):
            stash_capacity: ClassVar[int] = 0

    with pytest.raises(TypeError, match="stash_capacity must be an integer"):

        class Worse(Actor):
            stash_capacity: ClassVar[int] = 1.5  # type: ignore[assignment]


class Model(Actor):
    """Stashes while closed; "open" unstashes all, "close" closes."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        if message == "open":
            self.become(self.opened)
            self.unstash_all()
        elif message != "close":
            self.stash()

    def opened(self, message: Any) -> Any:
        if message == "close":
            self.unbecome()
        elif message != "open":
            self.log.append(message)


def _expected(script: list[Any]) -> list[Any]:
    handled: list[Any] = []
    stash: list[Any] = []
    queue = list(script)
    is_open = False
    while queue:
        message = queue.pop(0)
        if message == "open":
            if not is_open:
                is_open = True
                queue[:0] = stash
                stash = []
        elif message == "close":
            is_open = False
        elif is_open:
            handled.append(message)
        else:
            stash.append(message)
    return handled


@pytest.mark.parametrize("seed", range(6))
async def test_stash_and_unstash_keep_the_order_of_a_model_queue(seed: int) -> None:
    # Random scripts of messages, opens and closes against a plain-list model
    # of Akka's semantics (unstashed messages go in front of the mailbox),
    # with random batch sizes so switches land anywhere in a batch.
    rng = random.Random(seed)
    script: list[Any] = []
    for n in range(60):
        roll = rng.random()
        script.append("open" if roll < 0.15 else "close" if roll < 0.3 else n)
    log: list[Any] = []
    async with ActorSystem(drain=rng.choice([1, 2, 3, 7, 64])) as system:
        ref = system.spawn(Model, log)
        hold_first = rng.random() < 0.5
        for message in script:
            ref.tell(message)
            if hold_first and rng.random() < 0.2:
                await anyio.wait_all_tasks_blocked()
        ref.tell("open")
        await ref.ask("sync")
    assert log == _expected([*script, "open", "sync"])


class Chaos(Actor):
    """Each message is ``(id, op)``; the op says what its handler does. The
    log of final handlings and the set of ids stashed once are shared by
    every incarnation."""

    def __init__(self, handled: list[int], stashed: set[int]) -> None:
        self.handled = handled
        self.stashed = stashed

    def receive(self, message: Any) -> Any:
        return self.handle("a", message)

    def other(self, message: Any) -> Any:
        return self.handle("b", message)

    def handle(self, behaviour: str, message: Any) -> Any:
        n, op = message
        if op in ("stash", "stash-fail") and n not in self.stashed:
            self.stashed.add(n)
            self.stash()
            if op == "stash-fail":
                raise ValueError("after stashing")  # resumed; n stays stashed
            return None
        if op == "resume":
            raise ValueError(n)
        if op == "restart":
            raise KeyError(n)
        if op == "unstash_all":
            self.unstash_all()
        elif op == "unstash":
            self.unstash()
        elif op == "become":
            self.become(self.other if behaviour == "a" else self.receive)
        elif op == "push":
            self.become(self.other, discard_old=False)
        elif op == "unbecome":
            self.unbecome()
        self.handled.append(n)
        return n


OPS = [
    "plain",
    "stash",
    "stash",
    "stash-fail",
    "unstash_all",
    "unstash",
    "become",
    "push",
    "unbecome",
    "resume",
    "restart",
]


@pytest.mark.parametrize("seed", range(8))
async def test_no_message_is_lost_or_doubled_whatever_handlers_do(seed: int) -> None:
    # Conservation under random stashes, unstashes, switches, resumed and
    # restarted failures, asks among tells and random batch sizes: every
    # message is handled once for good, or is a dead letter once.
    rng = random.Random(seed)
    handled: list[int] = []
    stashed: set[int] = set()
    strategy = OneForOne(
        max_restarts=1000,
        decider={ValueError: Directive.RESUME, KeyError: Directive.RESTART},
    )
    count = 120
    async with ActorSystem(strategy=strategy, drain=rng.choice([1, 4, 64])) as system:
        ref = system.spawn(Chaos, handled, stashed)
        async with anyio.create_task_group() as tg:
            for n in range(count):
                message = (n, rng.choice(OPS))
                if rng.random() < 0.2:

                    async def ask(message: Any = message) -> None:
                        with contextlib.suppress(ValueError, KeyError, ActorStopped):
                            await ref.ask(message, timeout=30)

                    tg.start_soon(ask)
                else:
                    ref.tell(message)
                if rng.random() < 0.1:
                    await anyio.wait_all_tasks_blocked()
            await ref.ask((count, "unstash_all"))
            ref.stop()
        await ref.join()
        letters = [d.message[0] for d in system.dead_letters.recent]
    assert len(handled) == len(set(handled))
    assert not set(handled) & set(letters)
    assert len(letters) == len(set(letters))
    assert sorted([*handled, *letters]) == list(range(count + 1))


class Watcher(Actor):
    """Watches a child; stashes its Terminated until "open"."""

    def __init__(self, log: list[Any], stashed: anyio.Event) -> None:
        self.log = log
        self.stashed = stashed
        self.child = self.context.spawn(Gate, [])
        self.context.watch(self.child)

    def receive(self, message: Any) -> Any:
        if isinstance(message, Terminated):
            self.stash()
            self.stashed.set()
        elif message == "stop-child":
            self.context.stop(self.child)
        elif message == "open":
            self.become(self.opened)
            self.unstash_all()

    def opened(self, message: Any) -> Any:
        self.log.append(message)


async def test_a_stashed_terminated_is_delivered_after_unstash() -> None:
    log: list[Any] = []
    stashed = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Watcher, log, stashed)
        ref.tell("stop-child")
        await stashed.wait()
        ref.tell("open")
        await ref.ask("sync")
    [terminated, sync] = log
    assert isinstance(terminated, Terminated) and sync == "sync"


# The same object told several times (an interned string, a small int, an
# enum member) is several messages: each one stashed is each one unstashed.
async def test_the_same_object_told_twice_is_stashed_and_unstashed_twice() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        gate = system.spawn(Gate, log)
        for _ in range(3):
            gate.tell("work")
        gate.tell(7)
        gate.tell(7)
        assert await gate.ask("open") == "opened"
        await gate.ask("sync")
        assert system.dead_letters.count == 0
    assert log == ["work", "work", "work", 7, 7, "sync"]


class StashesTheFirstFailsTheSecond(Actor):
    """Stashes the first "job", fails on the second one (the same object)."""

    def __init__(self) -> None:
        self.seen = 0

    def receive(self, message: Any) -> Any:
        if message == "job":
            self.seen += 1
            if self.seen == 1:
                self.stash()
                return None
            raise ValueError("second job")
        return message


# A handler that fails without stashing settles its message as a dead letter,
# even when the same object was stashed by an earlier handler.
async def test_a_failed_message_is_a_dead_letter_though_its_object_is_stashed() -> None:
    strategy = OneForOne(decider={ValueError: Directive.RESUME})
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(StashesTheFirstFailsTheSecond)
        ref.tell("job")
        ref.tell("job")
        await ref.ask("sync")
        assert system.failures == 1
        assert [letter.reason for letter in system.dead_letters.recent] == [
            "handler failed"
        ]


class Waiter(Actor):
    """Starts background work; stashes its result until "open"."""

    def __init__(self, log: list[Any], stashed: anyio.Event) -> None:
        self.log = log
        self.stashed = stashed
        self.thens = 0

    def receive(self, message: Any) -> Any:
        if message == "start":

            async def work() -> int:
                return 42

            self.context.run(work, then=self.then)
            return None
        if message == "open":
            self.become(self.opened)
            self.unstash_all()
            return None
        self.stash()
        self.stashed.set()
        return None

    def then(self, result: Any) -> Any:
        self.thens += 1
        return ("done", result.value)

    def opened(self, message: Any) -> Any:
        self.log.append((message, self.thens))


# A piped result (context.run, context.ask) that is stashed comes back as the
# message the handler got: ``then`` is not called a second time.
async def test_a_stashed_piped_result_comes_back_without_calling_then_again() -> None:
    log: list[Any] = []
    stashed = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Waiter, log, stashed)
        ref.tell("start")
        await stashed.wait()
        ref.tell("open")
        await ref.ask("sync")
    assert log == [(("done", 42), 1), ("sync", 1)]


class StashesFromATask(Actor):
    def __init__(self, errors: list[BaseException]) -> None:
        self.errors = errors
        self.tried = anyio.Event()

    async def receive(self, message: Any) -> Any:
        if message == "start":

            async def work() -> None:
                try:
                    self.stash()
                except RuntimeError as exc:
                    self.errors.append(exc)
                finally:
                    self.tried.set()

            self.context.run(work)
            await self.tried.wait()  # inside this handler while work tries
            return "started"
        return message


# stash() sets aside the message its own handler handles: from a background
# task (context.run) it raises, even while the actor is inside a handler.
async def test_stash_from_a_background_task_raises_a_runtime_error() -> None:
    errors: list[BaseException] = []
    async with ActorSystem() as system:
        ref = system.spawn(StashesFromATask, errors)
        assert await ref.ask("start") == "started"
        assert await ref.ask("sync") == "sync"
    assert len(errors) == 1 and "call it from this actor's handler" in str(errors[0])


class Hangs(Actor):
    """``(id, op)`` messages; some ops stash or unstash and then hang until
    the system's teardown cancels them."""

    def __init__(self, handled: list[int], stashed: set[int]) -> None:
        self.handled = handled
        self.stashed = stashed

    async def receive(self, message: Any) -> Any:
        n, op = message
        if op.startswith("stash") and n not in self.stashed:
            self.stashed.add(n)
            self.stash()
            if op == "stash-hang":
                await anyio.sleep_forever()
            return None
        if op.startswith("unstash"):
            self.unstash_all()
            await anyio.lowlevel.checkpoint()
            if op == "unstash-hang":
                await anyio.sleep_forever()
        elif op == "hang":
            await anyio.sleep_forever()
        self.handled.append(n)
        return n


@pytest.mark.parametrize("seed", range(4))
async def test_a_teardown_settles_every_message_whatever_its_handler_was_doing(
    seed: int,
) -> None:
    # The system's shutdown_timeout cancels a handler that hangs after
    # stashing, after unstashing, or without either, with asks among the
    # tells: every message is handled once, or is one dead letter.
    rng = random.Random(seed)
    handled: list[int] = []
    stashed: set[int] = set()
    count = 60
    calm = ["plain", "stash", "stash", "unstash_all"]
    ops = [*calm, "stash-hang", "unstash-hang", "hang"]
    system = ActorSystem(shutdown_timeout=0.05, drain=rng.choice([1, 4, 64]))
    async with anyio.create_task_group() as tg, system:
        ref = system.spawn(Hangs, handled, stashed)
        for n in range(count):
            message = (n, rng.choice(ops if n > count // 2 else calm))
            if rng.random() < 0.2:

                async def ask(message: Any = message) -> None:
                    with contextlib.suppress(ActorStopped):
                        await ref.ask(message, timeout=30)

                tg.start_soon(ask)
            else:
                ref.tell(message)
            if rng.random() < 0.2:
                await anyio.wait_all_tasks_blocked()
        await anyio.wait_all_tasks_blocked()
    letters = [d.message[0] for d in system.dead_letters.recent]
    assert len(handled) == len(set(handled))
    assert not set(handled) & set(letters)
    assert len(letters) == len(set(letters))
    assert sorted([*handled, *letters]) == list(range(count))


class StashesFromItsTaskGroup(Gate):
    async def receive(self, message: Any) -> Any:
        if message == "in-a-task":
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._stash_soon)
            return None
        return await super().receive(message)

    async def _stash_soon(self) -> None:
        await anyio.lowlevel.checkpoint()
        self.stash()


# A task the handler starts in its own task group, and waits for, is part of
# handling the message: it may stash it.
async def test_a_task_of_the_handlers_own_task_group_can_stash_its_message() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(StashesFromItsTaskGroup, log)
        ref.tell("in-a-task")
        assert await ref.ask("open") == "opened"
        await ref.ask("sync")
    assert log == ["in-a-task", "sync"]


class StashesAfterAwaiting(Actor):
    """Asks its child (another actor, which stashes too) and awaits before
    it stashes, with a receive timeout set (its handler is wrapped)."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log
        self.child = self.context.spawn(Gate, log)
        self.context.set_receive_timeout(60)

    async def receive(self, message: Any) -> Any:
        if message == "open":
            self.become(self.opened)
            self.unstash_all()
            return await self.child.ask("open")
        self.child.tell(("child", message))
        await anyio.lowlevel.checkpoint()
        await self.child.ask(Hold(release=_set_event()))
        self.stash()
        return None

    def opened(self, message: Any) -> Any:
        self.log.append(message)
        return message


def _set_event() -> anyio.Event:
    event = anyio.Event()
    event.set()
    return event


# stash() after awaits inside an async handler (the handler wrapped for a
# receive timeout, and for telemetry in the traced pass), while another actor
# handles and stashes messages of its own: each actor stashes its own message.
async def test_stash_after_awaits_in_a_wrapped_handler_takes_its_own_message() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(StashesAfterAwaiting, log)
        ref.tell(1)
        ref.tell(2)
        assert await ref.ask("open") == "opened"
        await ref.ask("sync")
    # (The two actors' handlings interleave as their tasks are scheduled.)
    assert [m for m in log if isinstance(m, tuple)] == [("child", 1), ("child", 2)]
    assert [m for m in log if not isinstance(m, tuple)] == [1, 2, "sync"]
