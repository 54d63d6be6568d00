"""BehaviorTestKit: one message at a time through an actor instance, no event
loop, no system; what it did through its context is recorded."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorStopped, Result, StopReason, Terminated
from actors._actor import UNHANDLED
from actors.testing import (
    AskStarted,
    BehaviorTestKit,
    ReceiveTimeoutSet,
    Spawned,
    SpawnedPool,
    Stopped,
    TestInbox,
    TimerCancelled,
    TimerStarted,
    Unwatched,
    Watched,
    WorkStarted,
)


@dataclass(frozen=True)
class Add:
    n: int


@dataclass(frozen=True)
class Get:
    reply_to: ActorRef[int] | None = None


class Counter(Actor):
    def __init__(self, start: int = 0) -> None:
        self.count = start

    def receive(self, message: Any) -> Any:
        match message:
            case Add(n):
                self.count += n
                return None
            case Get(None):
                return self.count
            case Get(reply_to):
                reply_to.tell(self.count)
                return None
        return super().receive(message)


def test_run_returns_the_reply_and_keeps_the_state() -> None:
    kit = BehaviorTestKit(Counter, 5)
    assert kit.run(Add(2)) is None
    assert kit.run(Get()) == 7
    assert kit.instance.count == 7
    assert kit.replies == [None, 7]
    kit.expect_no_effect()


def test_tells_to_an_inbox_ref_land_in_the_inbox() -> None:
    kit = BehaviorTestKit(Counter)
    inbox: TestInbox[int] = TestInbox("asker")
    kit.run(Add(3))
    kit.run(Get(inbox.ref))
    assert inbox.expect_message(3) == 3
    inbox.expect_no_message()


def test_an_unhandled_message_is_a_dead_letter_and_returns_unhandled() -> None:
    kit = BehaviorTestKit(Counter)
    assert kit.run("what?") is UNHANDLED
    assert not kit.handled
    [letter] = kit.dead_letters
    assert (letter.message, letter.reason) == ("what?", "unhandled")
    assert letter.recipient == kit.self_ref


class Boss(Actor):
    """Spawns, watches, stops, starts timers, talks to self and parent."""

    def on_start(self) -> None:
        self.context.timers.start_periodic("tick", "tick", 1.0)

    def receive(self, message: Any) -> Any:
        ctx = self.context
        match message:
            case ("hire", name):
                worker = ctx.spawn(Counter, 10, name=name)
                ctx.watch(worker)
                worker.tell(Add(1))
                return worker
            case ("pool", name):
                return ctx.spawn_pool(Counter, 4, name=name)
            case ("fire", ref):
                ctx.unwatch(ref)
                ctx.stop(ref)
            case "tick":
                ctx.parent.tell("tick seen")
            case "later":
                ctx.timers.start_single("later", "now", 2.5)
            case "calm":
                ctx.timers.cancel_all()
            case "quit":
                ctx.self_ref.tell("bye")
                ctx.stop()
            case Terminated(ref=ref):
                ctx.parent.tell(("lost", ref.name))
        return None


def test_spawns_watches_and_stops_are_recorded_as_effects() -> None:
    kit = BehaviorTestKit(Boss, name="boss")
    kit.expect_effect(TimerStarted("tick", "tick", 1.0, 1.0))
    worker = kit.run(("hire", "w1"))
    assert worker.path == "/user/boss/w1"
    spawned = kit.expect_effect(Spawned)
    assert (spawned.factory, spawned.args, spawned.name) == (Counter, (10,), "w1")
    assert spawned.ref == worker
    kit.expect_effect(Watched(worker))
    kit.child_inbox("w1").expect_message(Add(1))
    assert kit.context.children == [worker]
    kit.run(("fire", worker))
    kit.expect_effect(Unwatched(worker))
    kit.expect_effect(Stopped(worker))
    assert kit.context.children == []
    pool = kit.run(("pool", "p"))
    assert kit.expect_effect(SpawnedPool).size == 4
    assert pool.name == "p"
    kit.expect_no_effect()


def test_timers_are_recorded_and_fired_by_hand() -> None:
    kit = BehaviorTestKit(Boss)
    kit.run("later")
    assert kit.retrieve_effects() == [
        TimerStarted("tick", "tick", 1.0, 1.0),
        TimerStarted("later", "now", 2.5),
    ]
    kit.fire_timer("tick")
    kit.parent_inbox.expect_message("tick seen")
    assert kit.context.timers.is_active("tick")
    kit.run("calm")
    assert kit.retrieve_effects() == [TimerCancelled("tick"), TimerCancelled("later")]
    with pytest.raises(KeyError, match="no active timer 'tick'"):
        kit.fire_timer("tick")


def test_a_stop_of_itself_and_a_terminated_are_delivered_as_the_runtime_would() -> (
    None
):
    kit = BehaviorTestKit(Boss)
    worker = kit.run(("hire", "w"))
    kit.terminated(worker, StopReason.NORMAL)
    kit.parent_inbox.expect_message(("lost", "w"))
    kit.run("quit")
    assert kit.stopped
    assert kit.effects[-1] == Stopped(None)
    kit.self_inbox.expect_message("bye")
    # As an ask of a stopped actor: ActorStopped.
    with pytest.raises(ActorStopped, match="has stopped"):
        kit.run("tick")


class AsyncCounter(Counter):
    async def receive(self, message: Any) -> Any:
        if message == "sleep":
            await anyio.sleep(1)
        if message == "yield":
            await asyncio.sleep(0)
        if message == "ask":
            return await self.helper.ask("hi")
        return super().receive(message)

    helper: ActorRef[Any]


def test_an_async_handler_that_never_waits_runs_to_completion() -> None:
    kit = BehaviorTestKit(AsyncCounter, 1)
    kit.run(Add(1))
    assert kit.run(Get()) == 2


def test_an_async_handler_that_waits_fails_with_a_pointer_to_the_async_kit() -> None:
    kit = BehaviorTestKit(AsyncCounter)
    with pytest.raises(RuntimeError, match=r"receive\('sleep'\) needs an event loop"):
        kit.run("sleep")
    with pytest.raises(RuntimeError, match=r"waited for something \(None\)"):
        kit.run("yield")
    with pytest.raises(RuntimeError, match="with the async kit"):
        kit.run("yield")


def test_an_inbox_answers_asks_with_its_reply_function() -> None:
    kit = BehaviorTestKit(AsyncCounter)
    helper: TestInbox[str] = TestInbox("helper", reply=str.upper)
    kit.instance.helper = helper.ref
    assert kit.run("ask") == "HI"
    helper.expect_message("hi")
    kit.instance.helper = TestInbox("mute").ref
    with pytest.raises(RuntimeError, match="give its TestInbox a reply= function"):
        kit.run("ask")


def test_a_failed_effect_expectation_lists_the_effects() -> None:
    kit = BehaviorTestKit(Boss, name="b")
    with pytest.raises(AssertionError) as failure:
        kit.expect_effect(Spawned)
    assert str(failure.value) == (
        "/user/b: expected <class 'actors.testing.Spawned'>, but the effects "
        "are (oldest first):\n"
        "    TimerStarted(key='tick', message='tick', delay=1.0, interval=1.0)"
    )


def test_an_inbox_expectation_says_what_came_instead() -> None:
    inbox: TestInbox[int] = TestInbox("x")
    with pytest.raises(AssertionError, match="expected a message, but none was sent"):
        inbox.expect_message(1)
    inbox.ref.tell(2)
    inbox.ref.tell(3)
    with pytest.raises(AssertionError, match=r"expected 1, got 2; still queued: \[3\]"):
        inbox.expect_message(1)


def test_the_context_has_no_system_and_says_what_to_use_instead() -> None:
    kit = BehaviorTestKit(Counter)
    with pytest.raises(RuntimeError, match="has no ActorSystem"):
        _ = kit.context.system
    assert kit.context.path == "/user/testee"
    assert kit.context.self_ref == kit.self_ref


def test_a_factory_that_makes_no_actor_is_refused() -> None:
    # The runtime's own check and message.
    with pytest.raises(TypeError, match="returned an instance of dict, not an Actor"):
        BehaviorTestKit(dict)  # type: ignore[type-var]


class Moody(Actor):
    """Reads its context in __init__, changes behaviour, works in the
    background and sets a receive timeout."""

    def __init__(self, helper: ActorRef[Any]) -> None:
        self.me = self.context.path
        self.helper = helper

    def receive(self, message: Any) -> Any:
        if message == "grumpy":
            self.become(self.grumpy)
            return "ok"
        if message == "work":
            self.context.run(self.slow_work(), then=lambda result: ("done", result))
            self.context.ask(self.helper, "help?", 2.0)
            self.context.set_receive_timeout(30.0)
            return None
        return f"happy: {message}"

    def grumpy(self, message: Any) -> Any:
        if message == "cheer up":
            self.unbecome()
            return "ok"
        return f"grumpy: {message}"

    async def slow_work(self) -> int:
        return 1


def test_context_in_init_become_and_unbecome_work_in_the_kit() -> None:
    helper: TestInbox[str] = TestInbox("helper")
    kit = BehaviorTestKit(Moody, helper.ref, name="moody")
    assert kit.instance.me == "/user/moody"
    assert kit.run("hi") == "happy: hi"
    kit.run("grumpy")
    assert kit.run("hi") == "grumpy: hi"
    kit.run("cheer up")
    assert kit.run("hi") == "happy: hi"


def test_background_work_asks_and_the_receive_timeout_are_effects() -> None:
    helper: TestInbox[str] = TestInbox("helper")
    kit = BehaviorTestKit(Moody, helper.ref)
    kit.run("work")
    started = kit.expect_effect(WorkStarted)
    assert started.then is not None
    assert started.then(Result.success(1)) == ("done", Result.success(1))
    kit.expect_effect(AskStarted(helper.ref, "help?", 2.0))
    helper.expect_message("help?")
    kit.expect_effect(ReceiveTimeoutSet(30.0))
    assert kit.context.receive_timeout == 30.0
    assert kit.context.child("nobody") is None
